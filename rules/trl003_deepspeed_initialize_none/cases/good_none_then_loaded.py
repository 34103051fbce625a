import deepspeed
from transformers import AutoModelForCausalLM


def teacher_engine(models: dict, ds_config: dict, teacher_path: str):
    teacher = models.get("teacher")
    if teacher is None:
        teacher = AutoModelForCausalLM.from_pretrained(teacher_path)
    engine, *_ = deepspeed.initialize(model=teacher, config=ds_config)
    return engine
