#!/bin/bash
accelerate launch --num_processes 1 train.py --instance_data_dir ./dog --max_train_steps 800
