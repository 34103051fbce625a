accelerate launch --config_file configs/fsdp.yaml examples/finetune.py --model llama
