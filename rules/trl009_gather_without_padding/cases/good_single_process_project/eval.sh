#!/bin/bash
# One GPU is enough for the evaluation.
CUDA_VISIBLE_DEVICES=0 python evaluate_summaries.py --model_name google/flan-t5-base
