"""The near miss of good_configuration_tests.py: the barrier sits under the main-process test,
so rank 0 waits in it for ranks that never come."""

from accelerate import Accelerator


def finish(args, model, accelerator: Accelerator):
    if args.output_dir is not None:
        if accelerator.is_main_process:
            accelerator.unwrap_model(model).save_pretrained(args.output_dir, save_function=accelerator.save)
            # expect: TRL006
            accelerator.wait_for_everyone()
