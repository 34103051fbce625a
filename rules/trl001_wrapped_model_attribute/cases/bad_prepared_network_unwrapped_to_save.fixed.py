"""A LoRA training script prepares its network with the optimizer and loader: accelerate may hand
back a DDP wrapper. The script unwraps the network to save it, which shows it is a model, yet
calls the network's own epoch hook through the wrapper."""

from accelerate import Accelerator


def train(args, network, optimizer, train_dataloader, unet):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    network, optimizer, train_dataloader = accelerator.prepare(network, optimizer, train_dataloader)
    for epoch in range(args.max_train_epochs):
        # expect: TRL001
        accelerator.unwrap_model(network).on_epoch_start(unet)
        for batch in train_dataloader:
            with accelerator.accumulate(network):
                loss = unet(batch["latents"], network(batch["text"])).mean()
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        if accelerator.is_main_process:
            accelerator.unwrap_model(network).save_weights(f"{args.output_dir}/epoch-{epoch}.safetensors")
