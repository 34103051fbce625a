"""A helper that gathers the state dict (a collective under ZeRO-3 and FSDP) called under a
guard that lets every rank in under FSDP only: the code builds a ZeRO-3 launch, where the main
process gathers alone."""

from accelerate import Accelerator, DeepSpeedPlugin


class Exporter:
    def __init__(self, config, model):
        self.config = config
        self.accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3))
        self.model = self.accelerator.prepare(model)

    def export(self, output_dir):
        state_dict = self.accelerator.get_state_dict(self.model)
        self.accelerator.unwrap_model(self.model).save_pretrained(output_dir, state_dict=state_dict)

    def finish(self, output_dir):
        if self.accelerator.is_main_process or self.config.use_fsdp:
            # expect: TRL006
            self.export(output_dir)
