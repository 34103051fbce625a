# trllint-settings: {"deepspeed-sinks": ["mylab.dist.make_engine"]}
from mylab.dist import make_engine


class Distiller:
    def __init__(self, student, teacher=None, engine_config=None):
        self.student = make_engine(student, engine_config)
        self.teacher = teacher
        # expect: TRL003
        self.teacher = make_engine(self.teacher, engine_config)
