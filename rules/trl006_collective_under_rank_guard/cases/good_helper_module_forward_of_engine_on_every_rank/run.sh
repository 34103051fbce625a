#!/usr/bin/env bash
deepspeed --num_gpus 8 train.py --deepspeed_config ds_config_zero3.json --save_traces
