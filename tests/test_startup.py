"""Start-up stays light: `trllint one_file.py` is the pre-commit case, run on every commit.

Each test starts a fresh interpreter, runs the CLI and lists what got imported. The real rule
pack is loaded (a rule that imports something heavy at module level fails here).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Never: the linter reads source, it does not run it (and these take seconds to import).
HEAVY = {"torch", "transformers", "trl", "accelerate", "deepspeed", "numpy", "jsonschema", "yaml", "hypothesis"}
# Only a run that needs them: a pool, a diff, writing files, the other report formats.
ON_DEMAND = {"concurrent.futures", "multiprocessing", "difflib", "trllint.report.json", "trllint.report.sarif",
             "trllint.report.github"}
TRLLINT_FOR_ONE_FILE = {
    "trllint", "trllint.app.cli", "trllint.app.run", "trllint.app.pool", "trllint.app.config", "trllint.app.discovery",
    "trllint.engine.fix_loop", "trllint.rule.registry", "trllint.report", "trllint.report.text", "trllint.rule.base",
    "trllint.engine.lint", "trllint.core.source", "trllint.rules", "trllint.app.result_cache", "trllint.app.atomic_write",
    "trllint.app.exit_codes", "trllint.core.findings", "trllint.core.cst.private", "trllint.rule.metadata", "trllint.core.prefilter",
    "trllint.rule.ruleset", "trllint.core.suppression", "trllint.core.syntax", "trllint.core.positions", "trllint.app.memory",
    "trllint.app", "trllint.core", "trllint.core.cst", "trllint.engine", "trllint.rule",
    "trllint.engine.pipeline", "trllint.engine.inputs", "trllint.engine.inputs.python", "trllint.engine.inputs.text",
    "trllint.core.requirements_files", "trllint.core.target_version", "trllint.app.target",
    "trllint.engine.results", "trllint.rule.declared", "trllint.rule.graduation", "trllint.app.rule_catalog",
    # What the input kinds and the output formats share, in modules of their own (not the faces).
    "trllint.engine.inputs.kind", "trllint.report.run_report",
}  # fmt: skip
# What the rules read to answer (the model, the facts, LibCST helpers): as much as the rules ask.
ANALYSES = ("trllint.rules.", "trllint.semantic", "trllint.facts", "trllint.core.cst.", "trllint.rule.edits")

_DRIVER = textwrap.dedent(
    """
    import json, sys
    if sys.argv[1] == "--stand-in-rules":
        from tests import engine_rules
        engine_rules.install_speed_rules()
        del sys.argv[1]
    from trllint.app.cli import main
    try:
        status = main(sys.argv[1:])
    except SystemExit as exit:
        status = exit.code
    sys.stdout.flush()
    sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
    """
)


def modules_after(tmp_path: Path, *args: str, stand_in_rules: bool = False) -> set[str]:
    flag = ["--stand-in-rules"] if stand_in_rules else []
    process = subprocess.run(
        [sys.executable, "-c", _DRIVER, *flag, *args],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [ln for ln in process.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, process.stderr
    return set(json.loads(line[-1][len("MODULES ") :]))


def _top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_version_imports_neither_libcst_nor_the_rules(tmp_path):
    modules = modules_after(tmp_path, "--version")
    assert "libcst" not in modules
    # memory: the collector's switch, which the command turns off before anything else.
    light = {"trllint.app", "trllint.app.cli", "trllint.app.exit_codes", "trllint.app.memory"}
    assert not {m for m in modules if m.startswith("trllint.")} - light


def test_linting_one_file_imports_nothing_heavy_and_no_more_of_trllint_than_needed(tmp_path):
    # A file every stand-in rule reads, and the real rules' prefilters likely match too.
    (tmp_path / "train.py").write_text(
        "import deepspeed\n\ndef train(model, accelerator):\n    deepspeed.initialize(model=model)\n"
        "    accelerator.log({'loss': model.config.loss})\n",
        encoding="utf-8",
    )
    # --preview: the real rules are all preview; the stand-ins are stable.
    runs = ((["--no-cache", "--preview", "train.py"], False), (["--preview", "train.py"], False), (["train.py"], True))
    for args, stand_ins in runs:
        modules = modules_after(tmp_path, *args, stand_in_rules=stand_ins)
        assert "trllint.engine.lint" in modules  # it did lint
        assert not _top_level(modules) & HEAVY
        assert not modules & ON_DEMAND
        ours = {m for m in modules if m.startswith("trllint")}
        extra = {m for m in ours if not m.startswith(ANALYSES)} - TRLLINT_FOR_ONE_FILE
        assert not extra, f"imported without need: {sorted(extra)}"
        assert "packaging" not in _top_level(modules)  # TRL005 needs it for dependency lists only
        # and its readers of those lists too (tomllib with them; 8 ms at start-up).
        assert "trllint.rules.trl005_known_bad_dependency.dependencies" not in modules
    assert "tempfile" not in modules_after(tmp_path, "--no-cache", "--preview", "train.py")


def test_a_lint_without_cache_or_config_imports_neither_fixes_nor_hashing_nor_toml(tmp_path):
    """Linting reads no fixer, no atomic writer; no cache, no digest; a pyproject.toml of other
    tools is not parsed. (The stand-in rules: TRL005's dependency analysis reads TOML itself.)"""
    (tmp_path / "train.py").write_text("import torch\n\nprint(torch)\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'train'\n", encoding="utf-8")
    modules = modules_after(tmp_path, "--no-cache", "train.py", stand_in_rules=True)
    assert "trllint.engine.lint" in modules
    assert not modules & {"trllint.engine.fix_loop", "trllint.app.atomic_write", "trllint.app.result_cache", "hashlib", "tomllib"}


def test_the_pool_and_diff_are_imported_when_asked_for(tmp_path):
    """The test above can fail: the same listing sees them when a run needs them."""
    for n in range(10):
        (tmp_path / f"m{n}.py").write_text("x = 1\n", encoding="utf-8")
    assert "concurrent.futures" in modules_after(tmp_path, "--no-cache", "--jobs", "2", ".", stand_in_rules=True)
    assert "trllint.report.json" in modules_after(tmp_path, "--no-cache", "--preview", "--format", "json", "m0.py")
