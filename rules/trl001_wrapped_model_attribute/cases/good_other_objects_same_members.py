# Tokenizers, arguments and configs have save_pretrained / name_or_path / generation_config too.
from accelerate import Accelerator
from transformers import Trainer


class LoggingTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        if self.state.global_step == 0:
            self.processing_class.save_pretrained(self.args.output_dir)
            print(self.processing_class.name_or_path, self.args.generation_config)
        return super().training_step(model, inputs, num_items_in_batch)


def tokenize_and_prepare(tokenizer, dataloader):
    accelerator = Accelerator()
    dataloader = accelerator.prepare(dataloader)
    tokenizer.save_pretrained("out")
    return dataloader, tokenizer.name_or_path
