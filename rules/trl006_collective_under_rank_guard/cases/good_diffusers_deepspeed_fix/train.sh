export MODEL_NAME="stable-diffusion-v1-5/stable-diffusion-v1-5"
accelerate launch --config_file configs/zero2.yaml train_text_to_image.py
