# A callback logging the Trainer's own (already averaged) history: not per-rank tensors.
import wandb
from accelerate import PartialState
from transformers import TrainerCallback


class HistoryCallback(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if PartialState().is_main_process and state.log_history:
            last = state.log_history[-1]
            wandb.log({"train/loss_history": last.get("loss", 0.0), "train/step": state.global_step})
