from transformers import TrainerCallback


class VocabSizeCallback(TrainerCallback):
    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if model is not None and state.is_world_process_zero:
            print("vocab size", model.config.vocab_size)
