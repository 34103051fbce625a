"""Near misses of a model-class arm: these tests may hold for the wrapper. Every wrapper is an
`nn.Module`; accelerate compiles after it wraps, so an `OptimizedModule` may hold DDP; a constant
may hold wrapper classes, an import may rename one, and a tuple may name a wrapper beside a model."""

import torch
from peft import PeftModel
from torch._dynamo.eval_frame import OptimizedModule
from torch.nn.parallel import DistributedDataParallel as Parallel
from transformers import Trainer

WRAPPERS = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)


class ScaledLossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        scale = 1.0
        if isinstance(model, torch.nn.Module):
            # expect: TRL001
            scale = self.accelerator.unwrap_model(model).base_model.config.hidden_size ** -0.5
        if isinstance(model, OptimizedModule):
            # expect: TRL001
            scale *= self.accelerator.unwrap_model(model).config.initializer_range
        if isinstance(model, WRAPPERS):
            # expect: TRL001
            scale *= self.accelerator.unwrap_model(model).config.initializer_range
        if isinstance(model, (PeftModel, Parallel)):
            # expect: TRL001
            scale *= self.accelerator.unwrap_model(model).config.initializer_range
        return outputs.loss * scale
