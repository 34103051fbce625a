"""A notebook cell read as IPython reads it (trllint.engine.inputs.ipython_syntax): each line of
IPython syntax a placeholder in its place, prompts and common indentation cut, automagic for a
one-line cell. The rules used without IPython are checked case by case; where IPython is
installed, its own transformer must give the same lines, and the cell must be valid Python to
trllint exactly when IPython's transform of it compiles."""

from __future__ import annotations

import ast
import warnings

import pytest

from trllint.engine.inputs import ipython_syntax
from trllint.engine.inputs.ipython_syntax import PLACEHOLDER, cell_as_python

P = PLACEHOLDER

# cell -> (its Python, what is cut from each line), under the own rules; None: as it stands.
CASES: dict[str, tuple[str, list[str]] | None] = {
    # prefixed: line magics, shell escapes, help, autocall escapes
    "%matplotlib inline\nimport torch\n": (f"{P}\nimport torch\n", []),
    "%pip install accelerate\n!nvidia-smi\n": (f"{P}\n{P}\n", []),
    "!!ls\n": (f"{P}\n", []),
    "files = !ls -la\nprint(files)\n": (f"{P}\nprint(files)\n", []),
    "t = %timeit -o f()\n": (f"{P}\n", []),
    "model?\n": (f"{P}\n", []),
    "?model\n": (f"{P}\n", []),
    "model.config??\n": (f"{P}\n", []),
    "%time?\n": (f"{P}\n", []),
    ",f a b\n;f a b\n/f a b\n": (f"{P}\n{P}\n{P}\n", []),
    "for f in files:\n    !rm {f}\n": (f"for f in files:\n    {P}\n", []),
    "!pip install a \\\n    b\nimport a\n": (f"{P}\n{P}\nimport a\n", []),
    "%%time\n!date\ntrain()\n": (f"{P}\n{P}\ntrain()\n", []),
    "%%capture\npip install x\n": (f"{P}\n{P}\n", []),  # the body is a cell: automagic too
    # automagic: a one-line cell whose first word is a line magic or an alias
    "pip install accelerate transformers": (P, []),
    "cd ..\n": (f"{P}\n", []),
    "ls -la\n": (f"{P}\n", []),
    "conda install -y x": (P, []),
    "env": (P, []),
    "pwd\n": (f"{P}\n", []),
    "cat train.py": (P, []),
    "mkdir -p out": (P, []),
    "rm -rf out": (P, []),
    "  pip install x\n": (f"{P}\n", ["  "]),  # the indentation is cut first
    "\n\npip install x\n": (f"\n\n{P}\n", []),  # and leading blank lines dropped
    # not automagic: Python assignments to the name, a second line, names that are no magic
    "pip = 3\n": None,
    "ls = []\n": None,
    "ls, x = 1, 2\n": None,
    "ls.x\n": None,
    "# install\npip install x\n": None,
    "pip install x\n\n": None,
    "nvidia-smi\n": None,
    "which python\n": None,
    "print 1\n": None,
    "print(1)\n": None,
    # IPython syntax inside a string, a comment or brackets is not IPython syntax
    "s = '''\n%d items\n!x\n'''\n": None,
    "x = 1  # ?\n": None,
    "print('a?')\n": None,
    "x = (1,\n!ls)\n": None,
    "x == %y\n": None,
    "x += !ls\n": None,
    "a = b = %time x\n": None,
    "x = 5 %2\n": None,
    "# comment \\\n!ls\n": (f"# comment \\\n{P}\n", []),
    # cleanup: prompts and a common indentation are cut, columns move by what was cut
    ">>> import torch\n>>> x = torch.ones(1)\n": ("import torch\nx = torch.ones(1)\n", [">>> ", ">>> "]),
    ">>> from a import b\n\n >>> g = b()": ("from a import b\n\ng = b()", [">>> ", "", " >>> "]),
    "In [1]: x = 1\n   ...: y = 2\n": ("x = 1\ny = 2\n", ["In [1]: ", "   ...: "]),
    "  x = 1\n  if x:\n      y = 2\n": ("x = 1\nif x:\n    y = 2\n", ["  ", "  ", "  "]),
}

# Whole cells in another language: their lines are not Python at all.
CELL_MAGICS = {"%%bash\nls\n": "bash", "\n%%writefile train.py\nimport torch\n": "writefile", "  %%sh\n  ls\n": "sh"}


def _read(text: str):
    cell = cell_as_python(text)
    if cell.automagic:
        cell.run_automagic()  # no other cell binds the name
    return cell


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError:
        return False
    return True


@pytest.fixture
def own_rules():
    ipython_syntax.use_ipython(False)
    yield
    ipython_syntax.use_ipython(True)


@pytest.mark.parametrize("text", sorted(CASES), ids=repr)
def test_own_rules(own_rules, text):
    cell = _read(text)
    expected = CASES[text]
    python, cut = (text, []) if expected is None else expected
    assert "".join(cell.lines) == python
    assert len(cell.lines) == len(ipython_syntax.LINES.findall(text))  # every line keeps its place
    assert [c for c in cell.cut if c] == [c for c in cut if c]
    # each line is what was cut from it, then its Python (placeholders aside)
    for line, cut_part, original, is_magic in zip(cell.lines, cell.cut, ipython_syntax.LINES.findall(text), cell.magic):
        if not is_magic and line.strip():
            assert cut_part + line == original


@pytest.mark.parametrize("text", sorted(CELL_MAGICS), ids=repr)
def test_cell_magic_in_another_language_is_the_whole_cell(own_rules, text):
    assert _read(text).cell_magic == CELL_MAGICS[text]


def test_automagic_names_what_it_would_run(own_rules):
    assert cell_as_python("pip install x").automagic == "pip"
    assert cell_as_python("ls -la").automagic == "ls"
    assert cell_as_python("pip = 3").automagic is None
    assert cell_as_python("print x").automagic is None  # a builtin is never automagic
    assert cell_as_python("!pip install x").automagic is None  # already IPython syntax


# ---- against IPython itself, where it is installed --------------------------------------------


@pytest.fixture
def ipython():
    pytest.importorskip("IPython.core.inputtransformer2", reason="IPython is not installed: the own rules are tested alone")
    from IPython.core.interactiveshell import InteractiveShell

    ipython_syntax.use_ipython(True)
    assert ipython_syntax.ipython_rules() is not None
    return InteractiveShell.instance()


ALL_CELLS = sorted(CASES) + sorted(CELL_MAGICS) + [
    "x = a ? b\n", "print(x)?\n", "lambda: %time\n", "x = %%time\n", "import os; os?\n", "x = 'it''s'\n!echo it's\n",
    "%time x = 1\nfor i in y:\n    %time z\n", "d = {'a':\n 1}\n%time f()\n", "x = 1\\\n+ 2\n", "  x = 1\n    y = 2\n",
]


@pytest.mark.parametrize("text", ALL_CELLS, ids=repr)
def test_ipython_transformer_marks_the_same_lines(ipython, text):
    with_ipython = _read(text)
    ipython_syntax.use_ipython(False)
    try:
        without = _read(text)
    finally:
        ipython_syntax.use_ipython(True)
    assert (with_ipython.lines, with_ipython.cut, with_ipython.magic, with_ipython.cell_magic) == (
        without.lines, without.cut, without.magic, without.cell_magic
    )


@pytest.mark.parametrize("text", ALL_CELLS, ids=repr)
def test_valid_to_trllint_exactly_when_valid_to_ipython(ipython, text):
    cell = _read(text)
    ours = cell.cell_magic is not None or _compiles("".join(cell.lines))
    transformed = ipython.transform_cell(text)  # the kernel's own rewriting, automagic included
    assert ours == _compiles(transformed), transformed
