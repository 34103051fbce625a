from .base import BaseTrainer
from .sft import SFTTrainer

__all__ = ["BaseTrainer", "SFTTrainer"]
