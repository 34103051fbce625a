import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
if torch.cuda.device_count() > 1:
    model = torch.nn.DataParallel(model)

batch = tokenizer(["hello world"] * 8, return_tensors="pt").to("cuda")
outputs = model(**batch, labels=batch["input_ids"])
# expect: TRL001
max_positions = model.config.n_positions
# expect: TRL001
print("trained", model.name_or_path, "up to", max_positions, "tokens, loss", outputs.loss.item())
