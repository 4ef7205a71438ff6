"""The planning assistant.

- context.py: one day as the TripDto shows it, with its places; what needs
  AI or a places provider; simulating ops on a copy.
- places.py: what candidate places are (food or sight), how they rank, and
  which are already on the day.
- suggestions.py: "Find places to eat" and "Explore nearby" (search +
  ranking in code, no model call), each suggestion a one-stop draft.
- optimize.py: "Optimize my day" (verified facts -> the model's ids -> exact
  edits -> a preview).
- drafts.py: storing drafts and applying exactly what was previewed.
"""
