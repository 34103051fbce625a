"""The project's main program, launched under FSDP (scripts/run_finetune.sh); it never imports the
text-to-image tuner."""

from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    accelerator.print("fine-tuning")


if __name__ == "__main__":
    main()
