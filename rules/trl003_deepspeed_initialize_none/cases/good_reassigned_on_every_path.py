from transformers import AutoModelForCausalLM
from trl import create_reference_model
from trl.models.utils import prepare_deepspeed


def load_reference(model, accelerator, ref_model_path=None):
    ref_model = None
    if ref_model_path is not None:
        ref_model = AutoModelForCausalLM.from_pretrained(ref_model_path)
    else:
        ref_model = create_reference_model(model)
    return prepare_deepspeed(ref_model, accelerator)
