"""The day review: plain rules (no model) over a day's facts, findings with verified fixes."""
