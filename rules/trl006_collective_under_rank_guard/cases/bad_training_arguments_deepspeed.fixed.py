"""A Trainer run under DeepSpeed (TrainingArguments(deepspeed=...)) that saves its accelerate state itself."""

from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


def run(train_dataset, eval_dataset):
    args = TrainingArguments(
        output_dir="out/reward",
        per_device_train_batch_size=8,
        bf16=True,
        deepspeed="configs/ds_zero2.json",
    )
    model = AutoModelForSequenceClassification.from_pretrained("Qwen/Qwen2.5-0.5B", num_labels=1)
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset, eval_dataset=eval_dataset)
    trainer.train()
    # every rank saves its optimizer shard under DeepSpeed: rank 0 alone waits for the others
    # expect: TRL006
    trainer.accelerator.save_state("out/reward/accelerate_state")
