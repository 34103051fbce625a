#!/bin/bash
# Adversarial fine-tuning of the autoencoder on one node.
set -euo pipefail

accelerate launch \
    --config_file configs/zero3.yaml \
    train.py \
    --output_dir outputs/vae-gan
