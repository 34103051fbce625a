# The helpers come from a module of the project the linter cannot read (it is not in the tree):
# they may reduce across ranks before they return. Unknown is silent.
from accelerate import Accelerator

from utils.logging_utils import get_logger
from utils.metrics import sync_accuracy, sync_mean

logger = get_logger(__name__)


def train(model, optimizer, train_dataloader, num_epochs):
    accelerator = Accelerator(log_with="tensorboard")
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(num_epochs):
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            optimizer.step()
            optimizer.zero_grad()
            accuracy = sync_accuracy(outputs.logits, batch["labels"])
            accelerator.log(
                {
                    "train/accuracy": accuracy.item(),
                    "train/logit_mean": sync_mean(outputs.logits.detach()).item(),
                },
                step=step,
            )
            logger.info("epoch %d step %d", epoch, step)
