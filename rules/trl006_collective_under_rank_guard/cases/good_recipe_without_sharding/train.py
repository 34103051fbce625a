"""Instruction tuning with the Trainer; its recipe keeps DDP (no deepspeed, no fsdp)."""

from dataclasses import dataclass, field

from accelerate import PartialState
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser, Trainer, TrainingArguments

from data import build_dataset


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-3.2-1B")


def train():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path, device_map={"": PartialState().process_index}
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=build_dataset(tokenizer),
        processing_class=tokenizer,
    )
    trainer.train()
    if trainer.is_world_process_zero():
        trainer.save_model(training_args.output_dir)
        tokenizer.save_pretrained(training_args.output_dir)


if __name__ == "__main__":
    train()
