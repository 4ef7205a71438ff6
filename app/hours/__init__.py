"""Opening hours: the meal and visit rules on a place's hours (rules.py, twin of public/hours.js)
and the OpenStreetMap opening_hours evaluator (osm*.py)."""
