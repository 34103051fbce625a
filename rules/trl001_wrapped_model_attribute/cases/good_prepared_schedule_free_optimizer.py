import torch
from accelerate import Accelerator
from schedulefree import AdamWScheduleFree
from transformers import AutoModelForSequenceClassification

accelerator = Accelerator()
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
optimizer = AdamWScheduleFree(model.parameters(), lr=2e-5)
loader = torch.utils.data.DataLoader(torch.randint(0, 30000, (512, 128)), batch_size=16)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

# A schedule-free optimizer has train() and eval() of its own: it is still no model.
model.train()
optimizer.train()
for input_ids in loader:
    loss = model(input_ids=input_ids, labels=torch.zeros_like(input_ids[:, 0])).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
optimizer.eval()
print("lr", optimizer.param_groups[0]["lr"], "steps", optimizer.state_dict()["state"].keys())
