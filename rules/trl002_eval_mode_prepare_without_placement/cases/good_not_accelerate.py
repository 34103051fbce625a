# prepare_model on things that are not accelerate's Accelerator, and forwarded keyword arguments.
from serving.registry import ModelRegistry, prepare_model


class InferenceServer:
    def __init__(self, registry: ModelRegistry, model, accelerator, placement_kwargs):
        self.registry = registry
        self.model = self.registry.prepare_model(model, evaluation_mode=True)
        self.draft = prepare_model(model, evaluation_mode=True)
        # device_placement may be in placement_kwargs: adding it could pass it twice.
        self.ref = accelerator.prepare_model(model, evaluation_mode=True, **placement_kwargs)
