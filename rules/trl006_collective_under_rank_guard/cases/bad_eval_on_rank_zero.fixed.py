from accelerate import Accelerator
from tqdm.auto import tqdm

accelerator = Accelerator()


def evaluate(model, eval_dataloader, metric):
    model.eval()
    for batch in eval_dataloader:
        predictions = model(**batch).logits.argmax(dim=-1)
        # predictions is read after the `if`: hoisting changes it on the other ranks (unsafe)
        # expect: TRL006
        predictions = accelerator.gather_for_metrics(predictions)
        if accelerator.is_main_process:
            metric.add_batch(predictions=predictions)
        print(predictions.shape)
    return metric.compute()


def train(model, optimizer, train_dataloader, eval_dataloader, metric, total_steps, eval_every):
    progress_bar = tqdm(range(total_steps), disable=not accelerator.is_local_main_process)
    for step, batch in enumerate(train_dataloader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        progress_bar.update(1)
        # A disabled bar never counts: only rank 0 reaches the evaluation (transformers#31532).
        if progress_bar.n % eval_every == 0:
            # expect: TRL006
            evaluate_all_ranks(model, eval_dataloader, metric)
        if accelerator.sync_gradients and accelerator.is_main_process and step % eval_every == 0:
            # expect: TRL006
            accelerator.wait_for_everyone()


def evaluate_all_ranks(model, eval_dataloader, metric):
    for batch in eval_dataloader:
        predictions = model(**batch).logits.argmax(dim=-1)
        metric.add_batch(predictions=accelerator.gather_for_metrics(predictions))
    return metric.compute()
