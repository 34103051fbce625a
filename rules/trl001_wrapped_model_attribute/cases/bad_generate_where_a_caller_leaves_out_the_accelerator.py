"""The near miss of good_generate_on_the_arm_without_an_accelerator.py: the training loop hands the
sampling helper the prepared model but not the accelerator, so the arm for "no accelerator" calls
`generate` through the DDP wrapper."""

from accelerate import Accelerator
from transformers import AutoModelForCausalLM


def sample(model, tokenizer, prompts, accelerator=None):
    inputs = tokenizer(prompts, return_tensors="pt", padding=True)
    if accelerator is not None:
        out = accelerator.unwrap_model(model).generate(**inputs, max_new_tokens=64)
    else:
        # expect: TRL001
        out = model.generate(**inputs, max_new_tokens=64)
    return tokenizer.batch_decode(out)


def train(tokenizer, loader, optimizer, eval_prompts):
    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 100 == 0:
            print(sample(model, tokenizer, eval_prompts))
