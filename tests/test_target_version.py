"""The Python version the code must run on: ``target-version`` in [tool.trllint], else
the lowest version ``requires-python`` admits, else the running interpreter. Syntax newer than the
target is TRL000, naming the version; the file still parses, so the rules still read it. And
TRL000 itself can be explained, selected and ignored."""

from __future__ import annotations

import ast
import io
import json
import sys
import tokenize
from pathlib import Path

import pytest

from trllint.core.newer_syntax import pep701_reason
from trllint.core.target_version import TargetVersion, lowest_admitted, parse_target_version
from trllint.engine.lint import lint_source, read_source
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet

RUNNING = sys.version_info[:2]
PEP701 = 'names = {"k": 1}\nprint(f"{names["k"]}")\n'


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _trl000(text: str, target: tuple[int, int] | None, rules: list | None = None) -> list:
    ruleset = RuleSet(rules or [], target=TargetVersion(target, "a test") if target else None)
    return [f for f in lint_source(read_source(text.encode(), "x.py", "x.py"), "x.py", ruleset) if f.code == "TRL000"]


# ---- the target from the configuration ----------------------------------------------------------


@pytest.mark.parametrize(
    "value, version", [("py37", (3, 7)), ("py310", (3, 10)), ("py314", (3, 14)), ("py3", None), ("py36", None), ("3.10", None), ("py315", None)]
)
def test_target_version_spelling(value, version):
    assert parse_target_version(value) == version


@pytest.mark.parametrize(
    "specifier, version",
    [(">=3.10", (3, 10)), ("~=3.9.2", (3, 9)), (">3.9", (3, 9)), (">=3.8,!=3.8.*", (3, 9)), ("==3.11.*", (3, 11)),
     ("<3.12,>=3.9", (3, 9)), (">=3.6", (3, 7)), (">=2.7", (3, 7)), (">=4", None), ("<3", None)],
)
def test_requires_python_gives_the_lowest_version_it_admits(specifier, version):
    assert lowest_admitted(specifier) == version


def test_a_3_12_fstring_under_requires_python_3_10_is_trl000_naming_the_version(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.10"\n')
    (tmp_path / "train.py").write_text(PEP701)
    # --preview: every rule (all preview) reads the file the syntax check passes.
    result = cli("--no-cache", "--preview", "train.py")
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        "train.py:2:7: TRL000 syntax error: an f-string that reuses its quote character inside {} needs Python 3.12 "
        'or newer; the target is Python 3.10 (requires-python = ">=3.10")'
    )
    # The project that says 3.12 may use it, whatever Python runs trllint.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.12"\n')
    assert cli("--no-cache", "--preview", "train.py").out == "All checks passed!\n"


def test_target_version_comes_before_requires_python(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nrequires-python = ">=3.10"\n\n[tool.trllint]\ntarget-version = "py312"\n'
    )
    (tmp_path / "train.py").write_text(PEP701 + "match 1:\n    case _:\n        pass\n")
    assert cli("--no-cache", "--preview", "train.py").out == "All checks passed!\n"
    (tmp_path / "pyproject.toml").write_text('[tool.trllint]\ntarget-version = "py39"\n')
    out = cli("--no-cache", "--preview", "train.py").out
    assert "needs Python 3.12" in out and 'the target is Python 3.9 (target-version = "py39")' in out


def test_a_trllint_toml_takes_requires_python_from_the_pyproject_beside_it(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.9"\n')
    (tmp_path / "trllint.toml").write_text('preview = true\nselect = ["TRL001"]\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("match 1:\n    case _:\n        pass\n")
    out = cli("--no-cache", "src").out
    assert "src/a.py:1:1: TRL000 syntax error: a `match` statement needs Python 3.10 or newer" in out and 'requires-python = ">=3.9"' in out


def test_without_a_target_the_running_interpreter_is_the_target(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    assert cli("--no-cache", "--preview", "a.py").code == 0
    if RUNNING < (3, 12):
        (tmp_path / "b.py").write_text("type Batch = dict[str, int]\n")
        out = cli("--no-cache", "--preview", "b.py").out
        assert f"needs Python 3.12 or newer; the target is Python {RUNNING[0]}.{RUNNING[1]} (the Python running trllint" in out


@pytest.mark.parametrize(
    "text, message",
    [
        ('[tool.trllint]\ntarget-version = "3.10"\n', "'target-version' must be one of \"py37\" to \"py314\", got '3.10'"),
        ("[tool.trllint]\ntarget-version = 310\n", "'target-version' must be one of"),
        ('[project]\nrequires-python = "3.10+"\n', "'requires-python' is not a version specifier: '3.10+'"),
        ('[project]\nrequires-python = ">=4"\n', "admits no Python from 3.7 to 3.14; set target-version"),
    ],
)
def test_a_bad_target_is_one_line_and_exit_2(cli, tmp_path, text, message):
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "a.py").write_text("x = 1\n")
    result = cli("--no-cache", "a.py")
    assert result.code == 2 and message in result.err and len(result.err.splitlines()) == 1


# ---- what each target rejects ------------------------------------------------------------------

NEWER = {
    # text: (the version that accepts it, words of the message)
    "match x:\n    case 1:\n        pass\n": ((3, 10), "a `match` statement"),
    "try:\n    pass\nexcept* ValueError:\n    pass\n": ((3, 11), "`except*`"),
    "with (open(a) as b, open(c) as d):\n    pass\n": ((3, 9), "arenthesized context managers"),
    "@buttons[0].clicked.connect\ndef f():\n    pass\n": ((3, 9), "a decorator that is not a dotted name"),
    "def f(*args: *Ts):\n    pass\n": ((3, 11), "a star annotation"),
    "x = a[*b]\n": ((3, 11), "a star expression in a subscript"),
    "type Batch = dict[str, int]\n": ((3, 12), "ype"),
    "def first[T](items: list[T]) -> T:\n    return items[0]\n": ((3, 12), "ype parameter"),
    "def pick[T = int](value: T) -> T:\n    return value\n": ((3, 13), "ype parameter default"),
    PEP701: ((3, 12), "reuses its quote character"),
    'print(f"{"\\n".join(parts)}")\n': ((3, 12), "a backslash inside an f-string's {}"),
}


@pytest.mark.parametrize("text", sorted(NEWER), ids=repr)
@pytest.mark.parametrize("with_rules", [False, True], ids=["no-rule", "rule-pack"])
def test_syntax_newer_than_the_target_is_trl000_and_not_older(text, with_rules):
    version, words = NEWER[text]
    rules = [info.rule for info in all_rules().values()] if with_rules else None
    older = (version[0], version[1] - 1)
    found = _trl000(text, older, rules)
    assert len(found) == 1 and words in found[0].message and f"the target is Python {older[0]}.{older[1]}" in found[0].message
    assert _trl000(text, version, rules) == []
    assert _trl000(text, None, rules) == []  # no target: any version LibCST reads


def test_rules_still_read_a_file_with_newer_syntax_and_fix_it(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.10"\n')
    text = (
        "from accelerate import Accelerator\n\naccelerator = Accelerator()\n"
        "reference = accelerator.prepare_model(model, evaluation_mode=True)\n" + PEP701
    )
    (tmp_path / "train.py").write_text(text)
    # --preview: no launch of this project shows FSDP, so TRL002's finding is a preview one.
    findings = json.loads(cli("--no-cache", "--preview", "--format", "json", "train.py").out)
    assert [(f["code"], f["line"]) for f in findings] == [("TRL002", 4), ("TRL000", 6)]
    result = cli("--no-cache", "--preview", "--fix", "train.py")
    assert result.code == 1 and "1 fixed, 1 remaining" in result.out
    assert "evaluation_mode=True, device_placement=True" in (tmp_path / "train.py").read_text()


def test_a_real_error_is_still_trl000_under_every_target():
    for target in (None, (3, 8), RUNNING, (3, 14)):
        found = _trl000("def f(:\n    pass\n", target)
        assert [f.message for f in found] == ["syntax error: invalid syntax"], target


# ---- PEP 701 f-strings, on this interpreter ----------------------------------------------------

# All valid on Python 3.12; True where they are not before 3.12.
FSTRINGS = {
    'f"{x["a"]}"': True, "f'{x[\"a\"]}'": False, 'f"{\'\\n\'.join(x)}"': True, 'f"{x # c\n}"': True,
    'f"{x:\\n}"': False, 'f"{\'#\'}"': False, 'f"{x:#x}"': False, 'f"{x:{y:{z}}}"': True, 'f"{x:{y}}"': False,
    'f"""{x["a"]}"""': False, 'f"""{x["""a"""]}"""': True, 'f"{x!r:>{w}}"': False, 'f"{x=}"': False,
    'f"{f\'{x}\'}"': False, 'f"{f"{x}"}"': True, '"a" f"{x}"': False, '("a"\n f"{x["k"]}")': True,
    'f"{x}\\""': False, 'f"\\N{EM DASH} {x}"': False, 'rf"\\{x}"': False, 'f"{x != y}"': False,
    'f"{ {1: 2}[1] }"': False, "f'''{\n x\n}'''": False, "f'{\n x\n}'": True, 'f"{x:{\'\\n\'}}"': True,
    "f'{a[\"b\"]:>10}'": False, 'f"{x}" f"{y}"': False, 'f"{x!r}" f\'{y["k"]}\'': False,
}


@pytest.mark.parametrize("literal", sorted(FSTRINGS), ids=repr)
def test_pep701_fstrings_are_told_from_older_ones(literal):
    assert (pep701_reason(literal) is not None) == FSTRINGS[literal]
    if RUNNING < (3, 12):
        # This interpreter is the oracle: it rejects exactly the PEP 701 ones.
        try:
            compile(literal, "<f>", "eval")
        except SyntaxError:
            rejected = True
        else:
            rejected = False
        assert rejected == FSTRINGS[literal]


def test_no_fstring_of_an_installed_package_is_taken_for_pep701():
    # Real f-strings of libraries that support Python before 3.12: none may be flagged.
    import importlib.util

    spec = importlib.util.find_spec("libcst")
    assert spec is not None and spec.submodule_search_locations
    files = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.py"))
    seen = 0
    for path in files:
        for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if token.type == tokenize.STRING and "f" in token.string[:3].lower().split('"')[0].split("'")[0]:
                seen += 1
                assert pep701_reason(token.string) is None, (path, token.start, token.string)
    assert seen > 100 or RUNNING >= (3, 12)


def test_a_3_12_interpreter_finds_pep701_in_what_it_parsed():
    # Under 3.12+ CPython parses these: the check reads CPython's tree, positions included.
    if RUNNING < (3, 12):
        pytest.skip("CPython before 3.12 rejects PEP 701 f-strings itself (tested above)")
    tree = ast.parse(PEP701)
    from trllint.core.newer_syntax import newer_in_ast

    found = newer_in_ast(tree, PEP701, (3, 10), RUNNING)
    assert found is not None and (found.line, found.column, found.version) == (2, 7, (3, 12))


# ---- TRL000 as a code -----------------------------------------------------------------------------


def test_trl000_is_explained(cli):
    for spelling in ("TRL000", "trl000", "unreadable-or-invalid-source"):
        result = cli("--explain", spelling)
        assert result.code == 0 and result.out.startswith("# TRL000 unreadable-or-invalid-source\n")
        assert "## What it finds" in result.out and "target-version" in result.out


def _tree(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "broken.py").write_text("def g(:\n")
    (tmp_path / "train.py").write_text("print(model.config)\n")  # nothing for the rules: no finding


def _codes(cli, *args: str) -> tuple[int, list[tuple[str, str]]]:
    # --preview: the rules are all preview; TRL000 is reported beside a selection of them.
    result = cli("--no-cache", "--preview", "--format", "json", *args, ".")
    return result.code, sorted((f["path"], f["code"]) for f in json.loads(result.out or "[]"))


def test_trl000_is_reported_unless_ignored(cli, tmp_path):
    _tree(tmp_path)
    both = [("broken.py", "TRL000"), ("gen/broken.py", "TRL000")]
    assert _codes(cli) == (1, both)
    assert _codes(cli, "--select", "TRL001") == (1, both)  # a selection without it still reports it
    assert _codes(cli, "--select", "TRL000") == (1, both)  # the syntax check alone
    assert _codes(cli, "--ignore", "TRL000") == (0, [])
    assert _codes(cli, "--ignore", "unreadable-or-invalid-source") == (0, [])
    (tmp_path / "pyproject.toml").write_text('[tool.trllint.per-file-ignores]\n"gen/*" = ["TRL000"]\n')
    assert _codes(cli) == (1, [("broken.py", "TRL000")])
    (tmp_path / "pyproject.toml").write_text('[tool.trllint]\nignore = ["TRL000"]\n')
    assert _codes(cli) == (0, [])
    assert _codes(cli, "--select", "TRL000") == (1, both)  # a command-line --select starts afresh


def test_an_ignored_trl000_in_a_notebook_cell_still_lints_the_other_cells(cli, tmp_path):
    cells = [
        {"cell_type": "code", "source": "def f(:\n", "metadata": {}, "outputs": [], "execution_count": None},
        # A function notebook_launcher starts in two processes: the wrapped model is read there.
        {"cell_type": "code", "source": "from accelerate import Accelerator, notebook_launcher\ndef main():\n"
         "    accelerator = Accelerator()\n    model = accelerator.prepare(model)\n    print(model.config)\n"
         "notebook_launcher(main, num_processes=2)\n",
         "metadata": {}, "outputs": [], "execution_count": None},
    ]
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    lint = ("--no-cache", "--preview", "--format", "json")  # TRL001 is a preview rule
    assert [f["code"] for f in json.loads(cli(*lint, "nb.ipynb").out)] == ["TRL000", "TRL001"]
    assert [f["code"] for f in json.loads(cli(*lint, "--ignore", "TRL000", "nb.ipynb").out)] == ["TRL001"]


# Python 3.13's feature_version no longer rejects these for 3.8: the check reads the brackets.
WITH_STATEMENTS = {
    "with (open(a) as b, open(c) as d):\n    pass\n": True,
    "with (a as b):\n    pass\n": True,
    "with (\n    open(a) as b,\n    open(c) as d,\n):\n    pass\n": True,
    "async def f():\n    async with (a as b):\n        pass\n": True,
    "with (a) as b:\n    pass\n": False,  # a bracketed expression
    "with (a, b):\n    pass\n": False,  # a tuple, to Python 3.8
    "with a as b, c as d:\n    pass\n": False,
    "with (a) as b, (c) as d: pass\n": False,
}


@pytest.mark.parametrize("text", sorted(WITH_STATEMENTS), ids=repr)
def test_parenthesized_context_managers_need_3_9(text):
    from trllint.core.newer_syntax import newer_in_ast

    found = newer_in_ast(ast.parse(text), text, (3, 8), RUNNING)
    assert (found is not None and found.version == (3, 9)) == WITH_STATEMENTS[text]
