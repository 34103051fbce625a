# A reward-model trainer that hands its logs to the callbacks itself, with this rank's reward.
from transformers import Trainer


class PairwiseRewardTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        chosen = model(input_ids=inputs["chosen_input_ids"]).logits.squeeze(-1)
        rejected = model(input_ids=inputs["rejected_input_ids"]).logits.squeeze(-1)
        loss = -(chosen - rejected).sigmoid().log().mean()
        # expect: TRL004
        logs = {"reward/chosen": self.accelerator.gather(
            chosen.mean()
        ).mean().item(), "step": self.state.global_step}
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)
        return (loss, {"chosen": chosen}) if return_outputs else loss
