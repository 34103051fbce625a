from .base import ScoredTrainer


class BestOfNTrainer(ScoredTrainer):
    def learn(self, loader):
        # accelerate prepares what it is handed: nothing shows the scorer is a model
        self.scorer, loader = self.accelerator.prepare(self.scorer, loader)
        for batch in loader:
            scores = self.scorer.score(batch)
            self.accelerator.print(scores.mean())
