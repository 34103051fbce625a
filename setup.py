"""Packaging glue that pyproject.toml cannot say: rules/ ships as the package trllint.rules.

The rule pack lives at the top of the checkout, one folder per rule; every folder found there is
packaged, so adding a rule needs no edit here.
"""

from setuptools import find_packages, setup

rule_packages = ["trllint.rules"] + [f"trllint.rules.{name}" for name in find_packages("rules")]

setup(
    packages=find_packages(include=["trllint", "trllint.*"]) + rule_packages,
    package_dir={"trllint.rules": "rules"},
)
