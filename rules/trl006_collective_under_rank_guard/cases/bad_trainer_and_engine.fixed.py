import deepspeed
from accelerate import Accelerator
from transformers import Trainer

accelerator = Accelerator()


def finish(trainer, output_dir):
    trainer.train()
    # Trainer.save_model gathers the ZeRO-3 / FSDP shards and writes from rank 0 only itself.
    # expect: TRL006
    trainer.save_model(output_dir)


class DistillTrainer(Trainer):
    def save_best(self, output_dir):
        # expect: TRL006
        self.save_model(output_dir)
        if self.args.should_save:
            self.state.save_to_json(f"{output_dir}/trainer_state.json")


def train_with_engine(args, model, params):
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=params)
    # every rank writes its own ZeRO shard: the hoisted copy writes files (unsafe)
    # expect: TRL006
    engine.save_checkpoint(args.output_dir)


@accelerator.on_main_process
def log_predictions(predictions, tracker):
    # expect: TRL006
    everything = accelerator.gather(predictions)
    tracker.log({"predictions": everything})


def push_on_main(model, out_dir, repo):
    if not accelerator.is_main_process:
        return
    # expect: TRL006
    accelerator.save_model(model, out_dir)
    repo.push(out_dir)


def stop_early(loader, model, patience):
    for batch in loader:
        loss = model(**batch).loss
        if loss.isnan():
            accelerator.set_trigger()
        if accelerator.is_main_process:
            # expect: TRL006
            if accelerator.check_trigger():
                break


def train_with_named_engine(args, model, params):
    # The engine is known by what deepspeed.initialize returned, not by its name.
    model_ds, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=params)
    # expect: TRL006
    model_ds.save_checkpoint(args.output_dir)
