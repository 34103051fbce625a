"""A warm run answers from the result cache without importing LibCST or the rules.

Each run is a fresh interpreter with the real rule pack (as a pre-commit hook runs it); the
driver lists what got imported. The first run lints and leaves the results and the rule catalog
(``trllint.app.rule_catalog``) in the cache folder; a run of the same unchanged files then checks
its configuration against the catalog and reads every result back, importing neither. Anything
left to lint (a changed file, a file the cache has not seen, no catalog) sends it to the rules,
with the same report as a run that never tried.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASE = REPO / "rules" / "trl001_wrapped_model_attribute" / "cases" / "bad_accelerate_loop.py"

_DRIVER = textwrap.dedent(
    """
    import json, sys
    from trllint.app.cli import main
    try:
        status = main(sys.argv[1:])
    except SystemExit as exit:
        status = exit.code
    sys.stdout.flush()
    sys.stderr.write("\\nSTATUS " + json.dumps(status) + "\\n")
    sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
    """
)


def run(folder: Path, *args: str) -> tuple[int, str, str, set[str]]:
    """(exit status, stdout, stderr without the driver's lines, modules imported)."""
    process = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args],
        cwd=folder,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    lines = process.stderr.splitlines()
    status = json.loads(next(ln for ln in lines if ln.startswith("STATUS "))[len("STATUS ") :])
    modules = set(json.loads(next(ln for ln in lines if ln.startswith("MODULES "))[len("MODULES ") :]))
    stderr = "\n".join(ln for ln in lines if not ln.startswith(("STATUS ", "MODULES ")))
    return status, process.stdout, stderr.strip(), modules


def imported_the_rules(modules: set[str]) -> bool:
    return "libcst" in modules or "trllint.rule.base" in modules or any(m.startswith("trllint.rules.") for m in modules)


# Every rule is preview: the project turns preview on, as the README tells a pre-commit user to.
def project(tmp_path: Path, config: str = "[tool.trllint]\npreview = true\n") -> Path:
    (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    (tmp_path / "train.py").write_text(CASE.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "clean.py").write_text("import torch\n\nprint(torch.ones(2))\n", encoding="utf-8")
    return tmp_path


def test_a_warm_run_of_unchanged_files_imports_neither_libcst_nor_the_rules(tmp_path):
    folder = project(tmp_path)
    cold = run(folder, ".")
    assert imported_the_rules(cold[3])  # the first run lints: the test below can fail
    assert list((folder / ".trllint_cache").glob("rules-*.json"))
    warm = run(folder, ".")
    assert not imported_the_rules(warm[3]), sorted(m for m in warm[3] if "libcst" in m or "rules" in m)
    assert warm[:3] == cold[:3]
    assert warm[0] == 1 and "TRL001" in warm[1]
    for output_format in ("json", "sarif", "github"):
        warm = run(folder, "--format", output_format, ".")
        assert not imported_the_rules(warm[3])
        assert warm[:3] == run(folder, "--no-cache", "--format", output_format, ".")[:3]


def test_a_changed_file_is_linted_by_the_rules(tmp_path):
    folder = project(tmp_path)
    run(folder, ".")
    (folder / "train.py").write_text(CASE.read_text(encoding="utf-8").replace("model.config.vocab_size", "50000"))
    status, out, _, modules = run(folder, "--format", "json", ".")
    assert imported_the_rules(modules)
    assert status == 1 and [f["line"] for f in json.loads(out)] == [23]
    # And once more with nothing changed: warm again, the same answer.
    again = run(folder, "--format", "json", ".")
    assert not imported_the_rules(again[3]) and again[1] == out


def test_a_new_file_is_linted_and_the_others_read_back(tmp_path):
    folder = project(tmp_path)
    run(folder, ".")
    (folder / "other.py").write_text(CASE.read_text(encoding="utf-8"), encoding="utf-8")
    status, out, _, modules = run(folder, "--format", "json", ".")
    assert imported_the_rules(modules)
    assert sorted({f["path"] for f in json.loads(out)}) == ["other.py", "train.py"]


def test_the_configuration_is_checked_against_the_catalog_as_against_the_rules(tmp_path):
    folder = project(tmp_path)
    run(folder, ".")
    (folder / "pyproject.toml").write_text('[tool.trllint]\nselect = ["TRL001", "TRL999"]\n', encoding="utf-8")
    warm = run(folder, ".")
    cold = run(folder, "--no-cache", ".")
    assert warm[0] == cold[0] == 2
    assert warm[2] == cold[2] and "TRL999" in warm[2]
    (folder / "pyproject.toml").write_text('[tool.trllint]\nmetric-sinks = "log"\n', encoding="utf-8")
    warm, cold = run(folder, "."), run(folder, "--no-cache", ".")
    assert warm[0] == cold[0] == 2 and warm[2] == cold[2] and "metric-sinks" in warm[2]


def test_a_selection_and_a_setting_are_answered_from_the_catalog(tmp_path):
    folder = project(
        tmp_path, '[tool.trllint]\npreview = true\nselect = ["wrapped-model-attribute"]\ntraining-step-methods = ["step"]\n'
    )
    cold = run(folder, "--statistics", ".")
    warm = run(folder, "--statistics", ".")
    assert not imported_the_rules(warm[3]) and warm[:3] == cold[:3]
    # --select on the command line is another selection: its own cache entries, then warm too.
    selected = run(folder, "--select", "TRL004", ".")
    assert imported_the_rules(selected[3]) and selected[0] == 0
    assert not imported_the_rules(run(folder, "--select", "TRL004", ".")[3])


def test_a_run_without_preview_is_told_from_the_catalog_that_a_rule_is_preview(tmp_path):
    # The catalog carries each rule's status: the warm run's usage error is the rules' own.
    folder = project(tmp_path)
    run(folder, ".")
    warm = run(folder, "--no-preview", "--select", "TRL006", ".")
    cold = run(folder, "--no-cache", "--no-preview", "--select", "TRL006", ".")
    assert not imported_the_rules(warm[3]) and imported_the_rules(cold[3])
    assert warm[:3] == cold[:3]
    assert warm[0] == 2 and warm[1] == "" and "no rule is selected: TRL006 needs --preview" in warm[2]


def test_a_damaged_or_missing_catalog_sends_the_run_to_the_rules(tmp_path):
    folder = project(tmp_path)
    cold = run(folder, ".")
    for catalog in (folder / ".trllint_cache").glob("rules-*.json"):
        catalog.write_text("[{", encoding="utf-8")
    damaged = run(folder, ".")
    assert imported_the_rules(damaged[3]) and damaged[:3] == cold[:3]
    for catalog in (folder / ".trllint_cache").glob("rules-*.json"):
        catalog.unlink()
    missing = run(folder, ".")
    assert imported_the_rules(missing[3]) and missing[:3] == cold[:3]
    # The run that found none wrote it again.
    assert not imported_the_rules(run(folder, ".")[3])
