from typing import Optional

from torch import nn
from transformers import Trainer

from . import deepspeed_utils
from .deepspeed_utils import init_inference_engine


class GKDTrainer(Trainer):
    def __init__(self, model, teacher_model: Optional[nn.Module] = None, reward_model=None, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.teacher_model = teacher_model
        self.reward_model = reward_model
        if self.is_deepspeed_enabled:
            if self.teacher_model is not None:
                self.teacher_model = init_inference_engine(self.teacher_model, self.accelerator)
            if reward_model is None:
                return
            self.reward_model = deepspeed_utils.init_inference_engine(self.reward_model, self.accelerator)
