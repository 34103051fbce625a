import torch
from torch import nn


class MaskedTransformer(nn.Module):
    def __init__(self, vocab_size=8192, dim=512, in_channels=4):
        super().__init__()
        self.mask_token_id = vocab_size
        self.in_channels = in_channels
        self.embed = nn.Embedding(vocab_size + 1, dim)
        self.blocks = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, batch_first=True), 6)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


model = MaskedTransformer().cuda()
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

for step in range(10000):
    tokens = torch.randint(0, 8192, (32, 256), device="cuda")
    mask = torch.rand(tokens.shape, device="cuda") < 0.5
    # expect: TRL001
    inputs = torch.where(mask, torch.full_like(tokens, getattr(model, "module", model).mask_token_id), tokens)
    logits = model(inputs)
    loss = nn.functional.cross_entropy(logits[mask], tokens[mask])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
