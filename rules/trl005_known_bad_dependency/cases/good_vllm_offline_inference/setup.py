from setuptools import find_packages, setup

setup(
    name="eval-harness",
    version="0.1.0",
    packages=find_packages(),
    # vLLM only generates answers offline here: the GRPO bug of vllm<0.7.2 cannot happen.
    install_requires=["datasets", "vllm==0.7.0", "pandas"],
)
