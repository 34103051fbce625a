"""Bad input: every case gives one clear line naming the path, never a traceback.

Usage and configuration errors exit 2; a problem with one file is reported for that file
(TRL000, or an error line) and the rest of the run goes on.
"""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path

import pytest

from tests.engine_rules import run_cli
from trllint.core.source import DEFAULT_MAX_FILE_BYTES as MAX_FILE_BYTES

GOOD = "x = 1\n"
GOOD_FIXED = "x = (1)\n"


def lines_naming(output: str, name: str) -> list[str]:
    return [line for line in output.splitlines() if name in line]


def assert_no_traceback(result) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


def test_syntax_error_is_trl000_and_the_other_files_are_linted(tree: Path):
    (tree / "broken.py").write_text("def f(:\n    return 1\n")
    result = run_cli("--no-cache", ".", cwd=tree)
    assert_no_traceback(result)
    assert result.returncode == 1
    [line] = lines_naming(result.stdout, "broken.py")
    assert line.startswith("broken.py:1:") and "TRL000" in line and "syntax error" in line
    assert lines_naming(result.stdout, "good.py:1:5: TRL901")
    fixed = run_cli("--fix", ".", cwd=tree)
    assert_no_traceback(fixed)
    assert (tree / "broken.py").read_text() == "def f(:\n    return 1\n"
    assert (tree / "good.py").read_text() == GOOD_FIXED


def test_latin1_file_with_coding_cookie_round_trips_byte_for_byte(tree: Path):
    original = "# -*- coding: latin-1 -*-\nname = 'café'  # é\nn = 5\n".encode("latin-1")
    (tree / "latin.py").write_bytes(original)
    (tree / "latin_untouched.py").write_bytes("# -*- coding: latin-1 -*-\nname = 'déjà'\n".encode("latin-1"))
    result = run_cli("--no-cache", "latin.py", "latin_untouched.py", cwd=tree)
    assert_no_traceback(result)
    assert lines_naming(result.stdout, "latin.py:3:5: TRL901")
    assert not lines_naming(result.stdout, "TRL000")
    run_cli("--fix", ".", cwd=tree)
    assert (tree / "latin.py").read_bytes() == original.replace(b"n = 5", b"n = (5)")
    assert (tree / "latin_untouched.py").read_bytes() == "# -*- coding: latin-1 -*-\nname = 'déjà'\n".encode("latin-1")


def test_fix_that_the_declared_encoding_cannot_hold_is_not_written(tmp_path: Path):
    # The test rule's "..." is ASCII; a rule writing "…" into a latin-1 file must not crash the run.
    from tests.engine_rules import register_only
    from trllint.engine.pipeline import Mode, process_bytes
    from trllint.rule.base import Rule
    from trllint.rule.ruleset import RuleSet

    class EllipsisCharacter(Rule):
        code, name, message, fixable = "TRL909", "test-unicode-fix", "pass (test)", "always"

        def visit_Pass(self, node):
            self.report(node, fix=self.fix(self.replace(node, __import__("libcst").parse_statement("x = '…'").body[0])))

    register_only([])
    data = "# coding: latin-1\ndef f():\n    pass\n".encode("latin-1")
    result, new = process_bytes(data, "l.py", "l.py", RuleSet([EllipsisCharacter]), Mode(fix=True))
    assert new is None
    assert any("cannot be written in the file's encoding iso-8859-1" in p for p in result.problems), result.problems
    assert [f.code for f in result.findings] == ["TRL909"]


def test_utf8_bom_is_kept_and_columns_ignore_it(tree: Path):
    (tree / "bom.py").write_bytes(codecs.BOM_UTF8 + b"z = 7\n")
    result = run_cli("--no-cache", "bom.py", cwd=tree)
    assert_no_traceback(result)
    assert lines_naming(result.stdout, "bom.py:1:5: TRL901")
    run_cli("--fix", "bom.py", cwd=tree)
    assert (tree / "bom.py").read_bytes() == codecs.BOM_UTF8 + b"z = (7)\n"


def test_crlf_and_mixed_line_endings_are_preserved_by_fix(tree: Path):
    (tree / "crlf.py").write_bytes(b"a = 1\r\nif a:\r\n    pass\r\n")
    (tree / "mixed.py").write_bytes(b"a = 1\r\nb = 2\nc = 3\r\rd = 4")
    result = run_cli("--fix", ".", cwd=tree)
    assert_no_traceback(result)
    assert (tree / "crlf.py").read_bytes() == b"a = (1)\r\nif a:\r\n    ...\r\n"
    assert (tree / "mixed.py").read_bytes() == b"a = (1)\r\nb = (2)\nc = (3)\r\rd = (4)"


def test_a_fix_that_writes_newlines_uses_the_files_own(tmp_path: Path):
    from trllint.engine.fix_loop import fix_source
    from trllint.rule.base import Edit, Rule
    from trllint.rule.ruleset import RuleSet
    from trllint.core.source import SourceFile

    class CommentAboveDef(Rule):
        code, name, message, fixable = "TRL908", "test-comment-above-def", "def (test)", "always"

        def visit_FunctionDef(self, node):
            line = self.get_metadata(__import__("libcst").metadata.PositionProvider, node).start.line
            if line == 1 or self.source.lines[line - 2] != "# twice":
                start = self.source.offset(line, 0)
                self.report(node, fix=self.fix(Edit(start, start, "# checked\n# twice\n")))

    source = SourceFile.from_bytes(b"x = 1\r\ndef f():\r\n    return x\r\n", "crlf.py")
    outcome = fix_source(source, "crlf.py", RuleSet([CommentAboveDef]), unsafe=False)
    assert outcome.problems == []
    assert source.to_bytes(outcome.text) == b"x = 1\r\n# checked\r\n# twice\r\ndef f():\r\n    return x\r\n"


def test_tabs_and_form_feeds_keep_fixes_on_the_right_characters(tree: Path):
    (tree / "tabs.py").write_bytes(b"if x:\n\ty = 1\n\tif y:\n\t\tz = [1,\t2]\n")
    # LibCST drops a form feed that starts a statement line; its columns there are short by one.
    (tree / "ff.py").write_bytes(b"x = 1\n\x0cy = 2\nif x:\n    pass\n\x0c    y = 3\n\x0c\n")
    result = run_cli("--fix", ".", cwd=tree)
    assert_no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tree / "tabs.py").read_bytes() == b"if x:\n\ty = (1)\n\tif y:\n\t\tz = [(1),\t(2)]\n"
    assert (tree / "ff.py").read_bytes() == b"x = (1)\n\x0cy = (2)\nif x:\n    ...\n\x0c    y = (3)\n\x0c\n"


def test_form_feed_lines_libcst_cannot_map_give_no_crash_and_no_fix(tree: Path):
    # Found by hypothesmith: LibCST renders this with another number of lines, so its positions
    # cannot be mapped onto the text; the finding stands, its fix is refused, nothing crashes.
    (tree / "ff_end.py").write_bytes(b"pass\x0c\n\n ")
    result = run_cli("--fix", "--no-cache", "ff_end.py", cwd=tree)
    assert_no_traceback(result)
    assert "please report it" not in result.stdout.replace("does not reproduce this file exactly; please report it", "")
    assert (tree / "ff_end.py").read_bytes() == b"pass\x0c\n\n "


def test_empty_file_is_clean_and_stays_empty(tree: Path):
    (tree / "empty.py").write_bytes(b"")
    result = run_cli("--no-cache", "empty.py", cwd=tree)
    assert_no_traceback(result)
    assert result.returncode == 0 and "All checks passed!" in result.stdout
    run_cli("--fix", "empty.py", cwd=tree)
    assert (tree / "empty.py").read_bytes() == b""


def test_five_megabyte_file_is_refused_quickly_and_the_run_goes_on(tree: Path):
    line = "value_{i} = compute({i}, 'padding padding padding padding')\n"
    text = "".join(line.format(i=i) for i in range(5 * 2**20 // len(line) + 1))
    assert len(text) > 5 * 2**20 > MAX_FILE_BYTES
    (tree / "huge.py").write_text(text)
    result = run_cli("--fix", ".", cwd=tree, timeout=120)
    assert_no_traceback(result)
    # A warning, not a finding: it fails no gate, and max-file-size-mb raises it.
    assert not lines_naming(result.stdout, "huge.py")
    [line_out] = lines_naming(result.stderr, "huge.py")
    assert re.search(r"warning: huge\.py: not linted: 5\.\d MB, over the 2 MB limit", line_out), line_out
    assert (tree / "huge.py").read_text() == text
    assert (tree / "good.py").read_text() == GOOD_FIXED


def test_file_just_under_the_limit_is_linted(tmp_path: Path):
    # The limit is on bytes read, so it applies to standard input too.
    from trllint.engine.pipeline import Mode, process_bytes
    from trllint.rule.ruleset import RuleSet

    big = b"# " + b"x" * (MAX_FILE_BYTES + 1) + b"\n"
    result, _ = process_bytes(big, "stdin.py", "stdin.py", RuleSet([]), Mode())
    assert result.findings == [] and result.warnings and "not linted" in result.warnings[0]
    small, _ = process_bytes(b"x = 1\n", "stdin.py", "stdin.py", RuleSet([]), Mode())
    assert small.findings == [] and small.warnings == []
    unlimited, _ = process_bytes(big, "stdin.py", "stdin.py", RuleSet([], max_file_bytes=0), Mode())
    assert unlimited.warnings == []


def test_binary_file_named_py_is_reported_and_left_alone(tree: Path):
    blob = bytes(range(256)) * 4
    (tree / "blob.py").write_bytes(blob)
    (tree / "notutf8.py").write_bytes(b"x = '\xff\xfe'\n")
    result = run_cli("--fix", ".", cwd=tree)
    assert_no_traceback(result)
    [blob_line] = lines_naming(result.stdout, "blob.py")
    assert "TRL000" in blob_line and "cannot decode" in blob_line
    [utf_line] = lines_naming(result.stdout, "notutf8.py")
    assert "TRL000" in utf_line and "not valid UTF-8" in utf_line
    assert (tree / "blob.py").read_bytes() == blob
    assert (tree / "good.py").read_text() == GOOD_FIXED


def test_folder_named_like_a_python_file(tree: Path):
    package = tree / "x.py"
    package.mkdir()
    (package / "inner.py").write_text(GOOD)
    walked = run_cli("--no-cache", ".", cwd=tree)
    assert_no_traceback(walked)
    assert walked.returncode == 1 and lines_naming(walked.stdout, "x.py/inner.py:1:5: TRL901")
    assert not walked.stderr
    named = run_cli("--no-cache", "x.py", cwd=tree)
    assert named.returncode == 1 and lines_naming(named.stdout, "x.py/inner.py:1:5")


def test_symlink_loops_neither_hang_nor_crash(tree: Path):
    (tree / "a.py").symlink_to(tree / "b.py")
    (tree / "b.py").symlink_to(tree / "a.py")
    (tree / "sub").mkdir()
    (tree / "sub" / "up").symlink_to(tree)  # a folder loop: walking must not follow it
    walked = run_cli("--no-cache", ".", cwd=tree, timeout=60)
    assert_no_traceback(walked)
    assert walked.returncode == 1
    assert lines_naming(walked.stdout, "good.py:1:5: TRL901")
    assert len(lines_naming(walked.stdout, "good.py")) == 1  # not found again through the loop
    for name in ("a.py", "b.py"):
        [line] = lines_naming(walked.stderr, f"{name}:")
        assert "Too many levels of symbolic links" in line
    named = run_cli("--no-cache", "a.py", "good.py", cwd=tree, timeout=60)
    assert named.returncode == 2
    assert lines_naming(named.stderr, "a.py: broken symbolic link or link loop")
    assert lines_naming(named.stdout, "good.py:1:5: TRL901")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file anyway; the simulated test below covers it")
def test_unreadable_file_real_permissions(tree: Path):
    secret = tree / "secret.py"
    secret.write_text(GOOD)
    secret.chmod(0)
    try:
        result = run_cli("--no-cache", ".", cwd=tree)
    finally:
        secret.chmod(0o644)
    assert_no_traceback(result)
    assert result.returncode == 1
    assert lines_naming(result.stderr, "secret.py: cannot read: Permission denied")
    assert lines_naming(result.stdout, "good.py:1:5")


def test_unreadable_file_simulated(tree: Path, monkeypatch, capsys):
    from tests.engine_rules import SOUND_FIXING_RULES, register_pack_and
    from trllint.app.cli import main

    (tree / "secret.py").write_text(GOOD)
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "secret.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.chdir(tree)
    register_pack_and(SOUND_FIXING_RULES)
    try:
        status = main(["--no-cache", "--jobs", "1", "--fix", "."])
    finally:
        register_pack_and(())
    out, err = capsys.readouterr()
    assert status == 1
    assert err.strip() == "trllint: error: secret.py: cannot read: Permission denied"
    assert (tree / "secret.py").read_text() == GOOD
    assert (tree / "good.py").read_text() == GOOD_FIXED


def test_path_that_does_not_exist_is_a_usage_error_and_the_rest_is_linted(tree: Path):
    result = run_cli("--no-cache", "nope.py", "good.py", cwd=tree)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.strip() == "trllint: error: nope.py: no such file or folder"
    assert lines_naming(result.stdout, "good.py:1:5: TRL901")


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('select = ["TRL4242"]\n', "unknown rule code or name 'TRL4242'"),
        ('select = "TRL901"\n', "'select' must be a list of strings"),
        ("ignore = [901]\n", "'ignore' must be a list of strings"),
        ('selec = ["TRL901"]\n', "unknown key 'selec'"),
        ('select = ["TRL901"\n', "invalid TOML"),
        ('select = ["\udcff"]\n', "invalid TOML"),
    ],
    ids=["unknown-code", "wrong-type", "wrong-item-type", "unknown-key", "broken-toml", "not-utf8"],
)
def test_bad_configuration_is_one_line_naming_the_file_and_exit_2(tree: Path, table: str, expected: str):
    (tree / "pyproject.toml").write_bytes(
        ("[tool.trllint]\n" + table).encode("utf-8", "surrogateescape")
    )
    result = run_cli("--no-cache", ".", cwd=tree)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"trllint: error: {tree / 'pyproject.toml'}: ") and expected in line, line


def test_internal_error_in_one_rule_on_one_file_is_trl999_and_everything_else_runs(tree: Path):
    (tree / "boom.py").write_text("explode = 1\nif explode:\n    pass\n")
    (tree / "other.py").write_text("explode_not = 2\n")
    result = run_cli("--no-cache", ".", cwd=tree, rules=("TRL901", "TRL902", "TRL998"))
    assert_no_traceback(result)
    assert result.returncode == 1
    [crash] = lines_naming(result.stdout, "TRL999")
    assert crash.startswith("boom.py:1:1: TRL999")
    assert "rule TRL998 (test-crashing-rule) failed on this file: ZeroDivisionError: the test rule blew up on purpose" in crash
    assert "engine_rules.py:" in crash  # the rule's own line, not LibCST's
    # The crashing rule's neighbours still report on the same file, and other files are linted.
    assert lines_naming(result.stdout, "boom.py:1:11: TRL901")
    assert lines_naming(result.stdout, "boom.py:3:5: TRL902")
    assert lines_naming(result.stdout, "good.py:1:5: TRL901")
    assert lines_naming(result.stdout, "other.py:1:15: TRL901")
    fixed = run_cli("--fix", ".", cwd=tree, rules=("TRL901", "TRL902", "TRL998"))
    assert (tree / "boom.py").read_text() == "explode = (1)\nif explode:\n    ...\n"
    assert lines_naming(fixed.stdout, "boom.py:1:1: TRL999")


def test_a_fix_that_breaks_the_file_is_not_written(tree: Path):
    original = "def f():\n    pass\n"
    (tree / "victim.py").write_text(original)
    result = run_cli("--fix", ".", cwd=tree, rules=("TRL901", "TRL997"))
    assert_no_traceback(result)
    assert (tree / "victim.py").read_text() == original
    [line] = lines_naming(result.stderr, "victim.py")
    assert "fixes for TRL997 were not applied: the fixed source would not parse" in line
    assert (tree / "good.py").read_text() == GOOD_FIXED
    assert result.returncode == 1


def test_deep_nesting_is_trl000_not_a_crash(tree: Path):
    # Past CPython's limits LibCST's native parser overflows the C stack (a segmentation fault
    # that would end the whole run) or runs for minutes.
    (tree / "parens.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    (tree / "unary.py").write_text("x = " + "-" * 30000 + "1\n")
    # CPython accepts this; LibCST parses it, and its own recursive visit would overflow, but
    # trllint's walk goes deeper: linted like any file, or at worst TRL000, never a crash.
    (tree / "lists.py").write_text("x = " + "[" * 150 + "]" * 150 + "\n")
    result = run_cli("--fix", ".", cwd=tree, timeout=120)
    assert_no_traceback(result)
    for name in ("parens.py", "unary.py"):
        [line] = lines_naming(result.stdout, name)
        assert "TRL000" in line, line
    assert all("TRL000" in line for line in lines_naming(result.stdout, "lists.py"))
    assert (tree / "good.py").read_text() == GOOD_FIXED


def test_rule_with_an_out_of_range_edit_is_trl999_not_a_corrupt_file(tmp_path: Path):
    from trllint.engine.fix_loop import fix_source
    from trllint.rule.base import Edit, Rule
    from trllint.rule.ruleset import RuleSet
    from trllint.core.source import SourceFile

    class EditPastTheEnd(Rule):
        code, name, message, fixable = "TRL907", "test-bad-edit", "module (test)", "always"

        def visit_Module(self, node):
            end = len(self.source.text)
            self.report_at(1, 0, 1, 1, fix=self.fix(Edit(end + 5, end + 9, "oops")))

    source = SourceFile(text="x = 1\n", display_path="m.py")
    outcome = fix_source(source, "m.py", RuleSet([EditPastTheEnd]), unsafe=True)
    assert outcome.text == "x = 1\n"
    [finding] = outcome.findings
    assert finding.code == "TRL999" and "TRL907" in finding.message and "outside the file" in finding.message


def test_engine_failure_on_one_file_becomes_trl999_for_that_file(monkeypatch):
    from trllint.engine.pipeline import Mode, process_bytes
    from trllint.rule.ruleset import RuleSet

    def broken_fix_source(*args, **kwargs):
        raise KeyError("simulated engine bug")

    # pool imports fix_source when a run fixes, from trllint.engine.fix_loop.
    monkeypatch.setattr("trllint.engine.fix_loop.fix_source", broken_fix_source)
    result, new = process_bytes(b"x = 1\n", "f.py", "f.py", RuleSet([]), Mode(fix=True))
    assert new is None
    [finding] = result.findings
    assert finding.code == "TRL999" and finding.path == "f.py" and "KeyError: 'simulated engine bug'" in finding.message
