from accelerate import Accelerator
from accelerate.utils import set_seed


class OnPolicyTrainer:
    """Rollouts with the policy being trained; subclasses score and update."""

    def __init__(self, args, policy, ref_policy, tokenizer, optimizer):
        self.args = args
        self.accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
        set_seed(args.seed)
        self.tokenizer = tokenizer
        self.policy, self.optimizer = self.accelerator.prepare(policy, optimizer)
        self.ref_policy = ref_policy.to(self.accelerator.device).eval()

    def rollout(self, queries):
        raise NotImplementedError
