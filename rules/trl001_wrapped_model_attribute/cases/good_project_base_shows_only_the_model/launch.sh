#!/bin/bash
accelerate launch --multi_gpu --num_processes 8 -m rl.ilql
