# An earlier statement leaves when FSDP is on: whatever follows runs without it.
from accelerate import Accelerator
from accelerate.utils import DistributedType
from transformers import AutoConfig, AutoModelForCausalLM, Trainer

from trl.models.utils import prepare_fsdp

accelerator = Accelerator()
if accelerator.distributed_type == DistributedType.FSDP:
    raise ValueError("this evaluation script does not support FSDP; launch it with DDP")

config = AutoConfig.from_pretrained("sshleifer/tiny-gpt2")
reference = accelerator.prepare_model(AutoModelForCausalLM.from_config(config), evaluation_mode=True)


class DPOTrainer(Trainer):
    def _prepare_ref_model(self, ref_model):
        if self.is_fsdp_enabled:
            self.ref_model = prepare_fsdp(ref_model, self.accelerator)
            return
        self.ref_model = self.accelerator.prepare_model(ref_model, evaluation_mode=True)

    def _prepare_teacher(self, teacher):
        if not self.is_fsdp_enabled:
            pass
        else:
            return prepare_fsdp(teacher, self.accelerator)
        return self.accelerator.prepare_model(teacher, evaluation_mode=True)
