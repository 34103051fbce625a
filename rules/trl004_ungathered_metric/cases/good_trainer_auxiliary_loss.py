# A mixture-of-experts trainer logging this rank's load-balancing loss: a loss, logged as is, is
# reported only with report-rank0-loss = true (an unbiased estimate of the run's).
from transformers import Trainer


class MoETrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs, output_router_logits=True)
        balance_loss = outputs.aux_loss
        if self.state.global_step % self.args.logging_steps == 0:
            self.log({"train/balance_loss": balance_loss.detach().float().item()})
        return outputs.loss + self.args.router_aux_loss_coef * balance_loss
