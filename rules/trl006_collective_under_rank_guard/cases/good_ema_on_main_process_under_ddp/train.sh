accelerate launch --config_file configs/multi_gpu.yaml train_unconditional.py --output_dir ddpm-ema-64
