"""An accelerate script whose launch no file shows: under ZeRO-3 or FSDP rank 0's generate hangs (preview)."""

from accelerate import Accelerator

accelerator = Accelerator()


def sample(model, tokenizer, prompt):
    inputs = tokenizer(prompt, return_tensors="pt").to(accelerator.device)
    # expect: TRL007
    output = accelerator.unwrap_model(model).generate(**inputs, max_new_tokens=32)
    if accelerator.is_local_main_process:
        print(tokenizer.decode(output[0]))
