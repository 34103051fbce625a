#!/bin/bash
python3 -m torch.distributed.run --nproc_per_node 8 train.py --deepspeed ds_z3.json --output_dir out
