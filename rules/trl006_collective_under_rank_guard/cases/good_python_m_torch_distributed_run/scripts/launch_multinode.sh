#!/bin/bash
# On each node: NODE_RANK and MASTER_ADDR come from the scheduler.
CUDA_VISIBLE_DEVICES=0,1,2,3 OMP_NUM_THREADS=8 python -u -m torch.distributed.run \
    --nnodes 2 --node_rank $NODE_RANK --nproc_per_node 4 \
    --master_addr $MASTER_ADDR --master_port 29500 \
    train.py --output_dir outputs/ddp 2>&1 | tee logs/node$NODE_RANK.log
