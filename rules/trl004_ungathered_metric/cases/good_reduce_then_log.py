# accelerator.reduce averages the loss over ranks before it is logged.
from accelerate import Accelerator


def train(model, optimizer, train_dataloader):
    accelerator = Accelerator(log_with="wandb")
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for step, batch in enumerate(train_dataloader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        avg_loss = accelerator.reduce(loss.detach(), reduction="mean")
        accelerator.log({"train_loss": avg_loss.item(), "lr": optimizer.param_groups[0]["lr"]}, step=step)
