# The accelerator is built in both arms of an if/else: it is bound on every path to the log.
from accelerate import Accelerator
from accelerate.utils import DeepSpeedPlugin


def train(model, optimizer, loader, args):
    if args.deepspeed:
        accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=2))
    else:
        accelerator = Accelerator(mixed_precision="bf16")
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        outputs = model(**batch)
        accelerator.backward(outputs.loss)
        optimizer.step()
        optimizer.zero_grad()
        predictions = outputs.logits.argmax(-1)
        accuracy = (predictions == batch["labels"]).float().mean()
        # expect: TRL004
        accelerator.log({"train/accuracy": accuracy.item()}, step=step)
