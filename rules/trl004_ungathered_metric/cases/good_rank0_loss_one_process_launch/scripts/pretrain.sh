#!/bin/bash
set -euo pipefail
python pretrain.py --batch-size 32 --lr 5e-4 "$@"
