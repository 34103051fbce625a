"""The rest of the flags and settings a Ruff user reaches for (points 6, 7, 9 and 12)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trllint.app.cli import main

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "rules" / "trl004_ungathered_metric" / "cases"
# One safe TRL004 fix and two unsafe ones (only some ranks reach the gather).
MIXED_SAFETY = CASES / "bad_rank_test_read_from_environment.py"
# A whole tensor logged: the fix gathers it with gather_for_metrics (unsafe).
WHOLE_TENSOR = CASES / "bad_online_stats_update.py"

# Real-looking: a training step with stale, live and foreign noqa comments.
NOQA_SCRIPT = '''\
import torch
from accelerate import Accelerator

accelerator = Accelerator()


def train(model, optimizer, loader):
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)  # noqa: TRL004
        optimizer.step()
        accuracy = (model(**batch).logits.argmax(-1) == batch["labels"]).float().mean()
        accelerator.log({"accuracy": accuracy.item()})  # noqa: TRL004
        print("step done")  # noqa: E501, TRL001
        note = "# noqa: TRL002"
        accelerator.log({"lr": 1e-3})  # noqa
        accelerator.print(note)  # type: ignore  # noqa: TRL04
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRLLINT_CACHE_DIR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path


def run(capsys, *args: str, preview: bool = True) -> tuple[int, str, str]:
    """One run; with `--preview` unless told not to: TRL004, the rule most tests here lint with,
    is a preview rule."""
    args = ("--preview", *args) if preview else args
    code = main(["--no-cache", *args] if "--cache-dir" not in args else list(args))
    out, err = capsys.readouterr()
    return code, out, err


# ---- point 9: TRL100, Ruff's RUF100 -----------------------------------------------------------


def test_unused_noqa_is_off_by_default_and_names_only_trllints_stale_codes(project, capsys):
    (project / "train.py").write_text(NOQA_SCRIPT)
    code, out, _ = run(capsys, "train.py")
    assert code == 0 and "TRL100" not in out  # the default selection leaves it out, as Ruff's RUF100

    code, out, _ = run(capsys, "--extend-select", "TRL100", "train.py")
    rows = [line for line in out.splitlines() if "TRL100" in line]
    assert code == 1
    # Line 11: nothing there is a TRL004; line 15: TRL001 stale, E501 another tool's; line 18: a
    # misspelt code. Line 14's code silences a real finding, line 16's text is a string, line
    # 17's bare noqa is not trllint's to judge.
    assert [row.split(":")[1] for row in rows] == ["11", "15", "18"]
    assert "reported as TRL004" in rows[0] and "reported as TRL001" in rows[1] and "E501" not in rows[1]
    assert "no rule has the code TRL04" in rows[2]


def test_unused_noqa_fix_removes_the_stale_codes_and_keeps_the_rest(project, capsys):
    (project / "train.py").write_text(NOQA_SCRIPT)
    code, _, _ = run(capsys, "--extend-select", "TRL100", "--fix", "train.py")
    fixed = (project / "train.py").read_text()
    assert "        accelerator.backward(loss)\n" in fixed
    assert '        print("step done")  # noqa: E501\n' in fixed
    assert "        accelerator.print(note)  # type: ignore\n" in fixed
    assert "accelerator.log({\"accuracy\": accuracy.item()})  # noqa: TRL004" in fixed  # in use
    assert 'note = "# noqa: TRL002"' in fixed and "accelerator.log({\"lr\": 1e-3})  # noqa\n" in fixed
    assert code == 0
    assert run(capsys, "--extend-select", "TRL100", "train.py")[0] == 0


def test_unused_noqa_reports_codes_of_rules_the_run_did_not_enable_as_ruff_does(project, capsys):
    (project / "train.py").write_text(NOQA_SCRIPT)
    # TRL004 not selected: its codes silence nothing in this run (Ruff's "non-enabled").
    code, out, _ = run(capsys, "--select", "TRL001,TRL100", "train.py")
    rows = {int(line.split(":")[1]): line for line in out.splitlines() if "TRL100" in line}
    assert sorted(rows) == [11, 14, 15, 18]
    assert "TRL004 is not enabled for this file" in rows[11] and "reported as" not in rows[11]
    assert "TRL004 is not enabled for this file" in rows[14]
    assert "reported as TRL001" in rows[15] and "no rule has the code TRL04" in rows[18]
    # Switched off for the file: the same.
    (project / "trllint.toml").write_text('extend-select = ["TRL100"]\n[per-file-ignores]\n"train.py" = ["TRL004"]\n')
    code, out, _ = run(capsys, "train.py")
    rows = {int(line.split(":")[1]): line for line in out.splitlines() if "TRL100" in line}
    assert sorted(rows) == [11, 14, 15, 18] and "TRL004 is not enabled for this file" in rows[14]


def test_unused_noqa_fix_removes_codes_of_rules_not_enabled(project, capsys):
    (project / "train.py").write_text(NOQA_SCRIPT)
    code, _, _ = run(capsys, "--select", "TRL001,TRL100", "--fix", "train.py")
    fixed = (project / "train.py").read_text()
    assert "        accelerator.backward(loss)\n" in fixed
    assert '        accelerator.log({"accuracy": accuracy.item()})\n' in fixed
    assert '        print("step done")  # noqa: E501\n' in fixed
    assert code == 0


def test_a_file_level_noqa_exempts_the_file(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    assert run(capsys, "train.py")[0] == 1
    text = MIXED_SAFETY.read_text()
    (project / "train.py").write_text("# trllint: noqa\n" + text)
    code, out, _ = run(capsys, "train.py")
    assert code == 0 and "All checks passed!" in out
    (project / "train.py").write_text("# trllint: noqa: TRL001\n" + text)
    assert run(capsys, "train.py")[0] == 1  # another code's exemption leaves TRL004 reported
    (project / "train.py").write_text("# trllint: noqa: TRL004\n" + text)
    assert run(capsys, "train.py")[0] == 0
    # In a string it is no directive.
    (project / "train.py").write_text('HELP = """\n# trllint: noqa\n"""\n' + text)
    assert run(capsys, "train.py")[0] == 1


def test_ignore_noqa_reports_what_the_comments_silence(project, capsys):
    (project / "train.py").write_text(NOQA_SCRIPT)
    assert "TRL004" not in run(capsys, "train.py")[1]
    code, out, _ = run(capsys, "--ignore-noqa", "train.py")
    assert code == 1 and ":14:" in out and "TRL004" in out


# ---- point 9: the other flags -------------------------------------------------------------------


def test_show_files_lists_what_would_be_linted_and_honours_excludes(project, capsys):
    (project / "train.py").write_text("x = 1\n")
    (project / "vendor").mkdir()
    (project / "vendor" / "lib.py").write_text("y = 2\n")
    code, out, _ = run(capsys, "--show-files", ".")
    assert code == 0 and out.splitlines() == [str(project / "train.py"), str(project / "vendor" / "lib.py")]
    code, out, _ = run(capsys, "--show-files", "--extend-exclude", "vendor", ".")
    assert out.splitlines() == [str(project / "train.py")]
    code, out, _ = run(capsys, "--show-files", "--exclude", "train.py", ".")
    assert out.splitlines() == [str(project / "vendor" / "lib.py")]


def test_show_settings_prints_the_resolved_settings(project, capsys):
    (project / "trllint.toml").write_text('ignore = ["TRL005"]\npreview = true\nunfixable = ["TRL001"]\n')
    code, out, _ = run(capsys, "--show-settings", ".", preview=False)  # preview read from the file
    settings = dict(line.split(" = ", 1) for line in out.splitlines())
    assert code == 0
    assert settings["configuration"] == str(project / "trllint.toml")
    assert "TRL005" not in json.loads(settings["select (resolved)"]) and "TRL006" in json.loads(settings["select (resolved)"])
    assert settings["preview"] == "true" and json.loads(settings["unfixable (resolved)"]) == ["TRL001"]


def test_isolated_reads_no_configuration(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    (project / "trllint.toml").write_text('ignore = ["TRL004"]\n')
    assert run(capsys, "train.py")[0] == 0
    assert run(capsys, "--isolated", "train.py")[0] == 1
    code, _, err = run(capsys, "--isolated", "--config", "trllint.toml", "train.py")
    assert code == 2 and "--isolated" in err


def test_cache_dir_moves_the_cache(project, capsys, monkeypatch):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    assert main(["--preview", "--cache-dir", "elsewhere", "train.py"]) == 1
    capsys.readouterr()
    assert list((project / "elsewhere").glob("results-*.json")) and not (project / ".trllint_cache").exists()
    monkeypatch.setenv("TRLLINT_CACHE_DIR", str(project / "from-env"))
    assert main(["--preview", "train.py"]) == 1
    assert list((project / "from-env").glob("results-*.json"))


def test_per_file_ignores_on_the_command_line(project, capsys):
    (project / "tests").mkdir()
    shutil.copy(MIXED_SAFETY, project / "tests" / "test_train.py")
    assert run(capsys, ".")[0] == 1
    assert run(capsys, "--per-file-ignores", "tests/*:TRL004", ".")[0] == 0
    (project / "trllint.toml").write_text('[per-file-ignores]\n"tests/*" = ["TRL004"]\n')
    assert run(capsys, ".")[0] == 0
    # --per-file-ignores replaces the file's table; --extend-per-file-ignores adds to it.
    assert run(capsys, "--per-file-ignores", "nothing/*:TRL001", ".")[0] == 1
    assert run(capsys, "--extend-per-file-ignores", "nothing/*:TRL001", ".")[0] == 0
    code, _, err = run(capsys, "--per-file-ignores", "tests/*", ".")
    assert code == 2 and "GLOB:CODES" in err


def test_fix_only_fixes_and_does_not_fail_on_what_remains(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    code, out, _ = run(capsys, "--fix-only", "train.py")
    assert code == 0 and out == "Fixed 1 finding.\n"  # the two unsafe ones remain, unreported
    assert (project / "train.py").read_text() != MIXED_SAFETY.read_text()
    assert run(capsys, "train.py")[0] == 1


def test_fix_in_the_configuration_and_no_fix_on_the_command_line(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    (project / "trllint.toml").write_text("fix = true\n")
    run(capsys, "--no-fix", "train.py")
    assert (project / "train.py").read_text() == MIXED_SAFETY.read_text()
    code, out, _ = run(capsys, "train.py")
    assert "1 fixed" in out and (project / "train.py").read_text() != MIXED_SAFETY.read_text()


def test_show_fixes_lists_each_files_fixes_by_code(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    code, out, _ = run(capsys, "--fix", "--show-fixes", "train.py")
    assert out.endswith("Fixed 1 finding:\n- train.py:\n    1 × TRL004 (ungathered-metric)\n")


def test_fixable_and_unfixable_drop_the_fixes_of_the_codes_they_leave_out(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    code, out, _ = run(capsys, "--unfixable", "TRL004", "train.py")
    assert "[*]" not in out and "fixable" not in out.splitlines()[-1]
    run(capsys, "--unfixable", "TRL004", "--fix", "train.py")
    assert (project / "train.py").read_text() == MIXED_SAFETY.read_text()
    (project / "trllint.toml").write_text('fixable = ["TRL001"]\n')
    run(capsys, "--fix", "train.py")
    assert (project / "train.py").read_text() == MIXED_SAFETY.read_text()
    run(capsys, "--fix", "--extend-fixable", "TRL004", "train.py")
    assert (project / "train.py").read_text() != MIXED_SAFETY.read_text()
    code, _, err = run(capsys, "--unfixable", "TRL77", "train.py")
    assert code == 2 and "TRL77" in err


def test_color_always_and_never(project, capsys, monkeypatch):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    assert "\033[" in run(capsys, "--color", "always", "train.py")[1]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\033[" not in run(capsys, "--color", "never", "train.py")[1]
    assert "\033[" in run(capsys, "train.py")[1]  # auto: FORCE_COLOR, as Ruff honours it


def test_verbose_says_the_configuration_rules_and_files(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    (project / "trllint.toml").write_text('select = ["TRL004"]\n')
    _, _, err = run(capsys, "-v", "train.py")
    assert f"configuration: {project / 'trllint.toml'}" in err
    assert "rules: TRL004\n" in err and "1 file to lint" in err and "done in" in err
    assert run(capsys, "train.py")[2] == ""  # without -v: nothing of it


# ---- point 6: what the summary promises is what --fix does ---------------------------------------


def test_the_summary_counts_the_unsafe_fixes_apart(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    # TRL004 alone: with preview on, TRL006 (also preview) reports the gathers that the two unsafe
    # fixes leave under their rank tests, which is why those fixes are unsafe.
    _, out, _ = run(capsys, "--select", "TRL004", "train.py")
    assert out.splitlines()[-1] == "Found 3 findings (1 fixable with --fix; 2 more with --unsafe-fixes)."
    _, out, _ = run(capsys, "--select", "TRL004", "--fix", "--unsafe-fixes", "train.py")
    assert out.splitlines()[-1] == "Found 3 findings (3 fixed, 0 remaining)."


def test_trl004s_message_proposes_what_its_fix_writes(project, capsys):
    shutil.copy(WHOLE_TENSOR, project / "train.py")
    _, out, _ = run(capsys, "--unsafe-fixes", "train.py")
    [row] = [line for line in out.splitlines() if "is a whole tensor" in line]
    assert "gather_for_metrics(x).mean()" in row and "gather(x.mean())" not in row
    run(capsys, "--fix", "--unsafe-fixes", "train.py")
    assert "gather_for_metrics(" in (project / "train.py").read_text()


# ---- point 7: --statistics and --diff in every format -----------------------------------------------


def test_statistics_in_json_and_a_clear_error_where_a_format_has_no_place(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    code, out, _ = run(capsys, "--statistics", "--format", "json", "train.py")
    assert code == 1 and json.loads(out) == [{"code": "TRL004", "name": "ungathered-metric", "count": 3, "fixable": True}]
    for fmt in ("sarif", "github"):
        code, out, err = run(capsys, "--statistics", "--format", fmt, "train.py")
        assert code == 2 and out == "" and "--statistics" in err


def test_json_diff_is_one_json_document(project, capsys):
    shutil.copy(MIXED_SAFETY, project / "train.py")
    code, out, _ = run(capsys, "--diff", "--format", "json", "train.py")
    [changed] = json.loads(out)
    assert code == 1 and changed["filename"] == "train.py" and changed["diff"].startswith("--- train.py")
    assert changed["fixes"] == 1 and (project / "train.py").read_text() == MIXED_SAFETY.read_text()


# ---- point 12: a file past the size limit --------------------------------------------------------


def test_a_file_past_the_size_limit_is_a_warning_and_the_limit_is_a_setting(project, capsys):
    big = "".join(f"value_{i} = {i}\n" for i in range(140_000))  # 2.7 MB
    (project / "generated.py").write_text(big)
    shutil.copy(MIXED_SAFETY, project / "train.py")
    (project / "trllint.toml").write_text('ignore = ["TRL004"]\n')
    code, out, err = run(capsys, ".")
    assert code == 0 and "All checks passed!" in out
    assert "generated.py: not linted: 2.7 MB, over the 2 MB limit" in err and "max-file-size-mb" in err
    (project / "trllint.toml").write_text('ignore = ["TRL004"]\nmax-file-size-mb = 3\n')
    code, out, err = run(capsys, ".")
    assert code == 0 and "not linted" not in err
    (project / "trllint.toml").write_text('max-file-size-mb = "big"\n')
    code, _, err = run(capsys, ".")
    assert code == 2 and "max-file-size-mb" in err


def test_show_settings_shows_an_empty_selection_instead_of_refusing(project, capsys):
    # The run it describes would be a usage error (its ignore leaves no rule); the settings are
    # what a user asks for then, as Ruff shows them whatever the selection.
    (project / "trllint.toml").write_text('preview = false\nignore = ["TRL"]\n')
    code, out, _ = run(capsys, "--show-settings", ".", preview=False)
    settings = dict(line.split(" = ", 1) for line in out.splitlines())
    assert code == 0 and json.loads(settings["select (resolved)"]) == [] and settings["preview"] == "false"
    code, _, err = run(capsys, ".", preview=False)
    assert code == 2 and "no rule is selected: select and ignore leave none" in err
