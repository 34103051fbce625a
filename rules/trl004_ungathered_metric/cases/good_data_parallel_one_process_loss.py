"""The near miss of bad_ddp_only_import_val_loss.py: nn.DataParallel splits each batch over the
GPUs of one process, and its loss is the whole batch's: nothing runs on other ranks."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.tensorboard import SummaryWriter


def main(unet, train_loader, val_loader, epochs=100, val_interval=5):
    unet = nn.DataParallel(unet.cuda())
    optimizer = torch.optim.Adam(unet.parameters(), lr=1e-4)
    writer = SummaryWriter("runs/ldm")
    for epoch in range(epochs):
        unet.train()
        for images, noise in train_loader:
            loss = F.mse_loss(unet(images.cuda()), noise.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if (epoch + 1) % val_interval == 0:
            unet.eval()
            val_epoch_loss = 0
            with torch.no_grad():
                for step, (images, noise) in enumerate(val_loader):
                    val_epoch_loss += F.mse_loss(unet(images.cuda()), noise.cuda()).item()
            writer.add_scalar("val_diffusion_loss", val_epoch_loss / (step + 1), epoch + 1)
