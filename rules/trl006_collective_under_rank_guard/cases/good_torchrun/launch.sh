#!/bin/bash
torchrun --standalone --nnodes 1 --nproc_per_node 8 train.py --output_dir outputs/ddp "$@"
