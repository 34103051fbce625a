import setuptools

setuptools.setup(
    name="grpo-recipes",
    install_requires=[
        "accelerate>=1.3.0",
        # expect: TRL005
        "vllm",
    ],
    extras_require={
        "bisect": ["vllm==0.6.6"],  # noqa: TRL005 (pinned on purpose while bisecting)
        # expect: TRL005
        "bad": ["vllm>=0.7.2,,"],
    },
)
