"""Unwraps that prove no wrap: a Trainer subclass keeps ``self.model`` bare (the Trainer's wrapper is
``self.model_wrapped``), so unwrapping it to save is only defensive; and a library's
``unwrap_model`` function is called on whatever a project holds, wrapped or not."""

from transformers import Trainer
from ultralytics.utils.torch_utils import unwrap_model


class DistillationTrainer(Trainer):
    def save_student(self, directory):
        state_dict = self.accelerator.get_state_dict(self.model)
        self.accelerator.unwrap_model(self.model).save_pretrained(directory, state_dict=state_dict)

    def report(self):
        return {"layers": self.model.config.num_hidden_layers}


class Detector:
    def __init__(self, model):
        self.model = model

    def export(self, path):
        unwrap_model(self.model).save(path)

    def summary(self):
        return self.model.info(verbose=False)
