"""The near miss of bad_loop_exits_on_last_turns_loss.py, as StyleTTS2's first stage trains: each
turn rebinds the clip length from the lengths gathered across ranks before it tests it, so the
exit is taken alike on every rank. The validation loop below binds the same name from this
rank's own lengths, but no turn of the training loop reads that value: the rebinding at the top
of the turn comes first."""

import torch
from accelerate import Accelerator

accelerator = Accelerator()


def train(model, optimizer, train_loader, val_loader, epochs, max_len):
    model, optimizer, train_loader, val_loader = accelerator.prepare(model, optimizer, train_loader, val_loader)
    clip_len = max_len
    for epoch in range(epochs):
        for mels, lengths in train_loader:
            all_lengths = accelerator.gather(lengths)
            clip_len = min(int(all_lengths.min().item()), max_len)
            if clip_len < 80:  # too short for the style encoder
                continue
            clips = torch.stack([mel[:, :clip_len] for mel in mels])
            loss = model(clips).mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            accelerator.gather(loss.detach())
        for mels, lengths in val_loader:
            clip_len = min(int(lengths.min().item()), max_len)
            with torch.no_grad():
                model(torch.stack([mel[:, :clip_len] for mel in mels]))
