accelerate launch --config_file configs/ddp.yaml train_text_to_image.py
