from torch import nn
from transformers import AutoModelForCausalLM


class CausalLMWithValueHeads(nn.Module):
    def __init__(self, model_path):
        super().__init__()
        self.base_model = AutoModelForCausalLM.from_pretrained(model_path)
        self.v_head = nn.Linear(self.base_model.config.hidden_size, 1)

    def forward(self, input_ids, attention_mask=None):
        hidden = self.base_model(input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states[-1]
        return self.v_head(hidden).squeeze(-1)

    def loss(self, batch):
        return ((self(batch["input_ids"]) - batch["returns"]) ** 2).mean()

    def sync_target_heads(self):
        pass


def build_model(model_path):
    return CausalLMWithValueHeads(model_path)
