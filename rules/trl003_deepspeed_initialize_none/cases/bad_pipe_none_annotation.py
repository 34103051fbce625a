import deepspeed
from torch import nn


def wrap_teacher(teacher: "nn.Module | None", ds_config: dict) -> None:
    # The engine itself is kept by DeepSpeed's global state; only the side effect matters here.
    # expect: TRL003
    deepspeed.initialize(model=teacher, config=ds_config)  # ZeRO-0: replicate the teacher
