# Single-process inference: nothing wraps the model.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2").eval()
    model.generation_config.pad_token_id = tokenizer.eos_token_id
    prompt = tokenizer("Distributed training is", return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**prompt, max_new_tokens=20)
    print(model.name_or_path, model.config.n_positions, tokenizer.decode(out[0]))
    model.save_pretrained("local-copy")


if __name__ == "__main__":
    main()
