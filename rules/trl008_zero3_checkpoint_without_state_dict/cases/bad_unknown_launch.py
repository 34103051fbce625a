"""An accelerate script whose launch no file shows: under ZeRO-3 its checkpoint is placeholders (preview)."""

from accelerate import Accelerator

accelerator = Accelerator()


def save(model, output_dir):
    accelerator.wait_for_everyone()
    unwrapped_model = accelerator.unwrap_model(model)
    # expect: TRL008
    unwrapped_model.save_pretrained(
        output_dir,
        is_main_process=accelerator.is_main_process,
        save_function=accelerator.save,
    )
