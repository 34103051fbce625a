"""A fine-tuning recipe that shards its model with FSDP (several processes run it) and logs
through its metric logger from rank 0: the running loss is rank 0's own sample (a preview finding
of its own), the token accuracy a per-rank metric; `record_metric(..., reduce_type=None)` logs a
per-rank value too."""

import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard


class FullFinetuneRecipe:
    def __init__(self, cfg, metric_logger):
        dist.init_process_group("nccl")
        self._is_rank_zero = dist.get_rank() == 0
        self._metric_logger = metric_logger
        self._log_every_n_steps = cfg.log_every_n_steps
        self.global_step = 0

    def setup(self, model, optimizer):
        for layer in model.layers:
            fully_shard(layer)
        self._model = fully_shard(model)
        self._optimizer = optimizer

    def train(self, dataloader):
        running_loss, num_tokens, started = 0.0, 0, time.perf_counter()
        for batch in dataloader:
            labels = batch["labels"].cuda()
            logits = self._model(batch["tokens"].cuda())
            loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, ignore_index=-100)
            loss.backward()
            self._optimizer.step()
            self._optimizer.zero_grad(set_to_none=True)
            self.global_step += 1
            running_loss += loss.detach()
            num_tokens += (labels != -100).sum()
            if self.global_step % self._log_every_n_steps == 0 and self._is_rank_zero:
                mask = labels != -100
                correct = (logits.argmax(-1) == labels)[mask].float().mean()
                log_dict = {
                    # expect: TRL004
                    "loss": running_loss.item() / self._log_every_n_steps,
                    "lr": self._optimizer.param_groups[0]["lr"],
                    # expect: TRL004
                    "token_accuracy": correct.item(),
                    "tokens_per_second_per_gpu": num_tokens.item() / (time.perf_counter() - started),
                }
                self._metric_logger.log_dict(log_dict, step=self.global_step)
                running_loss, num_tokens, started = 0.0, 0, time.perf_counter()

    def validate(self, val_dataloader):
        for batch in val_dataloader:
            with torch.no_grad():
                logits = self._model(batch["tokens"].cuda())
            top1 = (logits.argmax(-1) == batch["labels"].cuda()).float().mean()
            # expect: TRL004
            self.record_metric("val/top1", top1, reduce_type=None)
            # The default reduce_type averages over the ranks first: nothing to report.
            self.record_metric("val/top1_mean", top1)

    def record_metric(self, name, value, reduce_type="mean"):
        if reduce_type == "mean":
            value = value.detach().clone()
            dist.all_reduce(value, op=dist.ReduceOp.AVG)
        if self._is_rank_zero:
            self._metric_logger.log(name, value, step=self.global_step)
