# Calls split one argument per line, with a trailing comma: the new argument gets its own line.
from transformers import Trainer


class RewardTrainer(Trainer):
    def __init__(self, model, reward_model, teacher_model, args):
        super().__init__(model=model, args=args)
        # expect: TRL002
        self.reward_model = self.accelerator.prepare_model(
            reward_model,
            evaluation_mode=True,
            device_placement=True,
        )
        # expect: TRL002
        self.teacher_model = self.accelerator.prepare_model(
            teacher_model,
            evaluation_mode=True,  # frozen: no optimizer, no grads
            device_placement=True,
        )
        # expect: TRL002
        self.critic = self.accelerator.prepare_model(self.critic, evaluation_mode=True, device_placement=True,)
