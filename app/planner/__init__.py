"""The planning assistant.

- candidates.py: what candidate places are (food or sight), how they rank,
  and which are already on the day.
- nearby.py: "Find places to eat" and "Explore nearby" (search +
  ranking in code, no model call), each suggestion a one-stop draft.
- optimize.py: "Optimize my day" (verified facts -> the model's ids -> exact
  edits -> a preview).
- shortest.py, shortest_order.py: "Shortest order" (exact, no model call).
- copilot.py: a question about one day, answered by recommending review fixes.
- drafts.py: storing drafts and applying exactly what was previewed.

The day's facts (legs, places, weather) come from app/review/facts.py.
"""
