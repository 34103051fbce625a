import sys

from setuptools import setup

# vllm<0.7.2 fails GRPO on two GPUs (tensors on cuda:0 and cuda:1); 0.7.2 is the floor.
VLLM_FLOOR = "vllm>=0.7.2"
if sys.version_info < (3, 9):
    print("vllm<0.7.2 is the last series for old Pythons; use vllm==0.7.0 at your own risk")

EXTRAS = {
    "vllm": [VLLM_FLOOR, "vllm-flash-attn==2.6.1"],
    "serve": ["vllm[audio]~=0.7.3", "fastapi"],
}

setup(
    name="grpo-recipes",
    install_requires=["accelerate>=1.3.0", "trl[vllm]>=0.15.0"],
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["vllm-0.7.0-compat=grpo_recipes.compat:main"]},
)
