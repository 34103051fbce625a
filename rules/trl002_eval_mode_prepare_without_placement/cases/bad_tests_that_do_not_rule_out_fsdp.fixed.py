# Tests whose falsehood does not prove FSDP off: transformers' is_fsdp_enabled() is also False under
# FSDP without CPU-RAM-efficient loading; `a and b` false may be `b` false;
# inside the FSDP branch itself; a test against another mode.
from accelerate.utils import DistributedType
from transformers import Trainer
from transformers.integrations.fsdp import is_fsdp_enabled

from trl.models.utils import prepare_fsdp


class GKDTrainer(Trainer):
    def __init__(self, model, teacher_model, ref_model, args):
        super().__init__(model=model, args=args)
        if is_fsdp_enabled():
            self.teacher_model = prepare_fsdp(teacher_model, self.accelerator)
        else:
            # expect: TRL002
            self.teacher_model = self.accelerator.prepare_model(
                teacher_model, evaluation_mode=True, device_placement=True
            )

        if self.is_fsdp_enabled and args.shard_reference:
            self.ref_model = prepare_fsdp(ref_model, self.accelerator)
        else:
            # expect: TRL002
            self.ref_model = self.accelerator.prepare_model(
                ref_model, evaluation_mode=True, device_placement=True
            )

        if self.accelerator.distributed_type == DistributedType.FSDP:
            # expect: TRL002
            self.reward_model = self.accelerator.prepare_model(
                self.reward_model, evaluation_mode=True, device_placement=True
            )

        if self.accelerator.distributed_type != DistributedType.NO:
            # expect: TRL002
            self.judge = self.accelerator.prepare_model(
                self.judge, evaluation_mode=True, device_placement=True
            )
