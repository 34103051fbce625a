"""The near misses of bad_gathers_this_ranks_optional_value.py: every rank gathers, with None where
its batch has no images; a test of the gathered list, which every rank holds alike; and a test of
a setting, not of a value the code gathers."""

import torch.distributed as dist
from accelerate import Accelerator
from accelerate.utils import gather_object

accelerator = Accelerator()


def gather_rollout_inputs(prompts, images):
    all_prompts = gather_object(prompts)
    all_images = gather_object(images if images is not None else [None] * len(prompts))
    if all(image is None for image in all_images):
        all_images = None
    return all_prompts, all_images


def gather_then_test(prompts, images, world_size):
    images = gather_object(images)
    if images is not None:
        accelerator.wait_for_everyone()
    return prompts, images


def gather_scores(scores, use_reference, reference_scores, world_size):
    gathered = [None] * world_size
    dist.all_gather_object(gathered, scores)
    if use_reference:
        references = [None] * world_size
        dist.all_gather_object(references, reference_scores)
        return gathered, references
    return gathered, None


def share_feedback(prompts, feedbacks=None):
    # Left out by every caller alike, or passed by every caller: the same on every rank.
    all_prompts = gather_object(prompts)
    all_feedbacks = gather_object(feedbacks) if feedbacks is not None else [None] * len(all_prompts)
    return all_prompts, all_feedbacks


def evaluate(model, dataloader, prediction_step, args):
    for inputs in dataloader:
        # What the step returns is None by the evaluation's settings, alike on every rank.
        loss, logits, labels = prediction_step(model, inputs)
        inputs_seen = inputs["input_ids"] if "inputs" in args.include_for_metrics else None
        if logits is not None:
            logits = accelerator.pad_across_processes(logits, dim=1, pad_index=-100)
        if labels is not None:
            labels = accelerator.pad_across_processes(labels, dim=1, pad_index=-100)
        if inputs_seen is not None:
            inputs_seen = accelerator.gather(inputs_seen)
