# Online DPO's paged-generation path switched attention on self.model_wrapped, Trainer's
# outermost wrapper: under DDP that read raises, under DeepSpeed it edits the engine's config.
from contextlib import contextmanager

from trl import OnlineDPOTrainer


class PagedOnlineDPOTrainer(OnlineDPOTrainer):
    @contextmanager
    def paged_attention(self):
        # expect: TRL001
        previous = self.model_wrapped.config._attn_implementation
        # expect: TRL001
        self.model_wrapped.config._attn_implementation = "sdpa_paged"
        try:
            yield
        finally:
            # expect: TRL001
            self.model_wrapped.config._attn_implementation = previous
