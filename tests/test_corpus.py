"""The installed trl, accelerate, deepspeed and transformers sources as a corpus (read, never imported).

Every rule of the pack plus the engine test rules runs over a copy of the files: no crash
(TRL999) on any file, ``--fix`` leaves every changed file parsing, compiling and unchanged by a
second ``--fix``. It prints the number of files, the findings per rule and the fixes applied.

``TRLLINT_CORPUS_FILES``: how many files (a deterministic sample spread over the four packages;
``all`` for every file). CI runs the default sample; the full corpus is ~3,800 files, ~80 MB.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import shutil
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

from tests.engine_rules import run_cli

PACKAGES = ("trl", "accelerate", "deepspeed", "transformers")
SAMPLE = os.environ.get("TRLLINT_CORPUS_FILES", "120")

pytestmark = pytest.mark.slow


def package_files() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        found[name] = sorted(p for p in root.rglob("*.py") if p.is_file() and "__pycache__" not in p.parts)
    return found


def sample(files: dict[str, list[Path]], wanted: str) -> list[tuple[str, Path]]:
    everything = [(name, path) for name, paths in files.items() for path in paths]
    if wanted == "all" or int(wanted) >= len(everything):
        return everything
    total, rng = int(wanted), random.Random(9)
    chosen: list[tuple[str, Path]] = []
    for name, paths in files.items():
        # Each package's share, at least a tenth of the sample: trl and accelerate are small.
        share = max(total // 10, round(total * len(paths) / len(everything)))
        chosen += [(name, p) for p in rng.sample(paths, min(share, len(paths)))]
    return chosen


def _compiles(data: bytes) -> bool:
    try:
        compile(data, "<corpus>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def test_corpus_lints_and_fixes_without_breaking_anything(tmp_path: Path):
    files = package_files()
    if not files:
        pytest.skip("none of trl, accelerate, deepspeed, transformers is installed (the test extra)")
    chosen = sample(files, SAMPLE)
    tree = tmp_path / "corpus"
    originals: dict[str, bytes] = {}
    for name, path in chosen:
        root = Path(next(iter(importlib.util.find_spec(name).submodule_search_locations)))
        relative = f"{name}/{path.relative_to(root).as_posix()}"
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, tree / relative)
        originals[relative] = path.read_bytes()

    # Valid Python 3.12 and 3.13 that the test interpreter (3.11) may not compile.
    from tests.test_newer_syntax import NEWER_SYNTAX

    # The target is the newest these need: without one it is the running interpreter.
    (tree / "trllint.toml").write_text('target-version = "py313"\n')
    for label, text in NEWER_SYNTAX.items():
        relative = f"newer_python/{label}.py"
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_text(text)
        originals[relative] = text.encode()

    # --preview: every rule and every finding meets the corpus, preview ones included.
    lint = run_cli("--no-cache", "--preview", "--format", "json", ".", cwd=tree, timeout=3000)
    assert "Traceback" not in lint.stderr, lint.stderr
    findings = json.loads(lint.stdout)
    per_rule = Counter(f["code"] for f in findings)
    crashes = [f"{f['path']}: {f['message']}" for f in findings if f["code"] == "TRL999"]
    assert not crashes, crashes
    # TRL000 only where neither CPython nor LibCST parses the file (or it is too large to lint),
    # and never on the valid newer-grammar files added to the corpus.
    for finding in (f for f in findings if f["code"] == "TRL000"):
        assert not finding["path"].startswith("newer_python/"), finding
        if "limit; not linted" not in finding["message"]:
            assert not _compiles(originals[finding["path"]]), finding
            with pytest.raises(cst.ParserSyntaxError):
                cst.parse_module(originals[finding["path"]])

    fixed = run_cli("--fix", "--unsafe-fixes", "--preview", "--no-cache", ".", cwd=tree, timeout=3000)
    assert "Traceback" not in fixed.stderr and "please report it" not in fixed.stderr, fixed.stderr
    summary = re.search(r"\((\d+) fixed, (\d+) remaining\)", fixed.stdout)
    applied = int(summary.group(1)) if summary else 0
    changed = [name for name, data in originals.items() if (tree / name).read_bytes() != data]
    for name in changed:
        data = (tree / name).read_bytes()
        cst.parse_module(data)
        if _compiles(originals[name]):
            assert _compiles(data), name

    snapshot = {name: (tree / name).read_bytes() for name in changed}
    again = run_cli("--fix", "--unsafe-fixes", "--preview", "--no-cache", ".", cwd=tree, timeout=3000)
    assert "fixed" not in again.stdout.splitlines()[-1] or "(0 fixed" in again.stdout, again.stdout[-500:]
    assert {name: (tree / name).read_bytes() for name in changed} == snapshot

    print(
        f"\ncorpus: {len(originals)} files ({sum(map(len, originals.values())) / 2**20:.1f} MB) from "
        + ", ".join(f"{name} {sum(1 for n in originals if n.startswith(name + '/'))}" for name in files)
        + f"\nfindings per rule: {dict(sorted(per_rule.items()))}"
        + f"\nfixes applied: {applied} in {len(changed)} files; second --fix changed nothing"
    )
    assert applied > 0 and len(changed) > 0  # the engine test rules fix something in nearly every file
