# The model is prepared by an accelerator the function reaches through its state object, and the
# local name `accelerator` is bound only after the read: `accelerator.unwrap_model(model)` at the
# read would raise UnboundLocalError, so the finding has no fix.
def evaluate(state, model, batch):
    model = state.accelerator.prepare(model)
    outputs = model(**batch)
    # expect: TRL001
    vocab_size = model.config.vocab_size
    accelerator = state.accelerator
    accelerator.print("vocab", vocab_size, "loss", outputs.loss.item())
    return outputs.loss
