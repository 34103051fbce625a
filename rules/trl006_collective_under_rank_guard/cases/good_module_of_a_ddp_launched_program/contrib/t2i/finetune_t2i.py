"""The text-to-image program its folder's run.sh launches under DDP."""

from tuner import DiffuserTuner

if __name__ == "__main__":
    DiffuserTuner().tune(loader=[], steps=10)
