"""The project's utilities; utils/metrics.py is generated at install time and not in this tree."""
