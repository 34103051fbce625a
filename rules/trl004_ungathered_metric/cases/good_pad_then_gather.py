# Completions of different lengths: padded across processes, then gathered, then reduced.
from accelerate import Accelerator

accelerator = Accelerator()


def log_lengths(completion_ids, pad_token_id, step):
    lengths = (completion_ids != pad_token_id).sum(dim=1)
    padded = accelerator.pad_across_processes(lengths, dim=0, pad_index=0)
    all_lengths = accelerator.gather(padded)
    accelerator.log({"completions/max_length": all_lengths.max().item()}, step=step)
