# transformers sets is_fsdp_enabled from `fsdp_plugin is not None`; the same test written out.
from accelerate import Accelerator

from trl.models.utils import prepare_fsdp


class Distiller:
    def __init__(self, student, teacher):
        self.accelerator = Accelerator()
        self.student = self.accelerator.prepare(student)
        if getattr(self.accelerator.state, "fsdp_plugin", None) is not None:
            self.teacher = prepare_fsdp(teacher, self.accelerator)
        else:
            self.teacher = self.accelerator.prepare_model(teacher, evaluation_mode=True)

    def add_judge(self, judge):
        if self.accelerator.state.fsdp_plugin is None:
            self.judge = self.accelerator.prepare_model(judge, evaluation_mode=True)
