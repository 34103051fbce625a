# A diffusion fine-tuning loop that logs validation images: each rank samples its own images, and
# the trackers show rank 0's as examples of the output; they are no metric to average over ranks.
import torch
import wandb
from accelerate import Accelerator


def validate(pipeline, prompts, accelerator, step):
    generator = torch.Generator(device=accelerator.device).manual_seed(accelerator.process_index)
    images = [pipeline(prompt, generator=generator).images[0] for prompt in prompts]
    samples = pipeline(prompts[0], num_images_per_prompt=4, generator=generator).images
    for tracker in accelerator.trackers:
        if tracker.name == "wandb":
            tracker.log(
                {
                    "validation": [wandb.Image(image, caption=prompt) for image, prompt in zip(images, prompts)],
                    "samples": [wandb.Image(samples[0]), wandb.Image(samples[1])],
                    "table": wandb.Table(columns=["prompt"], data=[[p] for p in prompts]),
                },
                step=step,
            )


def train(model, optimizer, train_dataloader, pipeline, prompts):
    accelerator = Accelerator(log_with="wandb")
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for step, batch in enumerate(train_dataloader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 500 == 0:
            validate(pipeline, prompts, accelerator, step)
