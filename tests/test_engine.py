"""The engine through the CLI, with the test rules of tests/engine_rules.py."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("engine_rules")


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---- exit codes and the syntax-error acceptance check ------------------------------------


def test_clean_file_exits_0(cli, tmp_path):
    write(tmp_path / "ok.py", "x = 1\n")
    result = cli("ok.py")
    assert result.code == 0
    assert "All checks passed!" in result.out


def test_syntax_error_is_trl000_and_other_files_still_linted(cli, tmp_path):
    write(tmp_path / "pkg" / "broken.py", "def f(:\n    pass\n")
    write(tmp_path / "pkg" / "good.py", "print('hi')\n")
    result = cli("pkg")
    assert result.code == 1
    assert "pkg/broken.py:1:" in result.out and "TRL000" in result.out
    assert "pkg/good.py:1:1: TST001" in result.out

    as_json = json.loads(cli("--format", "json", "--no-cache", "pkg").out)
    by_code = {f["code"]: f for f in as_json}
    assert set(by_code) == {"TRL000", "TST001"}
    for finding in as_json:
        for key in ("code", "name", "message", "path", "line", "column", "end_line", "end_column", "fix"):
            assert key in finding
    assert by_code["TRL000"]["fix"] is None
    fix = by_code["TST001"]["fix"]
    assert fix["applicability"] == "safe"
    assert fix["edits"] == [
        {"content": "log", "location": {"line": 1, "column": 1}, "end_location": {"line": 1, "column": 6}}
    ]
    assert (by_code["TST001"]["line"], by_code["TST001"]["column"]) == (1, 1)
    assert (by_code["TST001"]["end_line"], by_code["TST001"]["end_column"]) == (1, 12)


def test_syntax_error_reported_even_when_no_rule_could_match(cli, tmp_path):
    # No rule's prefilter matches, so LibCST never sees it; it is still a TRL000.
    write(tmp_path / "broken.py", "x = (\n")
    result = cli("broken.py")
    assert result.code == 1 and "TRL000" in result.out


def test_exit_zero(cli, tmp_path):
    write(tmp_path / "a.py", "print(1)\n")
    assert cli("--exit-zero", "a.py").code == 0


def test_missing_path_is_usage_error_but_others_are_linted(cli, tmp_path):
    write(tmp_path / "a.py", "print(1)\n")
    result = cli("a.py", "nope.py")
    assert result.code == 2
    assert "nope.py: no such file or folder" in result.err
    assert "a.py:1:1: TST001" in result.out


# ---- fixing ----------------------------------------------------------------------------


def test_fix_rewrites_and_exit_code_reflects_what_remains(cli, tmp_path):
    target = write(tmp_path / "a.py", "print(1)\nassert x\n")
    result = cli("--fix", "a.py")
    assert target.read_text() == "log(1)\nassert x\n"  # the unsafe fix waits for --unsafe-fixes
    assert result.code == 1, "an unfixed finding remains"
    assert "1 fixed, 1 remaining" in result.out
    result = cli("--fix", "--unsafe-fixes", "a.py")
    assert target.read_text() == "log(1)\ncheck(x)\n"
    assert result.code == 0


def test_fix_exits_0_when_everything_was_fixed(cli, tmp_path):
    target = write(tmp_path / "a.py", "print(1)\nprint(2)\n")
    result = cli("--fix", "a.py")
    assert result.code == 0
    assert target.read_text() == "log(1)\nlog(2)\n"


def test_overlapping_fixes_wait_for_the_next_round(cli, tmp_path):
    target = write(tmp_path / "a.py", "step(step(x))\n")
    cli("--fix", "--select", "TST003", "a.py")
    assert target.read_text() == "step(g(step(g(x))))\n"


def test_diff_prints_and_writes_nothing(cli, tmp_path):
    target = write(tmp_path / "a.py", "print(1)\n")
    result = cli("--diff", "a.py")
    assert result.code == 1
    assert "-print(1)\n+log(1)\n" in result.out
    assert target.read_text() == "print(1)\n"


def test_fix_that_breaks_syntax_is_never_written(cli, tmp_path):
    target = write(tmp_path / "a.py", "todo = 1\nprint(todo)\n")
    result = cli("--fix", "a.py")
    # The round with the bad edit is refused as a whole; the file keeps its last good text.
    assert target.read_text() == "todo = 1\nprint(todo)\n"
    assert "would not parse" in result.err and "a.py" in result.err
    assert result.code == 1


def test_fix_keeps_bom_crlf_encoding_and_permissions(cli, tmp_path):
    bom = write(tmp_path / "bom.py", b"\xef\xbb\xbfprint('\xc3\xa9')\r\nx = 1\r\n")
    latin = write(tmp_path / "latin.py", "# -*- coding: latin-1 -*-\nprint('é')\n".encode("latin-1"))
    os.chmod(latin, 0o751)
    result = cli("--fix", "bom.py", "latin.py")
    assert result.code == 0, result.out + result.err
    assert bom.read_bytes() == b"\xef\xbb\xbflog('\xc3\xa9')\r\nx = 1\r\n"
    assert latin.read_bytes() == "# -*- coding: latin-1 -*-\nlog('é')\n".encode("latin-1")
    assert stat.S_IMODE(latin.stat().st_mode) == 0o751
    assert not [p for p in tmp_path.iterdir() if "trllint-tmp" in p.name], "temporary file left behind"


def test_read_only_file_is_reported_and_others_still_fixed(cli, tmp_path):
    locked = write(tmp_path / "locked.py", "print(1)\n")
    other = write(tmp_path / "other.py", "print(2)\n")
    os.chmod(locked, 0o444)
    result = cli("--fix", "locked.py", "other.py")
    assert locked.read_text() == "print(1)\n"
    assert other.read_text() == "log(2)\n"
    assert "locked.py: the file is read-only; not written" in result.err
    assert result.code == 1
    assert "locked.py:1:1: TST001" in result.out, "the unfixed finding is still reported"


def test_file_vanishing_before_write_is_reported(cli, tmp_path, monkeypatch):
    gone = write(tmp_path / "gone.py", "print(1)\n")
    other = write(tmp_path / "other.py", "print(2)\n")
    from trllint.app.atomic_write import write_atomically as real

    def vanish_then_write(path, data, *, expected_old):
        if path.name == "gone.py":
            path.unlink()
        return real(path, data, expected_old=expected_old)

    # pool imports write_atomically when a run writes, from trllint.app.atomic_write.
    monkeypatch.setattr("trllint.app.atomic_write.write_atomically", vanish_then_write)
    result = cli("--fix", "--jobs", "1", "gone.py", "other.py")
    assert "gone.py: the file vanished before it could be written" in result.err
    assert not gone.exists()
    assert other.read_text() == "log(2)\n"
    assert result.code == 1


# ---- suppression, selection, configuration -----------------------------------------------


def test_noqa_forms(cli, tmp_path):
    write(
        tmp_path / "a.py",
        "print(1)  # noqa\n"
        "print(2)  # noqa: TST001\n"
        "print(3)  # noqa: TST002,TST001\n"
        "print(4)  # noqa: TST002\n"
        "print(5)\n",
    )
    result = cli("--format", "json", "a.py")
    assert sorted(f["line"] for f in json.loads(result.out)) == [4, 5]


def test_select_ignore_extend_select_and_names(cli, tmp_path):
    write(tmp_path / "a.py", "print(1)\nassert x\n")
    codes = lambda *a: {f["code"] for f in json.loads(cli("--format", "json", *a, "a.py").out)}  # noqa: E731
    assert codes() == {"TST001", "TST002"}
    assert codes("--select", "TST002") == {"TST002"}
    assert codes("--select", "print-call") == {"TST001"}
    assert codes("--ignore", "TST001") == {"TST002"}
    assert codes("--select", "TST001", "--extend-select", "TST002") == {"TST001", "TST002"}
    assert codes("--select", "TST") == {"TST001", "TST002"}


def test_unknown_selector_is_usage_error(cli, tmp_path):
    write(tmp_path / "a.py", "x = 1\n")
    result = cli("--select", "XYZ123", "a.py")
    assert result.code == 2
    assert "unknown rule code or name 'XYZ123'" in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('selec = ["TST001"]', "unknown key 'selec'"),
        ('select = "TST001"', "'select' must be a list of strings"),
        ('select = ["NOPE9"]', "unknown rule code or name 'NOPE9'"),
        ("check-function = 3", "'check-function' must be a string"),
        ('per-file-ignores = ["x"]', "'per-file-ignores' must be a table"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_configuration_is_one_line_and_exit_2(cli, tmp_path, table, message):
    write(tmp_path / "pyproject.toml", f"[tool.trllint]\n{table}\n")
    write(tmp_path / "a.py", "x = 1\n")
    result = cli("a.py")
    assert result.code == 2
    assert message in result.err
    assert "pyproject.toml" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert "Traceback" not in result.err


def test_configuration_select_settings_and_per_file_ignores(cli, tmp_path):
    write(
        tmp_path / "pyproject.toml",
        '[tool.trllint]\nselect = ["TST002"]\ncheck-function = "verify"\n'
        '[tool.trllint.per-file-ignores]\n"tests/*" = ["TST002"]\n',
    )
    src = write(tmp_path / "src" / "a.py", "print(1)\nassert x\n")
    write(tmp_path / "tests" / "t.py", "assert y\n")
    result = cli("--format", "json", ".")
    findings = json.loads(result.out)
    assert [(f["path"], f["code"]) for f in findings] == [("src/a.py", "TST002")]
    cli("--fix", "--unsafe-fixes", ".")
    assert src.read_text() == "print(1)\nverify(x)\n"


def test_cli_overrides_configuration(cli, tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.trllint]\nselect = ["TST002"]\n')
    write(tmp_path / "a.py", "print(1)\nassert x\n")
    findings = json.loads(cli("--format", "json", "--select", "TST001", "a.py").out)
    assert [f["code"] for f in findings] == ["TST001"]


def test_configuration_is_found_past_pyproject_files_of_other_tools(cli, tmp_path):
    # find_config parses only a pyproject.toml that can name trllint; a key with escaped letters
    # still can, and the table it names is the one the run uses.
    write(tmp_path / "pyproject.toml", '[tool."trl\\u006cint"]\nselect = ["TST002"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", "[tool.black]\nline-length = 100\n[project\n")  # broken, not ours
    write(tmp_path / "pkg" / "a.py", "print(1)\nassert x\n")
    findings = json.loads(cli("--format", "json", "pkg/a.py").out)
    assert [f["code"] for f in findings] == ["TST002"]


# ---- discovery ---------------------------------------------------------------------------


def test_discovery_skips_usual_folders_and_gitignored_files(cli, tmp_path):
    for folder in (".venv", "venv", "build", "dist", "__pycache__", ".tox", "node_modules", ".git"):
        write(tmp_path / folder / "x.py", "print(1)\n")
    write(tmp_path / "src" / "kept.py", "print(1)\n")
    write(tmp_path / "src" / "generated.py", "print(1)\n")
    write(tmp_path / ".gitignore", "generated.py\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = cli("--format", "json", ".")
    assert [f["path"] for f in json.loads(result.out)] == ["src/kept.py"]
    # A file named explicitly is always linted, ignored or not.
    result = cli("--format", "json", "src/generated.py", "build/x.py")
    assert sorted(f["path"] for f in json.loads(result.out)) == ["build/x.py", "src/generated.py"]


def test_exclude_and_extend_exclude(cli, tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.trllint]\nextend-exclude = ["legacy", "*_pb2.py"]\n')
    write(tmp_path / "legacy" / "old.py", "print(1)\n")
    write(tmp_path / "msg_pb2.py", "print(1)\n")
    write(tmp_path / "new.py", "print(1)\n")
    assert [f["path"] for f in json.loads(cli("--format", "json", ".").out)] == ["new.py"]


def test_non_python_files_reach_text_rules(cli, tmp_path):
    write(tmp_path / "requirements-dev.txt", "# tools\nvllm==0.7.1\n")
    write(tmp_path / "notes.txt", "x==1\n")
    result = cli("--format", "json", ".")
    assert [(f["path"], f["code"], f["line"]) for f in json.loads(result.out)] == [
        ("requirements-dev.txt", "TST005", 2)
    ]


def test_stdin_lint_and_fix(cli):
    result = cli("--stdin-filename", "train.py", stdin=b"print(1)\n")
    assert result.code == 1 and "train.py:1:1: TST001" in result.out
    result = cli("--fix", "--stdin-filename", "train.py", stdin=b"print(1)\nassert x\n")
    assert result.out == "log(1)\nassert x\n"
    assert "TST002" in result.err and result.code == 1


def test_parallel_jobs_give_the_same_findings(cli, tmp_path):
    for i in range(20):
        write(tmp_path / f"m{i:02d}.py", f"print({i})\nassert v{i}\n")
    one = cli("--format", "json", "--no-cache", "--jobs", "1", ".").out
    two = cli("--format", "json", "--no-cache", "--jobs", "2", ".").out
    assert json.loads(one) == json.loads(two)
    assert len(json.loads(one)) == 40


# ---- information -------------------------------------------------------------------------


def test_list_rules_and_explain(cli):
    listing = cli("--list-rules")
    assert listing.code == 0
    assert "TST001" in listing.out and "print-call" in listing.out
    explained = cli("--explain", "TST001")
    assert explained.code == 0 and "# Test rules" in explained.out
    assert cli("--explain", "print-call").out == explained.out
    unknown = cli("--explain", "TST999")
    assert unknown.code == 2 and "unknown rule" in unknown.err


def test_statistics(cli, tmp_path):
    write(tmp_path / "a.py", "print(1)\nprint(2)\nassert x\n")
    result = cli("--statistics", "a.py")
    lines = result.out.splitlines()
    assert lines[0].split() == ["2", "TST001", "[*]", "print-call"]
    assert lines[1].split() == ["1", "TST002", "assert-statement"]


def test_text_format_and_github_format(cli, tmp_path):
    write(tmp_path / "a.py", "x = 1\nprint(1)\n")
    text = cli("a.py").out
    assert text.splitlines()[0] == "a.py:2:1: TST001 [*] print() in training code; use log()"
    assert text.splitlines()[-1] == "Found 1 finding (1 fixable with --fix)."
    github = cli("--format", "github", "a.py").out
    assert github == (
        "::error file=a.py,line=2,col=1,endLine=2,endColumn=9,title=TST001::"
        "TST001 print() in training code; use log()\n"
    )
