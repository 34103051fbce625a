"""``--add-noqa`` and ``-`` for standard input, through the CLI with the test rules of
tests/engine_rules.py (TST001: print, fixable; TST002: assert; TST005: requirements files)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("engine_rules")


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---- standard input -----------------------------------------------------------------------


def test_dash_reads_standard_input_as_python(cli):
    result = cli("-", stdin=b"print(1)\n")
    assert result.code == 1 and result.out.startswith("-:1:1: TST001")


def test_dash_with_stdin_filename_lints_as_that_file(cli):
    result = cli("--stdin-filename", "src/train.py", "-", stdin=b"print(1)\n")
    assert result.code == 1 and "src/train.py:1:1: TST001" in result.out
    fixed = cli("--fix", "-", stdin=b"print(1)\nassert x\n")
    assert fixed.out == "log(1)\nassert x\n" and "TST002" in fixed.err


def test_dash_beside_another_path_is_a_usage_error(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    for args in (("-", "a.py"), ("--stdin-filename", "x.py", "a.py"), ("-", "-")):
        result = cli(*args, stdin=b"")
        assert result.code == 2 and "give no other PATH" in result.err


def test_a_file_named_dash_is_not_confused_with_standard_input(cli, tmp_path):
    (tmp_path / "-").write_text("print('from the file')\n")
    result = cli("-", stdin=b"x = 1\n")
    assert result.code == 0 and result.out == "All checks passed!\n"  # standard input, as in Ruff


# ---- --add-noqa ---------------------------------------------------------------------------


def test_add_noqa_appends_merges_and_keeps_other_comments(cli, tmp_path):
    path = tmp_path / "train.py"
    path.write_text(
        "print(1)\n"
        "assert ok  # noqa: TST001\n"
        "print('# noqa: TST009')\n"
        "print(2)  # the loss, per rank\n"
        "x = 1\n",
        encoding="utf-8",
    )
    result = cli("--no-cache", "--add-noqa", "train.py")
    assert result.code == 0, result.err
    assert "Added 4 noqa directives." in result.err
    assert path.read_text(encoding="utf-8") == (
        "print(1)  # noqa: TST001\n"
        "assert ok  # noqa: TST001, TST002\n"
        "print('# noqa: TST009')  # noqa: TST001\n"
        "print(2)  # the loss, per rank  # noqa: TST001\n"
        "x = 1\n"
    )
    # The comment ends the line: the `# noqa` inside the string before it is not the one read.
    assert "not silenced" not in result.err
    assert cli("--no-cache", "train.py").code == 0
    written = path.read_bytes()
    again = cli("--no-cache", "--add-noqa", "train.py")
    assert "Added 0 noqa directives." in again.err and path.read_bytes() == written


def test_add_noqa_keeps_crlf_line_breaks(cli, tmp_path):
    path = tmp_path / "win.py"
    path.write_bytes(b"print(1)\r\nx = 1\r\n")
    cli("--no-cache", "--add-noqa", "win.py")
    assert path.read_bytes() == b"print(1)  # noqa: TST001\r\nx = 1\r\n"


def test_add_noqa_skips_a_line_that_ends_inside_a_string_and_says_so(cli, tmp_path):
    path = tmp_path / "prompt.py"
    original = 'print("""first line\nsecond line""")\nx = 1 + \\\n    2\nassert x\n'
    path.write_text(original, encoding="utf-8")
    result = cli("--no-cache", "--add-noqa", "prompt.py")
    assert result.code == 1
    assert "prompt.py:1:1: TST001 not silenced: its line ends inside a string literal" in result.err
    assert "Added 1 noqa directive." in result.err
    assert path.read_text(encoding="utf-8") == original.replace("assert x\n", "assert x  # noqa: TST002\n")
    compile(path.read_text(encoding="utf-8"), "prompt.py", "exec")


def test_add_noqa_in_a_requirements_file(cli, tmp_path):
    path = tmp_path / "requirements-dev.txt"
    path.write_text("torch\nvllm==0.6.3\n", encoding="utf-8")
    result = cli("--no-cache", "--add-noqa", ".")
    assert "Added 1 noqa directive." in result.err
    assert path.read_text(encoding="utf-8") == "torch\nvllm==0.6.3  # noqa: TST005\n"
    assert cli("--no-cache", ".").code == 0


def test_add_noqa_leaves_a_file_that_does_not_parse_alone(cli, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("print(1\n", encoding="utf-8")
    result = cli("--no-cache", "--add-noqa", "broken.py")
    assert result.code == 1 and "TRL000 not silenced" in result.err
    assert path.read_text(encoding="utf-8") == "print(1\n"


def test_add_noqa_that_cannot_write_reports_and_counts_nothing(cli, tmp_path, monkeypatch):
    import trllint.app.add_noqa as module
    from trllint.app.atomic_write import WriteError

    def refuse(path, data, *, expected_old):
        raise WriteError("the file is read-only; not written")

    monkeypatch.setattr(module, "write_atomically", refuse)
    path = tmp_path / "ro.py"
    path.write_text("print(1)\n", encoding="utf-8")
    result = cli("--no-cache", "--add-noqa", "ro.py")
    assert result.code == 1 and "ro.py: the file is read-only; not written" in result.err
    assert "Added 0 noqa directives." in result.err and path.read_text() == "print(1)\n"


@pytest.mark.parametrize("other", [("--fix",), ("--diff",), ("-",), ("--stdin-filename", "x.py")])
def test_add_noqa_refuses_to_combine(cli, other):
    result = cli("--add-noqa", *other, stdin=b"")
    assert result.code == 2 and "--add-noqa" in result.err


def test_add_noqa_writes_atomically_through_the_fix_writer(cli, tmp_path, monkeypatch):
    import trllint.app.add_noqa as module

    calls: list[Path] = []
    real = module.write_atomically

    def spy(path, data, *, expected_old):
        calls.append(Path(path))
        return real(path, data, expected_old=expected_old)

    monkeypatch.setattr(module, "write_atomically", spy)
    (tmp_path / "a.py").write_text("print(1)\n")
    (tmp_path / "clean.py").write_text("x = 1\n")
    cli("--no-cache", "--add-noqa", ".")
    assert [p.name for p in calls] == ["a.py"]
