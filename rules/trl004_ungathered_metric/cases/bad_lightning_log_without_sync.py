"""A LightningModule under the DDP strategy: `self.log` and `self.log_dict` without
`sync_dist=True` log rank 0's value of its own batch (and, over an epoch, of its own shard)."""

import lightning.pytorch as pl
import torch
import torch.nn.functional as F


class TextClassifier(pl.LightningModule):
    def __init__(self, encoder, num_classes, lr=2e-5):
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.config.hidden_size, num_classes)
        self.lr = lr

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(hidden[:, 0])

    def training_step(self, batch, batch_idx):
        logits = self(batch["input_ids"], batch["attention_mask"])
        loss = F.cross_entropy(logits, batch["labels"])
        self.log("train/loss", loss, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        logits = self(batch["input_ids"], batch["attention_mask"])
        accuracy = (logits.argmax(-1) == batch["labels"]).float().mean()
        # expect: TRL004
        self.log_dict({"val/accuracy": accuracy}, on_epoch=True)
        # expect: TRL004
        self.log("val/confidence", logits.softmax(-1).max(-1).values.mean(), on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


def fit(model, datamodule):
    trainer = pl.Trainer(accelerator="gpu", devices=8, strategy="ddp", max_epochs=3)
    trainer.fit(model, datamodule=datamodule)
