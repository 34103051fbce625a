# A metrics dict filled with update() and logged: the KL estimate is this rank's only; the tensor
# is stored as it is, so the fix has to add a mean after the gather (an unsafe fix: its shape is
# not known).
from accelerate import Accelerator


class Evaluator:
    def __init__(self, model):
        self.accelerator = Accelerator()
        self.model = self.accelerator.prepare(model)

    def evaluate(self, batch):
        logprobs = self.model(batch["input_ids"]).logits.log_softmax(-1)
        kl = (logprobs.exp() * (logprobs - batch["ref_logprobs"])).sum(-1)
        metrics = {"eval/step": 0}
        # expect: TRL004
        metrics.update({"eval/kl": self.accelerator.gather(kl.mean()).mean().item()})
        # expect: TRL004
        metrics["eval/kl_tensor"] = self.accelerator.gather_for_metrics(
            kl.detach()
        ).mean()
        self.accelerator.log(metrics)
