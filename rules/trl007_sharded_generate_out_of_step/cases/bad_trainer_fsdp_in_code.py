"""A Trainer run with FSDP set in its arguments; a subclass previews generations on rank 0."""

from transformers import Trainer, TrainingArguments

args = TrainingArguments(output_dir="out", fsdp="full_shard auto_wrap", bf16=True)


class SamplingTrainer(Trainer):
    def log_samples(self, prompts):
        if self.is_world_process_zero():
            inputs = self.processing_class(prompts, return_tensors="pt").to(self.args.device)
            # expect: TRL007
            outputs = self.model.generate(**inputs, max_new_tokens=32)
            self.log({"sample": self.processing_class.decode(outputs[0])})
