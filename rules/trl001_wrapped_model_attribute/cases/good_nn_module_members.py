# What every wrapper does forward: calls, parameters, modes, devices, state dicts.
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import Trainer


class PlainTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        device = next(model.parameters()).device
        inputs = {k: v.to(device) for k, v in inputs.items()}
        loss = model(**inputs).loss
        self.accelerator.backward(loss)
        return loss.detach()

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        model.eval()
        with torch.no_grad():
            loss = model(**inputs).loss
        return loss, None, None


def checkpoint(model, rank):
    ddp = DDP(model, device_ids=[rank])
    ddp.to(rank)
    torch.save(ddp.state_dict(), "ddp.pt")
    return sum(p.numel() for p in ddp.parameters())
