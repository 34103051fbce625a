import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


def main(args):
    torch.distributed.init_process_group("nccl")
    model = Detector().cuda()
    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        model_without_ddp = model.module

    # `model` here is the helper's own parameter, and the only call hands it the bare model.
    def build_optimizer(model, args):
        decay = [p for p in model.backbone.parameters() if p.ndim > 1]
        rest = [p for p in model.head.parameters()]
        return torch.optim.AdamW([{"params": decay}, {"params": rest, "weight_decay": 0.0}], lr=args.lr)

    optimizer = build_optimizer(model_without_ddp, args)
    for images in args.loader:
        loss = model(images.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
