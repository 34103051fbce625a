accelerate launch --config_file=./fsdp.yaml finetune_t2i.py --model_type unet
