"""An accelerate script whose launch no file shows: it may run under DDP, where the save is right,
so nothing is said (unknown is silent: no launch, config or code of the project shows ZeRO-3)."""

from accelerate import Accelerator

accelerator = Accelerator()


def save(model, output_dir):
    accelerator.wait_for_everyone()
    unwrapped_model = accelerator.unwrap_model(model)
    unwrapped_model.save_pretrained(
        output_dir,
        is_main_process=accelerator.is_main_process,
        save_function=accelerator.save,
    )
