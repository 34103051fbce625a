# A count summed on this rank over this rank's size: gathering the count alone would divide the
# ranks' total by one rank's size, so trllint reports it without a fix.
from accelerate import Accelerator

accelerator = Accelerator(log_with="wandb")


def log_accuracy(predictions, labels, step):
    correct = predictions == labels
    # expect: TRL004
    accelerator.log({"eval/accuracy": correct.sum().item() / len(labels)}, step=step)
