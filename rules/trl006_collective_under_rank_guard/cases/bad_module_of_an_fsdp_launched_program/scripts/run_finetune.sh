accelerate launch --config_file configs/ddp.yaml examples/finetune.py --model llama
