"""A rollout helper of a vision-language trainer: each rank gathers the prompts of its own batch,
and the images only where its batch has some. The code gathers `images`, so every rank holds its
own; a rank whose batch is text only skips the gather, and the others wait in it for ever."""

import torch.distributed as dist
from accelerate import Accelerator
from accelerate.utils import gather_object

accelerator = Accelerator()


def gather_rollout_inputs(prompts, images):
    all_prompts = gather_object(prompts)
    # expect: TRL006
    all_images = gather_object(images) if images is not None else None
    return all_prompts, all_images


def gather_for_colocated_engine(prompts, images, world_size):
    gathered_prompts = [None] * world_size
    dist.all_gather_object(gathered_prompts, prompts)
    flat_prompts = [p for chunk in gathered_prompts for p in chunk]
    flat_images = None
    if images is not None:
        gathered_images = [None] * world_size
        # expect: TRL006
        dist.all_gather_object(gathered_images, images)
        flat_images = [image for chunk in gathered_images for image in chunk]
    return flat_prompts, flat_images


def log_rollout_images(inputs, logs):
    images = [example.get("images") for example in inputs]
    if all(not image_list for image_list in images):
        images = None  # this rank's batch is text only
    if images is not None:
        # expect: TRL006
        logs["images"].extend(gather_object(images))
