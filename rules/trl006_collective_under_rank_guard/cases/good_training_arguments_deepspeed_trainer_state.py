"""The Trainer's own save_state writes trainer_state.json from the main process: no collective."""

from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


def run(train_dataset):
    args = TrainingArguments(output_dir="out/reward", bf16=True, deepspeed="configs/ds_zero3.json")
    model = AutoModelForSequenceClassification.from_pretrained("Qwen/Qwen2.5-0.5B", num_labels=1)
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset)
    trainer.train()
    if trainer.is_world_process_zero():
        trainer.save_state()
        trainer.log_metrics("train", trainer.state.log_history[-1])
