"""The near miss of bad_prepared_encoders_looped.py's alias (second = text_encoder2): a trainer keeps `self.model` the bare
model and binds the prepared one to it only under FSDP, which forwards the model's members; a
local alias of the prepared model is another story, but `self.model` is read in every method."""

from accelerate import Accelerator


class Trainer:
    def __init__(self, model, optimizer, is_fsdp_enabled):
        self.accelerator = Accelerator()
        self.model = model
        self.optimizer = optimizer
        self.is_fsdp_enabled = is_fsdp_enabled

    def train(self, train_dataloader):
        self.model.train()
        model, self.optimizer = self.accelerator.prepare(self.model, self.optimizer)
        if self.is_fsdp_enabled:
            # FSDP forwards the model's own members; other wrappers leave self.model bare.
            self.model = model
        for batch in train_dataloader:
            loss = model(**batch).loss
            self.accelerator.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()

    def save(self, output_dir):
        self.model.save_pretrained(output_dir)
        self.model.config.to_json_file(f"{output_dir}/config.json")
