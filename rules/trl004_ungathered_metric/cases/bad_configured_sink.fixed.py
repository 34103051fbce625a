# trllint-settings: {"metric-sinks": ["self.report_scalars"]}
# A project's own logging helper, named in [tool.trllint] metric-sinks.
from transformers import Trainer


class RankingTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        scores = model(**inputs).logits.squeeze(-1)
        loss = ((scores - inputs["labels"]) ** 2).mean()
        # expect: TRL004
        self.report_scalars({"score_mean": self.accelerator.gather(
            scores.mean()
        ).mean().item(), "step": self.state.global_step})
        return loss

    def report_scalars(self, scalars):
        self.log(scalars)
