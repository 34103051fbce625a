# Learning rate, step and epoch are the same number on every rank: nothing to gather.
from transformers import Trainer


class ScheduleLoggingTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 50 == 0:
            self.log(
                {
                    "learning_rate": self._get_learning_rate(),
                    "epoch": self.state.epoch,
                    "global_step": self.state.global_step,
                    "warmup": float(self.state.global_step < self.args.warmup_steps),
                }
            )
        return loss
