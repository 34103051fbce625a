"""GRPO on math problems; vLLM generates the completions on its own GPU."""

from datasets import load_dataset
from math_verify import parse, verify
from trl import GRPOConfig, GRPOTrainer


def accuracy_reward(completions, solution, **kwargs):
    return [float(verify(parse(c[0]["content"]), parse(s))) for c, s in zip(completions, solution)]


def main():
    dataset = load_dataset("AI-MO/NuminaMath-TIR", split="train")
    args = GRPOConfig(
        output_dir="Qwen2.5-1.5B-GRPO",
        learning_rate=1e-6,
        num_generations=8,
        max_completion_length=512,
        use_vllm=True,
        vllm_gpu_memory_utilization=0.7,
        bf16=True,
    )
    trainer = GRPOTrainer(
        model="Qwen/Qwen2.5-1.5B-Instruct",
        reward_funcs=accuracy_reward,
        args=args,
        train_dataset=dataset,
    )
    trainer.train()


if __name__ == "__main__":
    main()
