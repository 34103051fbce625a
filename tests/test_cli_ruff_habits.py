"""The command line behaves as a Ruff user expects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trllint.app.cli import main

REPO = Path(__file__).resolve().parents[1]
# TRL004 is a preview rule: the tests that lint this case pass --preview.
TRL004_CASE = REPO / "rules" / "trl004_ungathered_metric" / "cases" / "bad_rank_test_read_from_environment.py"


@pytest.fixture
def project(tmp_path, monkeypatch):
    shutil.copy(TRL004_CASE, tmp_path / "train.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_command_line_select_beats_the_files_ignore(project, capsys):
    # Ruff's order: the highest-priority select starts the resolution; the file's ignore is a
    # modifier of a lower layer. Before, the file's ignore won and the run said "All checks passed!".
    (project / "pyproject.toml").write_text('[tool.trllint]\nignore = ["TRL004"]\n', encoding="utf-8")
    assert main(["--no-cache", "--preview", "train.py"]) == 0  # the file's own choice still holds without a flag
    capsys.readouterr()
    assert main(["--no-cache", "--preview", "--select", "TRL004", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "TRL004" in out and "All checks passed!" not in out


def test_a_selection_of_no_rule_is_a_usage_error_not_a_clean_run(project, capsys):
    assert main(["--no-cache", "--preview", "--select", "", "train.py"]) == 2
    assert "--select names no rule" in capsys.readouterr().err
    assert main(["--no-cache", "--preview", "--select", "TRL004", "--ignore", "TRL004", "train.py"]) == 2
    captured = capsys.readouterr()
    assert "no rule is selected" in captured.err and "All checks passed!" not in captured.out


def test_check_is_the_explicit_form_of_the_default_command(project, capsys):
    assert main(["--no-cache", "--preview", "--format", "json", "train.py"]) == 1
    plain = capsys.readouterr().out
    assert main(["check", "--no-cache", "--preview", "--format", "json", "train.py"]) == 1
    assert capsys.readouterr().out == plain
    assert main(["check", "--no-cache", "--preview", "--select", "TRL004", "."]) == 1  # `trllint check .`


def test_a_missing_path_is_no_clean_result(project, capsys):
    assert main(["--no-cache", "--preview", "missing.py"]) == 2
    captured = capsys.readouterr()
    assert "missing.py: no such file or folder" in captured.err
    assert "All checks passed!" not in captured.out
    assert "1 path was not found" in captured.out


def test_a_folder_with_nothing_to_lint_is_said(project, capsys):
    (project / "empty").mkdir()
    assert main(["--no-cache", "--preview", "empty"]) == 0
    assert "warning: no file to lint under empty" in capsys.readouterr().err


def test_force_exclude_applies_excludes_to_files_named_on_the_command_line(project, capsys):
    (project / "pyproject.toml").write_text('[tool.trllint]\nextend-exclude = ["vendor"]\n', encoding="utf-8")
    (project / "vendor" / "lib").mkdir(parents=True)
    shutil.copy(TRL004_CASE, project / "vendor" / "lib" / "train.py")
    # Named on the command line, a file is linted even when excluded (as in Ruff) ...
    assert main(["--no-cache", "--preview", "vendor/lib/train.py"]) == 1
    capsys.readouterr()
    # ... unless --force-exclude says the excludes hold for named files too.
    assert main(["--no-cache", "--preview", "--force-exclude", "vendor/lib/train.py"]) == 0
    assert "warning: no file to lint" in capsys.readouterr().err
    assert main(["--no-cache", "--preview", "--force-exclude", "vendor/lib/train.py", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "train.py:" in out and "vendor" not in out


@pytest.mark.parametrize("name", ["trllint.toml", ".trllint.toml"])
def test_a_standalone_configuration_takes_the_keys_at_its_top_level(project, capsys, name):
    (project / name).write_text('ignore = ["TRL004"]\n', encoding="utf-8")
    assert main(["--no-cache", "--preview", "train.py"]) == 0
    assert "All checks passed!" in capsys.readouterr().out
    (project / name).write_text('selec = ["TRL004"]\n', encoding="utf-8")  # misspelt: an error, not defaults
    assert main(["--no-cache", "--preview", "train.py"]) == 2
    assert f"{name}: unknown key 'selec'" in capsys.readouterr().err


def test_a_standalone_configuration_comes_before_pyproject_in_its_folder(project, capsys):
    (project / "pyproject.toml").write_text('[tool.trllint]\nselect = ["TRL001"]\n', encoding="utf-8")
    (project / "trllint.toml").write_text('select = ["TRL004"]\n', encoding="utf-8")
    assert main(["--no-cache", "--preview", "train.py"]) == 1
    assert "TRL004" in capsys.readouterr().out


def test_a_named_pyproject_without_a_trllint_table_is_an_error(project, capsys):
    (project / "pyproject.toml").write_text('[project]\nname = "train"\n', encoding="utf-8")
    assert main(["--no-cache", "--preview", "--config", "pyproject.toml", "train.py"]) == 2
    assert "no [tool.trllint] table" in capsys.readouterr().err
    (project / "lint.toml").write_text('select = ["TRL004"]\n', encoding="utf-8")
    assert main(["--no-cache", "--preview", "--config", "lint.toml", "train.py"]) == 1  # any other name: top-level keys


def test_this_checkout_lints_clean_with_its_own_configuration_and_its_example_does_not(monkeypatch, capsys):
    # Its cases, scenarios and bundled example are bad on purpose; its own configuration says so
    #, while the quickstart's `trllint --preview examples/` still finds the
    # example's bugs (here preview comes from the checkout's configuration, which turns it on).
    monkeypatch.chdir(REPO)
    assert main(["--no-cache", "."]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["--no-cache", "examples/"]) == 1


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("training-step-methods = [1]", "'training-step-methods' must be a list of strings, got [1]"),
        ('line-length = "88"', "'line-length' must be an integer"),
        ('report-rank0-loss = "yes"', "'report-rank0-loss' must be true or false"),
    ],
)
def test_configuration_errors_speak_of_toml_values_in_one_wording(project, capsys, setting, message):
    (project / "trllint.toml").write_text(setting + "\n", encoding="utf-8")
    assert main(["--no-cache", "train.py"]) == 2
    assert message in capsys.readouterr().err


def test_the_readme_shows_every_configuration_key():
    # Keys the code reads but the README never named (line-length, report-rank0-loss,
    # extend-ignore) were found only by reading the source.
    from trllint.app.config import _ENGINE_KEYS, settings_schema

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    missing = [key for key in sorted(_ENGINE_KEYS | set(settings_schema())) if f"\n{key} =" not in section
               and f"[tool.trllint.{key}]" not in section]
    assert not missing, f"README's Configuration section does not show: {missing}"


def test_output_file_takes_the_report_and_output_format_is_format(project, capsys):
    # Ruff's --output-file / -o and --output-format.
    import json

    assert main(["--no-cache", "--preview", "--output-format", "json", "--output-file", "report.json", "train.py"]) == 1
    assert capsys.readouterr().out == ""
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    assert [f["code"] for f in report] and {f["code"] for f in report} == {"TRL004"}
    assert main(["--no-cache", "--preview", "-o", "report.txt", "train.py"]) == 1
    assert "TRL004" in (project / "report.txt").read_text(encoding="utf-8") and capsys.readouterr().out == ""


def test_an_output_file_that_cannot_be_written_is_a_clear_usage_error(project, capsys):
    assert main(["--no-cache", "--preview", "--output-file", str(project / "missing" / "report.txt"), "train.py"]) == 2
    captured = capsys.readouterr()
    assert "cannot write the report to" in captured.err and "Traceback" not in captured.err


ONE_SAFE_FIX = """\
from accelerate import Accelerator

accelerator = Accelerator()
model, loader = accelerator.prepare(model, loader)
for batch in loader:
    correct = (model(batch["x"]).argmax(-1) == batch["y"]).float()
    accelerator.log({"accuracy": correct.mean()})
"""


def test_exit_non_zero_on_fix_fails_a_run_that_fixed_something(project, capsys):
    # Ruff's --exit-non-zero-on-fix: a CI step that fixes must still fail when it changed a file.
    fix_trl004 = ["--no-cache", "--preview", "--select", "TRL004", "--fix"]
    (project / "fixed.py").write_text(ONE_SAFE_FIX, encoding="utf-8")
    assert main([*fix_trl004, "fixed.py"]) == 0  # all fixed: exit 0 ...
    (project / "again.py").write_text(ONE_SAFE_FIX, encoding="utf-8")
    assert main([*fix_trl004, "--exit-non-zero-on-fix", "again.py"]) == 1  # ... unless asked
    assert "gather(" in (project / "again.py").read_text(encoding="utf-8")
    assert main([*fix_trl004, "--exit-non-zero-on-fix", "again.py"]) == 0  # nothing left


def test_quiet_prints_the_findings_without_the_summary(project, capsys):
    # Ruff's -q / --quiet: the findings only; a clean run prints nothing.
    assert main(["--no-cache", "--preview", "-q", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "TRL004" in out and "Found" not in out
    (project / "clean.py").write_text("x = 1\n", encoding="utf-8")
    assert main(["--no-cache", "--preview", "--quiet", "clean.py"]) == 0
    assert capsys.readouterr().out == ""


def test_the_readme_names_every_flag():
    # the README's usage and --help cover every flag (argparse's --help covers its own).
    from trllint.app.cli import build_parser

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    flags = {flag for action in build_parser()._actions for flag in action.option_strings if flag.startswith("--")}
    missing = sorted(flag for flag in flags - {"--help", "--version"} if flag not in readme)
    assert not missing, f"README does not name: {missing}"


@pytest.mark.parametrize("columns", ["50", "120"])
def test_help_wraps_to_the_terminal_width(columns, monkeypatch, capsys):
    # argparse reads the width as shutil does:
    # COLUMNS first, then the terminal, then 80.
    from trllint.app.cli import build_parser

    monkeypatch.setenv("COLUMNS", columns)
    assert int(columns) - 12 <= _widest_wrapped_line(build_parser().format_help()) <= int(columns) - 2


def test_help_without_a_width_wraps_at_80(monkeypatch):
    from trllint.app.cli import build_parser

    monkeypatch.delenv("COLUMNS", raising=False)

    def no_terminal(fd: int):
        raise OSError("not a terminal")  # as under CI, whatever runs the tests here (pytest -s in a terminal)

    monkeypatch.setattr("os.get_terminal_size", no_terminal)
    assert 68 <= _widest_wrapped_line(build_parser().format_help()) <= 78


def _widest_wrapped_line(help_text: str) -> int:
    # An option's own spelling (`--format {text,json,...}`) is never wrapped: its lines are left out.
    return max(len(line) for line in help_text.splitlines() if not line.lstrip().startswith("-"))
