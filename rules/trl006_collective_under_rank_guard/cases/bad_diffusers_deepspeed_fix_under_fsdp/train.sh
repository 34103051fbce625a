accelerate launch --config_file configs/fsdp.yaml train_text_to_image.py
