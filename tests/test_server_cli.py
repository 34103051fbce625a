"""`trllint server` without pygls, and the server's text arithmetic (no server process here)."""

from __future__ import annotations

import subprocess
import sys

from trllint.app.server.documents import changed_spans, position_at, split_lines

WITHOUT_PYGLS = (
    "import sys\n"
    "for name in ('pygls', 'pygls.lsp', 'pygls.lsp.server', 'pygls.uris', 'lsprotocol', 'lsprotocol.types'):\n"
    "    sys.modules[name] = None  # import fails as if it were not installed\n"
    "from trllint.app.cli import main\n"
    "sys.exit(main(['server']))\n"
)


def test_server_without_pygls_says_what_to_install_and_exits_2():
    done = subprocess.run([sys.executable, "-c", WITHOUT_PYGLS], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 2
    assert done.stderr == "trllint server needs pygls: pip install 'trllint[server]'\n"
    assert done.stdout == ""


def test_check_server_still_lints_a_folder_named_server(tmp_path, monkeypatch, cli):
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "app.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--preview", "server")  # every rule is preview
    assert result.code == 0 and "All checks passed" in result.out


def test_changed_spans_cover_only_what_changed():
    old = "a = 1\nb = model.config\nc = 3\nd = model.config\n"
    new = "a = 1\nb = unwrap(model).config\nc = 3\nd = unwrap(model).config\n"
    spans = changed_spans(old, new)
    assert spans == [(10, 15, "unwrap(model)"), (33, 38, "unwrap(model)")]
    text = old
    for start, end, content in reversed(spans):
        text = text[:start] + content + text[end:]
    assert text == new
    assert changed_spans(old, old) == []
    # a line added at the end, and one taken away
    assert changed_spans("x\n", "x\ny\n") == [(2, 2, "y\n")]
    assert changed_spans("x\ny\n", "x\n") == [(2, 4, "")]


def test_positions_count_lines_as_lsp_does():
    text = "a\r\nbc\rd\x0ce\n"  # a form feed is no line break
    lines = split_lines(text)
    assert lines == ["a\r\n", "bc\r", "d\x0ce\n"]
    assert position_at(lines, 0) == (0, 0)
    assert position_at(lines, 3) == (1, 0)
    assert position_at(lines, 5) == (1, 2)
    assert position_at(lines, 8) == (2, 2)
    assert position_at(lines, len(text)) == (3, 0)  # after the last line break
    assert position_at(split_lines("ab"), 2) == (0, 2)
