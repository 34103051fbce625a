from setuptools import find_packages, setup

__version__ = "0.3.0"

REQUIRED_PKGS = [
    "accelerate>=1.3.0",
    "datasets>=3.0.0",
    "transformers>=4.48.2",
]
EXTRAS = {
    "deepspeed": ["deepspeed>=0.14.4"],
    # expect: TRL005
    "vllm": ["vllm>=0.7.1"],
    # expect: TRL005
    "serve": ['vllm[audio]<0.9', "fastapi"],
}
EXTRAS["dev"] = ["pytest", "parameterized"]

setup(
    name="grpo-recipes",
    version=__version__,
    packages=find_packages(),
    python_requires=">=3.10",
    install_requires=REQUIRED_PKGS
    # expect: TRL005
    + ["vllm==0.7.0 ; sys_platform != 'win32'"],
    extras_require=EXTRAS,
)
