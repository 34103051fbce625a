"""Input kinds: which kind reads a path (one table), and the pipeline linting a buffer in-process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path, PurePath

import pytest

from trllint.engine.inputs import kind_for
from trllint.engine.pipeline import fix_bytes, lint_bytes
from trllint.rule.registry import available_rules
from trllint.rule.ruleset import RuleSet

REPO = Path(__file__).resolve().parent.parent


# path -> (kind, read as Python, read whatever rules are selected, taken by a folder walk)
KINDS = [
    ("x.py", "python", True, True, True),
    ("setup.py", "python", True, True, True),
    ("pkg/x.pyi", "python stub", True, False, True),
    ("x.ipynb", "notebook", False, True, True),
    ("pyproject.toml", "toml", False, False, True),
    ("setup.cfg", "text", False, False, True),
    ("requirements.txt", "requirements", False, False, True),
    ("requirements/dev.txt", "requirements", False, False, True),
    ("dev-requirements.in", "requirements", False, False, True),
    ("requirements_test.txt", "requirements", False, False, True),
    # Read when named on the command line (TRL005 then asks that every line be a requirement),
    # never picked up by a walk: README.txt, CMakeLists.txt.
    ("notes.txt", "requirements", False, False, False),
    ("docs/CMakeLists.txt", "requirements", False, False, False),
]


@pytest.mark.parametrize(("path", "kind", "is_python", "always_read", "walked"), KINDS, ids=[k[0] for k in KINDS])
def test_kind_for_a_path(path, kind, is_python, always_read, walked):
    chosen = kind_for(path)
    assert (chosen.name, chosen.is_python, chosen.always_read, chosen.taken_by_walk(PurePath(path))) == (
        kind,
        is_python,
        always_read,
        walked,
    )
    assert kind_for(Path(path)) is chosen  # a str and a Path name the same kind


def _rules(*codes: str, preview: bool = True) -> RuleSet:
    return RuleSet([available_rules()[code].rule for code in codes], preview=preview)


@pytest.mark.parametrize(
    ("filename", "text", "messages"),
    [
        ("requirements.txt", "vllm==0.6.3\n", ["vllm==0.6.3 admits"]),
        # Named as one: every line is read as a requirement, and one that is not is malformed
        # (a preview finding: the test runs with preview on).
        ("requirements.txt", "see the README\nvllm==0.6.3\n", ["malformed requirement 'see the README'", "vllm==0.6.3 admits"]),
        ("notes.txt", "vllm==0.6.3\ntorch\n", ["vllm==0.6.3 admits"]),  # every line is a requirement: read as one
        ("notes.txt", "see the README\nvllm==0.6.3\n", []),  # a line that is not: not a requirements file
    ],
)
def test_a_text_file_is_read_as_requirements_when_named_so_or_when_every_line_is_one(filename, text, messages):
    result = lint_bytes(text.encode(), filename, _rules("TRL005"))
    assert [f.message[: len(m)] for f, m in zip(result.findings, messages)] == messages
    assert len(result.findings) == len(messages) and {f.code for f in result.findings} <= {"TRL005"}


TRAIN = textwrap.dedent(
    """\
    from accelerate import Accelerator

    accelerator = Accelerator()
    model = accelerator.prepare(model)
    print(model.config.vocab_size)
    """
)


# A notebook runs in one process unless a launcher starts it, and accelerate wraps nothing there:
# the notebook form wraps by hand, which hides model.config in one process too.
NOTEBOOK_TRAIN = textwrap.dedent(
    """\
    from torch.nn.parallel import DistributedDataParallel

    model = DistributedDataParallel(model)
    print(model.config.vocab_size)
    """
)


def _notebook(*cells: str) -> bytes:
    return json.dumps(
        {
            "cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [], "execution_count": None} for c in cells],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    ).encode()


def test_lint_bytes_and_fix_bytes_in_process():
    ruleset = _rules("TRL001")
    python = lint_bytes(TRAIN.encode(), "train.py", ruleset)
    assert [(f.code, f.line, f.cell) for f in python.findings] == [("TRL001", 5, None)]
    assert python.path == "train.py"

    setup, read = NOTEBOOK_TRAIN.split("print")
    notebook = _notebook(setup, "%time x = 1\nprint" + read)
    cells = lint_bytes(notebook, "train.ipynb", ruleset, display="nb/train.ipynb")
    assert [(f.code, f.line, f.cell, f.path) for f in cells.findings] == [("TRL001", 2, 2, "nb/train.ipynb")]

    fixed, new_bytes = fix_bytes(notebook, "train.ipynb", ruleset, unsafe=True, diff=True)
    assert fixed.fixed == 1 and new_bytes is not None and "%time x = 1" in new_bytes.decode()
    assert fixed.diff.startswith("--- train.ipynb")


def test_the_pipeline_needs_no_pool_nor_any_of_the_app():
    """An editor server lints a buffer with the engine alone: nothing of trllint.app is imported."""
    script = textwrap.dedent(
        f"""
        import json, sys
        from trllint.engine.pipeline import lint_bytes
        from trllint.rule.registry import available_rules
        from trllint.rule.ruleset import RuleSet
        ruleset = RuleSet([available_rules()["TRL001"].rule], preview=True)
        notebook = json.dumps({{"cells": [{{"cell_type": "code", "source": {NOTEBOOK_TRAIN!r}, "metadata": {{}}, "outputs": []}}]}})
        found = [lint_bytes({TRAIN!r}.encode(), "train.py", ruleset), lint_bytes(notebook.encode(), "train.ipynb", ruleset)]
        print(json.dumps([[f.code, f.cell] for r in found for f in r.findings]))
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("trllint.app") or "multiprocessing" in m)))
        """
    )
    process = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    findings, app_modules = process.stdout.splitlines()
    assert json.loads(findings) == [["TRL001", None], ["TRL001", 1]]
    assert json.loads(app_modules) == []
