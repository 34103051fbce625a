# trllint-settings: {"report-rank0-loss": true}
# A Trainer subclass logging an auxiliary loss straight from this rank's forward pass.
from transformers import Trainer


class RouterTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        aux_loss = outputs.aux_loss
        z_loss = outputs.router_z_loss
        if self.state.global_step % self.args.logging_steps == 0:
            # expect: TRL004
            self.log({"aux_loss": aux_loss.detach().item(), "lr": self._get_learning_rate()})
            # expect: TRL004
            self.log({"z_loss": z_loss.mean().item()})
        loss = outputs.loss + 0.01 * aux_loss
        return (loss, outputs) if return_outputs else loss
