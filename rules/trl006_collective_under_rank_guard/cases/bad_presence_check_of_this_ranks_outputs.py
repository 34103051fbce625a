"""The near miss of good_presence_check_of_data_every_rank_received.py: the presence check reads
what this rank's own batch produced, which may be empty on one rank only."""

from accelerate import Accelerator

accelerator = Accelerator()


def generate_and_score(model, reward_fn, dataloader):
    for batch in dataloader:
        completions = model.generate(batch["input_ids"], max_new_tokens=64)
        rewards = reward_fn(completions)
        if len(rewards) == 0:
            continue  # nothing survived this rank's filter
        # expect: TRL006
        all_rewards = accelerator.gather(rewards)
        accelerator.print(all_rewards.mean().item())
