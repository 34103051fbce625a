"""Batch-generate answers to a benchmark with vLLM, then score them offline."""

import json

from datasets import load_dataset
from vllm import LLM, SamplingParams


def main(model="Qwen/Qwen2.5-7B-Instruct", out="answers.jsonl"):
    questions = load_dataset("openai/gsm8k", "main", split="test")["question"]
    llm = LLM(model=model, tensor_parallel_size=2, gpu_memory_utilization=0.9)
    params = SamplingParams(temperature=0.0, max_tokens=512)
    outputs = llm.generate(questions, params)
    with open(out, "w") as file:
        for question, output in zip(questions, outputs):
            file.write(json.dumps({"question": question, "answer": output.outputs[0].text}) + "\n")


if __name__ == "__main__":
    main()
