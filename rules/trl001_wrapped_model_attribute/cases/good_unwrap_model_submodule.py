import torch
from accelerate import Accelerator
from diffusers import UNet2DModel

accelerator = Accelerator()
model = UNet2DModel(sample_size=64, in_channels=3, out_channels=3)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
loader = torch.utils.data.DataLoader(torch.randn(256, 3, 64, 64), batch_size=16)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

# The optimizer and the loader come back prepared too; their own attributes are theirs.
print(len(loader.dataset), optimizer.param_groups[0]["lr"])
model.train()
for images in loader:
    noise = torch.randn_like(images)
    timesteps = torch.randint(0, 1000, (images.shape[0],), device=images.device)
    loss = torch.nn.functional.mse_loss(model(images + noise, timesteps).sample, noise)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()

unwrapped = accelerator.unwrap_model(model)
print("channels", unwrapped.in_channels, accelerator.unwrap_model(model).conv_in.weight.shape)
