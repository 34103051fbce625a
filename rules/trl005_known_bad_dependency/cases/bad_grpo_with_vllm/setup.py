from setuptools import find_packages, setup

setup(
    name="grpo-math",
    version="0.1.0",
    packages=find_packages(),
    install_requires=[
        "trl==0.14.0",
        "accelerate>=1.3.0",
        "datasets",
        "math-verify",
        # expect: TRL005
        "vllm==0.7.0",
    ],
)
