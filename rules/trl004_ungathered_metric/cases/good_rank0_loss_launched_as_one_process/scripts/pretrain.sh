#!/bin/bash
set -euo pipefail
torchrun --standalone --nproc_per_node 1 pretrain.py --batch-size 32 --lr 5e-4 "$@"
