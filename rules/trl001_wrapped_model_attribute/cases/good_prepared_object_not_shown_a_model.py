"""The near miss of bad_prepared_network_unwrapped_to_save.py: nothing in the file shows that the
prepared network is a model (no unwrap, no module method called on it), and accelerate also
prepares optimizers and loaders, whose attributes it forwards."""

from accelerate import Accelerator


def train(args, network, optimizer, train_dataloader, unet):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    network, optimizer, train_dataloader = accelerator.prepare(network, optimizer, train_dataloader)
    for epoch in range(args.max_train_epochs):
        network.on_epoch_start(unet)
        for batch in train_dataloader:
            with accelerator.accumulate(network):
                loss = unet(batch["latents"], network(batch["text"])).mean()
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        accelerator.save_state(f"{args.output_dir}/epoch-{epoch}")
