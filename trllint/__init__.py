"""trllint: a static linter for distributed training code (PyTorch, TRL, accelerate, DeepSpeed)."""

__version__ = "0.1.0"
