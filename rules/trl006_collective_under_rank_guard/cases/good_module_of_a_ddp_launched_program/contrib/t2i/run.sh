accelerate launch --config_file=./ddp.yaml finetune_t2i.py --model_type unet
