# Per-rank values shown in a progress bar or a log line are local diagnostics, not logged metrics.
import logging

from accelerate import Accelerator
from tqdm import tqdm

logger = logging.getLogger(__name__)


def train(model, optimizer, train_dataloader):
    accelerator = Accelerator()
    progress = tqdm(train_dataloader, disable=not accelerator.is_local_main_process)
    for batch in progress:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        progress.set_postfix(loss=loss.item())
        logger.info("rank %d loss %.4f", accelerator.process_index, loss.item())
        logger.log(logging.DEBUG, "loss %s", loss.item())
