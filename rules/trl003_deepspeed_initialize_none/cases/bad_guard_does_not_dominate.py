from trl.models.utils import prepare_deepspeed
from trl.trainer.utils import disable_dropout_in_model


def prepare_reference(accelerator, ref_model=None, disable_dropout=True):
    if disable_dropout:
        if ref_model is not None:
            disable_dropout_in_model(ref_model)
    if accelerator.state.deepspeed_plugin is not None:
        # The guard above covers dropout only, not this call.
        # expect: TRL003
        ref_model = prepare_deepspeed(ref_model, accelerator)
    return ref_model
