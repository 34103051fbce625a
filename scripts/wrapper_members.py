"""Write TRL001's table of what a DDP or DataParallel wrapper answers itself.

A read through ``DistributedDataParallel`` / ``DataParallel`` finds an attribute only when the
wrapper's class (with ``torch.nn.Module`` above it) defines it, or an instance of it holds it:
anything else (a submodule, a method or a plain attribute of the wrapped model) raises
``AttributeError``. The rule reads the table as data and never imports torch; this script
learns it from the installed torch: every name the classes define (``dir``), every ``self.<name>``
their methods assign (read from the class bodies), and what an instance holds after
construction (``vars``; DDP in a one-process gloo group).

    .venv/bin/python scripts/wrapper_members.py    # rewrites rules/trl001_*/wrapper_members.toml
"""

from __future__ import annotations

import ast
import inspect
import os
import tempfile
import textwrap
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DataParallel, DistributedDataParallel

TABLE = Path(__file__).resolve().parent.parent / "rules" / "trl001_wrapped_model_attribute" / "wrapper_members.toml"


def assigned_in_body(cls: type) -> set[str]:
    """``self.<name>`` assigned anywhere in the class body (``setattr``-free code only)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    names: set[str] = set()
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    names.add(part.attr)
    # nn.Module.__init__ and __setstate__ set their attributes through super().__setattr__("name", ...)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__setattr__":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
    return names


def module_members() -> set[str]:
    return set(dir(nn.Module)) | assigned_in_body(nn.Module) | set(vars(nn.Module()))


def data_parallel_members() -> set[str]:
    wrapper = DataParallel(nn.Linear(2, 2))  # on a machine without GPUs it only stores the module
    return set(dir(DataParallel)) | assigned_in_body(DataParallel) | set(vars(wrapper))


def distributed_data_parallel_members() -> set[str]:
    with tempfile.TemporaryDirectory() as folder:
        store = f"file://{os.path.join(folder, 'store')}"
        dist.init_process_group("gloo", init_method=store, rank=0, world_size=1)
        try:
            wrapper = DistributedDataParallel(nn.Linear(2, 2))
            found = set(vars(wrapper))
        finally:
            dist.destroy_process_group()
    return set(dir(DistributedDataParallel)) | assigned_in_body(DistributedDataParallel) | found


def block(name: str, members: set[str]) -> str:
    lines = "".join(f'    "{member}",\n' for member in sorted(members))
    return f"{name} = [\n{lines}]\n"


def main() -> None:
    module = module_members()
    text = (
        "# What torch.nn.Module, DataParallel and DistributedDataParallel answer themselves: every\n"
        "# name their classes define, every self.<name> their methods assign, and what an instance\n"
        "# holds. Any other attribute read through such a wrapper raises AttributeError.\n"
        f"# Written by scripts/wrapper_members.py from torch {torch.__version__}; do not edit by hand.\n\n"
        + block("module", module)
        + "\n"
        + block("data-parallel", data_parallel_members() - module)
        + "\n"
        + block("distributed-data-parallel", distributed_data_parallel_members() - module)
    )
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()
