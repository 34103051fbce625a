"""The trllint rule pack: one sub-package per rule, each with rule.py, README.md and cases/."""
