# Looks like the bug (`.mean().item()` on a local name), but the name holds the gathered tensor.
from accelerate import Accelerator


def evaluate(model, eval_dataloader, accelerator: Accelerator, step):
    model.eval()
    for batch in eval_dataloader:
        predictions = model(**batch).logits.argmax(dim=-1)
        correct = (predictions == batch["labels"]).float()
        correct = accelerator.gather_for_metrics(correct)
        accelerator.log({"eval/accuracy": correct.mean().item()}, step=step)
