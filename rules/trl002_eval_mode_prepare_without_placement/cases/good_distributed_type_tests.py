# lmms-eval style: accelerate's distributed_type decides, written every way round.
from accelerate import Accelerator
from accelerate.utils import DistributedType


class Evaluator:
    def __init__(self, model, reference, judge, critic, accelerator: Accelerator):
        if accelerator.distributed_type == DistributedType.FSDP:
            self._model = accelerator.prepare(model)
        else:
            self._model = accelerator.prepare_model(model, evaluation_mode=True)

        if DistributedType.FSDP != accelerator.state.distributed_type:
            self._reference = accelerator.prepare_model(reference, evaluation_mode=True)

        if accelerator.distributed_type in (DistributedType.MULTI_GPU, DistributedType.NO):
            self._judge = accelerator.prepare_model(judge, evaluation_mode=True)

        if accelerator.distributed_type not in [DistributedType.FSDP, DistributedType.DEEPSPEED]:
            self._critic = accelerator.prepare_model(critic, evaluation_mode=True)
        elif accelerator.distributed_type is DistributedType.MULTI_GPU:
            self._critic = accelerator.prepare_model(critic, evaluation_mode=True)
