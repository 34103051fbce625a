import deepspeed


def distill_setup(models: dict, ds_config: dict):
    student = models["student"]
    teacher = models.get("teacher")
    student_engine, optimizer, _, _ = deepspeed.initialize(
        model=student, model_parameters=student.parameters(), config=ds_config
    )
    # expect: TRL003
    if teacher is not None:
        teacher_engine, _, _, _ = deepspeed.initialize(model=teacher, config=ds_config)
    return student_engine, optimizer, teacher_engine
