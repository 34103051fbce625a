"""A question about one definition of a big module reads a slice of it, not all of it.

A fact declared ``per_definition`` (the rank flows' returns and in-place reductions) answers for
one function or class from the module cut down to what that definition can reach by name: its
imports and module-level code, the definitions it names, and theirs. The answer is, nearly always,
the one the whole module gives (see trllint.semantic.project.slices). Which of the two a definition is read from is the module's content's choice
(its slice under half of it), never the order of the questions.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from trllint.core.source import SourceFile
from trllint.facts.rank_flow import RETURNS_ACROSS_RANKS
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.file_view import project_view
from trllint.semantic.project.index import SLICES, ProjectIndex, use_cache_folder
from trllint.semantic.project.outline import outline_of
from trllint.semantic.project.slices import ModuleCutter, slice_of
from trllint.semantic.project.summaries import ModuleFact

UTILS = '''
"""Distributed helpers."""
import torch.distributed as dist
from torch import Tensor

SCALE = 2.0
WORLD = None
LABELS = ["loss", "accuracy"]


def setup():
    global WORLD
    WORLD = dist.get_world_size()


@torch.no_grad()
def _reduce(t):
    dist.all_reduce(t)
    return t / WORLD


def reduce_mean(t: Tensor) -> Tensor:
    return _reduce(t.clone()) * SCALE


class Meter:
    def mean(self, t):
        return reduce_mean(t)


def local_mean(t):
    return t.mean()


def unrelated(x):
    return x + 1
'''


def _cut(text: str, *roots: str) -> str:
    module_text = textwrap.dedent(text)
    cut = slice_of(module_text, outline_of(ast.parse(module_text)), roots)
    assert cut is not None
    return cut.text


def _defined(text: str) -> list[str]:
    module = cst.parse_module(text)
    return [s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]


def test_a_slice_keeps_what_the_definition_reaches_and_the_module_level_code_it_reads():
    text = _cut(UTILS, "reduce_mean")
    # Its callee; its caller (`Meter.mean`: a parameter is read as what the callers pass); and
    # `setup`, which binds the global WORLD the callee reads. Not the others.
    assert _defined(text) == ["setup", "_reduce", "reduce_mean", "Meter"]
    # Imports stay; module-level code stays where it binds a name the slice spells.
    assert "import torch.distributed as dist" in text and "SCALE = 2.0" in text and "WORLD = None" in text
    assert "LABELS" not in text and '"""Distributed helpers."""' not in text
    assert "@torch.no_grad()\ndef _reduce(t):" in text  # a definition's decorators come with it
    # A class comes whole, with what its methods name.
    assert _defined(_cut(UTILS, "Meter")) == ["setup", "_reduce", "reduce_mean", "Meter"]
    assert _defined(_cut(UTILS, "local_mean")) == ["setup", "local_mean"]


def test_a_name_in_a_comment_or_a_string_keeps_nothing_but_one_in_code_does():
    module = """
        def helper():
            pass


        def default():
            return 0


        def target(parser):
            # unlike helper(), this one does nothing
            parser.add_argument("--helper", help="see unrelated()")
            parser.add_argument("--level", default=1)
            return 'it\\'s ' + r"\\\\" + '''unrelated()''' + b"helper()"


        def formatted(x):
            return f"{x} and 'helper'" + "unrelated()"


        def unrelated():
            pass
        """
    # `default=` is a keyword argument's name, no function `default` (the flows read none there).
    # The comment and the strings keep neither `helper` nor `unrelated`.
    assert _defined(_cut(module, "target")) == ["target"]
    # An f-string is code: its text stays (its literal part too, which only keeps more).
    assert _defined(_cut(module, "formatted")) == ["helper", "formatted"]


@pytest.mark.parametrize(
    "statement",
    [
        # From Python 3.12 a replacement field may reuse its string's quote, or break a line.
        'print(f"{d["k"]} {td.all_reduce(t)}")\n',
        'pair = (f"{\n        d}", helper(t), "c")\n',
        'x = f"{\'}\'}{d["x"]}{helper(t)}"\n',  # a brace in a field's string, then the quote reused
        "x = f'{a!r:{width}}' + 'plain' + f'{b}}}' + t'{c}'\n",
    ],
)
def test_an_f_string_the_regex_cannot_pair_leaves_its_statement_whole(statement: str):
    from trllint.semantic.project.slices import _code

    code = _code(statement)
    if "td" in statement or "helper" in statement:
        assert code == statement  # read whole: no name is lost
    else:
        assert "plain" not in code and {"a", "width", "b", "c"} <= set(re.findall(r"\w+", code))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_line_continued_inside_a_string_hides_no_code(newline: str):
    module = newline.join(
        [
            "import torch.distributed as dist",
            "",
            "def helper(t):",
            "    dist.all_reduce(t)",
            "    return t",
            "",
            "def target(t):",
            "    pair = ('a\\",
            "b', helper(t), 'c')",
            "    return pair[1]",
            "",
        ]
    )
    cut = slice_of(module, outline_of(ast.parse(module)), ["target"])
    assert cut is not None and "def helper" in cut.text


def test_the_code_words_hold_every_name_cpython_reads_in_real_modules():
    """What the slices read a statement's names and calls from (its text, less comments and
    strings other than f-strings) misses no name or call CPython's parse finds there, on a sample
    of real modules: a slice can keep more than it needs, never less."""
    from tests.test_module_fact_gates import sample

    from trllint.semantic.project.slices import ModuleCutter, may_call, reads

    checked = 0
    for path in sample():
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        cutter = ModuleCutter(text, outline_of(tree))
        if not cutter.statements:
            continue
        assert len(cutter.statements) == len(tree.body)
        for i, statement in enumerate(tree.body):
            names, called = _names_and_calls(statement)
            assert names <= cutter.words[i], (path, statement.lineno, names - cutter.words[i])
            missed = {name for name in called if not may_call(cutter.code[i], name)}
            assert not missed, (path, statement.lineno, missed)
            looked_up, read, attributes_read = _flow_reads(statement)
            assert looked_up & cutter.callable <= cutter.looks_up(i), (path, statement.lineno)
            code = cutter.code[i]
            missed = {n for n in read & cutter.defining.keys() if not reads(code, n, attributes=False)}
            missed |= {n for n in attributes_read & cutter.defining.keys() if not reads(code, n, attributes=True)}
            assert not missed, (path, statement.lineno, missed)
            checked += 1
    assert checked > 1000


def _flow_reads(statement: ast.stmt) -> tuple[set[str], set[str], set[str]]:
    """What the rank flows read of ``statement`` by name (trllint.facts.rank_flow): the names it
    calls as ``f(...)`` or on ``self``/``cls`` (looked up), the names it reads as a value or a
    call site, and the attributes of other objects it reads but does not call (a method's name
    there is read as handed on)."""
    looked_up: set[str] = set()
    read: set[str] = set()
    attributes: set[str] = set()
    callees = {id(node.func) for node in ast.walk(statement) if isinstance(node, ast.Call)}
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                looked_up.add(func.id)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
                looked_up.add(func.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Load, ast.Del)):
            read.add(node.id)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                read.add(node.attr)
            elif id(node) not in callees:
                attributes.add(node.attr)
    return looked_up, read, attributes


def _names_and_calls(statement: ast.stmt) -> tuple[set[str], set[str]]:
    """Every identifier CPython's tree holds in ``statement`` (LibCST reads each as a ``Name``),
    and the names its calls call (``f(...)``, ``x.f(...)``)."""
    names: set[str] = set()
    called: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.alias):
            names.update(node.name.split("."))
            names.update([node.asname] if node.asname else [])
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            called.add(node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
    names.discard("*")
    return names, called


def test_another_definition_of_a_name_is_kept_only_once_the_flows_may_look_that_name_up():
    module = """
        class Dataset:
            def __init__(self, paths):
                super().__init__()
                self.paths = paths

            def forward(self, x):
                return x


        class Sampler:
            def __init__(self, n):
                self.n = n


        def make_scheduler(optimizer):
            class Dummy:
                def __init__(self, optimizer):
                    super().__init__()
                    self.optimizer = optimizer

            return Dummy(optimizer)


        def run(model, x):
            class Wrapper:
                def forward(self, x):
                    return self.forward(x)

            return model.forward(x)


        def predict(model, x):
            return model.forward(x)
        """
    # `super().__init__()` lands on no definition the flows read: the nested class's own
    # `__init__` is the only one needed.
    assert _defined(_cut(module, "make_scheduler")) == ["make_scheduler"]
    # `self.forward(x)` is looked up by its name: every `forward` of the module stays.
    assert _defined(_cut(module, "run")) == ["Dataset", "run"]
    # `model.forward(x)` is another object's method: the flows read no definition for it.
    assert _defined(_cut(module, "predict")) == ["predict"]
    # An asked class's own methods are looked up by their names: each other definition stays.
    assert _defined(_cut(module, "Sampler")) == ["Dataset", "Sampler", "make_scheduler"]


def test_a_class_is_kept_as_a_base_and_a_function_where_its_own_name_is_read():
    module = """
        import os


        class Base:
            def step(self, batch):
                return batch


        class Dataset(Base):
            pass


        class Unrelated:
            pass


        def exists(path):
            return path


        def default(value, fallback):
            return value


        def build(args, paths) -> Unrelated:
            dataset: Unrelated = Dataset()
            found = [p for p in paths if os.path.exists(p)]
            parser.add_argument("--x", default=1)
            return dataset, found, args.default


        def check(paths):
            return [exists(p) for p in paths]
        """
    # `Dataset` and `Unrelated` are named, not read as a base: the flows read no class there.
    # `os.path.exists`, `default=` and `args.default` are not this module's functions.
    assert _defined(_cut(module, "build")) == ["build"]
    # A class stays with its bases; a function with what it calls.
    assert _defined(_cut(module, "Dataset")) == ["Base", "Dataset"]
    assert _defined(_cut(module, "check")) == ["exists", "check"]
    # A function's callers are where it is called or handed on by its own name; a class's, its
    # subclasses (they call its methods on `self`).
    assert _defined(_cut(module, "exists")) == ["exists", "check"]
    assert _defined(_cut(module, "Base")) == ["Base", "Dataset"]


@pytest.mark.parametrize(
    "text",
    [
        "import os; x = 1\ndef f():\n    return x\n",  # two statements on one line
        "x = 1\rdef f():\r    return x\r",  # lone carriage returns: CPython and these lines may count apart
    ],
)
def test_a_module_that_cannot_be_cut_along_its_lines_is_not_cut(text: str):
    assert slice_of(text, outline_of(ast.parse(text)), ["f"]) is None


# ---- the project index: which questions read a slice -----------------------------------------

# The lines of each module text a fact was computed on, in order.
read: list[int] = []


def _returns(model: SemanticModel) -> dict[str, int]:
    read.append(len(model.source.text.splitlines()))
    return {s.name.value: len(s.params.params) for s in model.source.module.body if isinstance(s, cst.FunctionDef)}


PARAMETERS = ModuleFact("test.slice-parameters", 1, _returns, per_definition=True)
WHOLE_PARAMETERS = ModuleFact("test.whole-parameters", 1, _returns)

# One small function per name, and 60 lines of others between: a slice of one is a few lines.
BIG = "import os\n\n" + "".join(
    f"def {name}(a, b{', c' * (i % 2)}):\n    return os.sep\n\n\n" for i, name in enumerate(["first", "second", *[f"other{i}" for i in range(20)], "third"])
)


@pytest.fixture
def big_project(tmp_path: Path):
    read.clear()
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(BIG)
    (tmp_path / "train.py").write_text("from helpers import first, second, third\n")
    use_cache_folder(tmp_path / "cache")
    yield tmp_path
    use_cache_folder(None)


def _view(root: Path):
    source = SourceFile.from_bytes((root / "train.py").read_bytes(), "train.py")
    source.path = root / "train.py"
    return project_view(SemanticModel.of(source))


def _ask(root: Path, name: str, fact: ModuleFact):
    view = _view(root)
    function = view.function(name)
    answer = view.fact(function, fact)
    return None if answer is None else answer.get(function.name)


def test_a_question_about_one_function_reads_a_slice_and_gets_the_whole_module_answer(big_project: Path):
    whole = len(BIG.splitlines())
    assert _ask(big_project, "first", PARAMETERS) == 2
    assert _ask(big_project, "second", PARAMETERS) == 3
    assert read and all(lines < whole / 10 for lines in read)  # two slices, each a few lines
    assert _ask(big_project, "first", WHOLE_PARAMETERS) == 2  # a fact not per definition: the whole module
    assert read[-1] == whole


def test_what_a_definition_is_read_from_does_not_depend_on_what_was_asked_before(big_project: Path):
    """Slice or whole is the module's content's choice: a file's findings are the same whichever
    files were linted before it in the same process, or with a warm cache."""
    view = _view(big_project)
    first = view.function("first")
    assert view.fact(first, WHOLE_PARAMETERS)["first"] == 2  # the file's other question parsed it whole
    assert view.fact(first, PARAMETERS) == {"first": 2}  # still its slice's answer, and only it
    assert read == [len(BIG.splitlines()), 3]
    view.release()


def test_a_sliced_answer_is_kept_on_disk_and_read_back_without_a_parse(big_project: Path, monkeypatch):
    assert _ask(big_project, "third", PARAMETERS) == 2
    [cache_file] = (big_project / "cache").rglob("*.json")
    assert json.loads(cache_file.read_text()) == {f"test.slice-parameters@1#{SLICES}:third": {"third": 2}}

    use_cache_folder(big_project / "cache")  # a new run: nothing in memory
    monkeypatch.setattr(ProjectIndex, "_answer", staticmethod(lambda *a, **k: pytest.fail("computed again")))
    assert _ask(big_project, "third", PARAMETERS) == 2


def _small_project(root: Path, helpers: str, names: str) -> None:
    """helpers.py beside train.py, which imports ``names`` from it; no cache."""
    read.clear()
    (root / "pyproject.toml").write_text("")
    (root / "helpers.py").write_text(helpers)
    (root / "train.py").write_text(f"from helpers import {names}\n")
    use_cache_folder(None)


def test_every_definition_whose_slice_is_small_is_read_from_its_slice(tmp_path: Path):
    # Three functions of a small module, two lines each of its ten: each slice is a fifth of it.
    helpers = "def first(a):\n    pass\n\n\ndef second(a, b):\n    pass\n\n\ndef third():\n    pass\n"
    _small_project(tmp_path, helpers, "first, second, third")
    assert [_ask(tmp_path, name, PARAMETERS) for name in ("first", "second", "third")] == [1, 2, 0]
    assert read == [2, 2, 2]


def test_a_new_version_of_a_fact_drops_the_answers_its_old_version_gave_per_definition(big_project: Path):
    assert _ask(big_project, "first", PARAMETERS) == 2
    bumped = ModuleFact("test.slice-parameters", 2, _returns, per_definition=True)
    try:
        use_cache_folder(big_project / "cache")
        assert _ask(big_project, "second", bumped) == 3
        [cache_file] = (big_project / "cache").rglob("*.json")
        assert set(json.loads(cache_file.read_text())) == {f"test.slice-parameters@2#{SLICES}:second"}
    finally:
        ModuleFact("test.slice-parameters", 1, _returns, per_definition=True)  # the declaration the other tests read


def test_the_rank_flows_of_a_slice_say_what_the_whole_module_says(tmp_path: Path):
    (tmp_path / "utils.py").write_text(UTILS)
    whole = ProjectIndex._answer(RETURNS_ACROSS_RANKS, SourceFile.from_bytes(UTILS.encode(), "utils.py"))
    assert whole is not None and whole["reduce_mean"][0] and "local_mean" not in whole
    outline = outline_of(ast.parse(UTILS))
    for name in ("reduce_mean", "Meter", "local_mean", "_reduce"):
        cut = slice_of(UTILS, outline, [name])
        assert cut is not None
        part = ProjectIndex._answer(RETURNS_ACROSS_RANKS, SourceFile.from_bytes(cut.text.encode(), "utils.py"))
        assert part is not None and {k: v for k, v in part.items() if k.split(".")[0] == name} == {
            k: v for k, v in whole.items() if k.split(".")[0] == name
        }


# What the rank flows' returns fact says of a module's asked definition.
RETURNS_CASES = [
    # A local computation: nothing global, and a value that is no call's result.
    ("import torch\n\ndef norm(t):\n    n = t.norm()\n    return n / 2\n", "norm", {}),
    # Returns only calls: of a library that computes locally, of a local callable, of a builtin.
    ("import torch\n\ndef norm(t):\n    return torch.norm(t)\n", "norm", {}),
    ("import torch.nn.functional as F\n\ndef act(t):\n    return F.relu(t)\n", "act", {}),
    ("def pick(table, k, x):\n    fn = table[k]\n    return fn(x)\n", "pick", {}),
    ("def size(x):\n    return len(x)\n", "size", {}),
    # ... of a function of the module, of a relative import, of one imported in a function.
    ("def inner(x):\n    return x\n\ndef outer(x):\n    return inner(x)\n", "outer", {}),
    ("from .metrics import score\n\ndef evaluate(x):\n    return score(x)\n", "evaluate", {"evaluate": [False, True]}),
    ("def fetch(x):\n    import wandb\n    return wandb.fetch(x)\n", "fetch", {}),
    # Only what a call of an unreadable library returns: unknown, which the fact says.
    ("import wandb\n\ndef fetch(x):\n    return wandb.fetch(x)\n", "fetch", {"fetch": [False, True]}),
    # An all-reduce in place, then the tensor: global.
    (
        "import torch.distributed as dist\n\ndef mean(t):\n    dist.all_reduce(t)\n    return t\n",
        "mean", {"mean": [True, False]},
    ),
    # A gather under a leading underscore is read as one.
    ("def mean(acc, t):\n    g = acc._gather(t)\n    return g.mean()\n", "mean", {"mean": [True, False]}),
    # A parameter that holds a value summed over the ranks.
    ("def scale(loss, num_items_in_batch):\n    return num_items_in_batch\n", "scale", {"scale": [True, False]}),
    # An asked class: its methods are asked too.
    (
        "import wandb\n\nclass Meter:\n    def read(self, x):\n        return wandb.fetch(x)\n",
        "Meter", {"Meter.read": [False, True]},
    ),
    ("class Meter:\n    def read(self, x):\n        if x:\n            return\n        return x.sum()\n", "Meter", {}),
    # A nested function's returns are its own, not the asked function's.
    ("import wandb\n\ndef outer(x):\n    def inner():\n        return wandb.fetch(x)\n    y = inner()\n    return y\n", "outer", {}),
]


@pytest.mark.parametrize(("text", "name", "answer"), RETURNS_CASES)
def test_the_rank_flows_returns_fact_answers_each_definition(text: str, name: str, answer: dict):
    module = text + "\n\ndef filler():\n" + "    pass\n" * 40
    whole = ProjectIndex._answer(RETURNS_ACROSS_RANKS, SourceFile.from_bytes(module.encode(), "utils.py"))
    assert whole is not None and {k: v for k, v in whole.items() if k.split(".")[0] == name} == answer


def test_a_slice_that_would_keep_half_of_the_module_or_more_gives_way_to_the_whole(tmp_path: Path):
    _small_project(tmp_path, "def first(a):\n    b = a\n    return b\n\n\ndef other(): pass\n", "first")
    use_cache_folder(tmp_path / "cache")
    assert _ask(tmp_path, "first", PARAMETERS) == 1
    assert read == [6]  # a 3-line slice of 6 lines saves too little: the whole module is read
    # and the choice is kept with the module's facts, so a warm run need not cut the module again
    [cache_file] = (tmp_path / "cache").rglob("*.json")
    assert json.loads(cache_file.read_text()) == {
        f"test.slice-parameters@1#{SLICES}:first": {"@whole": True},
        "test.slice-parameters@1": {"first": 1, "other": 0},
    }


def test_a_slice_that_cannot_be_read_gives_way_to_the_whole_module(big_project: Path, monkeypatch):
    answer = ProjectIndex._answer

    def slices_fail(fact, source, release=True):  # as a slice LibCST refuses, or too deep to read
        return None if source.text != BIG else answer(fact, source, release)

    monkeypatch.setattr(ProjectIndex, "_answer", staticmethod(slices_fail))
    assert _ask(big_project, "second", PARAMETERS) == 3
    assert read == [len(BIG.splitlines())]  # the whole module, read once


@pytest.mark.parametrize(
    ("code", "called"),
    [
        ("y = f(x)\n", True),
        ("y = obj.f (x)\n", True),
        ("y = (f)(x)\n", True),
        ("y = (obj.f\n     )(x)\n", True),
        ("y = f \\\n    (x)\n", True),
        ("def f(x):\n    return x\n", False),
        ("class f(Base):\n    pass\n", False),
        ("async def f(x):\n    return f(x - 1)\n", True),  # defines f, and calls it
        ("y = f_x(x) + xf(x)\n", False),
        ("y = f\n", False),
    ],
)
def test_a_call_is_a_name_then_a_bracket_but_not_a_definitions_name(code: str, called: bool):
    from trllint.semantic.project.slices import may_call

    assert may_call(code, "f") is called


@pytest.mark.parametrize(
    ("code", "looked_up"),
    [
        ("y = step(x)\n", True),
        ("y = (step)(x)\n", True),
        ("y = self.step(x)\n", True),
        ("y = (self).step (x)\n", True),
        ("y = obj.step(x)\n", False),
        ("y = super().step(x)\n", False),
        ("y = step\n", False),
        ("def step(x):\n    return x\n", False),
        ("step(x)\n", True),  # at the very start of the code
        ("y = é_step(x) + 2step(x) + _step(x) + steps(x)\n", False),  # a longer name: no call of step
        ("y = éstep(x)\n", False),  # a non-ASCII word character before it, as `re`'s `\\w` reads one
        ("y = steps(x) + step (x)\n", True),  # the second one
    ],
)
def test_a_definition_is_looked_up_by_a_call_of_its_name_or_on_self(code: str, looked_up: bool):
    from trllint.semantic.project.slices import may_look_up

    assert may_look_up(code, "step") is looked_up


@pytest.mark.parametrize(
    ("code", "read", "attribute_read"),
    [
        ("y = step(x)\n", True, True),
        ("y = self.step\n", True, True),
        ("y = (self).step(x)\n", True, True),
        ("y = cls \\\n    .step(x)\n", True, True),
        ("y = os.path.step(x)\n", False, False),  # another object's method, called
        ("y = super().step(x)\n", False, False),
        ("y = args.step\n", False, True),  # another object's attribute: a method's name is read
        ("g(step=1)\n", False, False),  # a keyword argument
        ("def g(step=1):\n    pass\n", False, False),  # a parameter's default
        ("a, step = 1, 2\n", False, False),  # a name assigned to
        ("x: step = 1\n", True, True),  # an annotation is read
        ("y = step == 1\n", True, True),
        ('print(f"{step=}")\n', True, True),  # an f-string's `=` reads the name
        ("def step(x):\n    return x\n", False, False),
        ("class step(Base):\n    pass\n", True, True),  # LibCST reads a class's name as a `Name`
        ("y = 1.\nstep(x)\n", True, True),  # a float's dot, then another line
        ("step\n", True, True),  # the whole code
        ("y = steps + stepé + _step + ústep + 1\n", False, False),  # longer names only
        ("y = stepstep + step\n", True, True),  # the name twice in a row, then alone
    ],
)
def test_a_name_is_read_where_the_flows_read_a_call_site_or_a_value(code: str, read: bool, attribute_read: bool):
    from trllint.semantic.project.slices import _code, reads

    assert reads(_code(code), "step", attributes=False) is read
    assert reads(_code(code), "step", attributes=True) is attribute_read


def test_a_slice_keeps_the_imports_of_the_names_it_spells_and_those_that_must_stay():
    text = _cut(
        """
        from __future__ import annotations

        import os
        import numpy as np
        import torch.distributed
        from helpers import *
        from .metrics import accuracy, recall as rc

        try:
            import deepspeed
        except ImportError:
            deepspeed = None

        if is_triton_available():
            from .kernels import fused_loss


        def target(t):
            torch.distributed.all_reduce(t)
            deepspeed.comm.barrier()
            return rc(t)
        """,
        "target",
    )
    kept = [line for line in text.splitlines() if "import" in line]
    # `torch`, `rc` and `deepspeed` are spelled; `os`, `np` and `fused_loss` are not. A `*` import
    # (whatever it binds) and a `__future__` one stay whatever the slice spells; an import inside
    # module-level code stays, with that code, as a top-level import does: when the slice spells
    # a word of it.
    assert kept == [
        "from __future__ import annotations",
        "import torch.distributed",
        "from helpers import *",
        "from .metrics import accuracy, recall as rc",
        "    import deepspeed",
    ]
    assert "except ImportError:" in text
    assert "is_triton_available" not in text


# Modules where a slice once answered otherwise than its whole module (found in review): each
# asked definition's answer from its slice must be the whole module's.
# What several share: a method, and a function, that return a reduced value when their one
# caller reduces what it hands them.
_TRAINER = """
import torch.distributed as dist


class Trainer:
    def finalize(self, loss):
        return loss

    def step(self, loss):
        dist.all_reduce(loss)
        return self.finalize(loss)
"""
_FINALIZE = """
import torch.distributed as dist


def finalize(loss):
    return loss


def step(loss):
    dist.all_reduce(loss)
    return finalize(loss)
"""

DIFFERED = {
    "an import hands on a method's name": (
        _TRAINER.replace(
            "import torch.distributed as dist\n",
            "import torch.distributed as dist\nfrom .losses import finalize as base_finalize\n\n\n"
            "def legacy(batch):\n    return base_finalize(batch)\n",
        ),
        "Trainer",
    ),
    "a class defined twice": (
        """
        import torch.distributed as dist


        class A:
            def summary(self, t):
                return dist.all_gather(t)


        class C:
            def summary(self, t):
                return t


        class A:
            def fresh(self, t):
                return t
        """,
        "A",
    ),
    "a call of a `self` attribute another class stores": (
        """
        class Loader:
            def __init__(self, reward_fn):
                self.reward_fn = reward_fn


        class Scorer:
            def score(self, x):
                return self.reward_fn(x)
        """,
        "Scorer",
    ),
    "a method read as a value on another object": (
        _TRAINER + "\n\ndef make_callbacks(trainer):\n    return [trainer.finalize]\n",
        "Trainer",
    ),
    "a method called on `cls` in another class": (
        _TRAINER + "\n\nclass Logger:\n    @classmethod\n    def report(cls, loss):\n        return cls.finalize(loss)\n",
        "Trainer",
    ),
    "a function in an annotation before `=`": (_FINALIZE + "\n\nhook: None | finalize = None\n", "finalize"),
    "a function's name as a class pattern's keyword": (
        _FINALIZE + "\n\ndef dispatch(event):\n    match event:\n        case Event(finalize=True):\n            return 1\n",
        "finalize",
    ),
}


@pytest.mark.parametrize("case", sorted(DIFFERED))
def test_a_slice_answers_as_its_whole_module_where_one_once_differed(case: str):
    text, name = DIFFERED[case]
    module = textwrap.dedent(text)
    whole = ProjectIndex._answer(RETURNS_ACROSS_RANKS, SourceFile.from_bytes(module.encode(), "m.py"))
    cut = slice_of(module, outline_of(ast.parse(module)), [name])
    assert whole is not None and cut is not None
    part = ProjectIndex._answer(RETURNS_ACROSS_RANKS, SourceFile.from_bytes(cut.text.encode(), "m.py"))
    own = lambda answer: {k: v for k, v in answer.items() if k.split(".")[0] == name}  # noqa: E731
    assert part is not None and own(part) == own(whole)


def test_a_name_is_looked_up_whether_its_call_or_its_definition_is_kept_first():
    # `Target.target` calls `step` by its name: every `step` of the module stays, the one kept
    # first (in B, its base) and the one kept after (C).
    calls_first = """
        class B:
            def step(self):
                return 1


        class Target(B):
            def target(self, x):
                return self.step()


        class C:
            def step(self):
                return 2
        """
    assert _defined(_cut(calls_first, "Target")) == ["B", "Target", "C"]
    # A's nested `step` is kept with A; `helper`, which A reaches, calls `step` after.
    defined_first = """
        class A:
            def run(self, x):
                def step():
                    return 0

                return helper(x)


        def helper(x):
            return step(x)


        class C:
            def step(self):
                return 2
        """
    assert _defined(_cut(defined_first, "A")) == ["A", "helper", "C"]


def test_a_slices_definitions_come_from_the_kept_tree_as_a_parse_of_their_text_gives_them():
    # The index hands the cutter the module's tree while it keeps it: a proof then reads the
    # asked definitions from it instead of parsing their text again. The nodes must be the same
    # statements, in the same order, as a parse of the slice's definitions gives.
    module = textwrap.dedent(
        """
        import torch

        SCALE = 2


        def helper(x):
            return x * SCALE


        class Trainer:
            def step(self, batch):
                return helper(batch)

            def log(self, value):
                return torch.tensor(value)


        def unrelated():
            return 3
        """
    )
    tree = ast.parse(module)
    asked_for: list[int] = []

    def kept_tree():
        asked_for.append(1)
        return tree

    with_tree = ModuleCutter(module, outline_of(tree), kept_tree).slice(["Trainer"])
    from_text = ModuleCutter(module, outline_of(ast.parse(module))).slice(["Trainer"])
    assert with_tree is not None and from_text is not None and with_tree == from_text
    kept, parsed = with_tree.definitions(), from_text.definitions()
    assert asked_for and kept is not None and parsed is not None
    assert [ast.dump(node) for node in kept] == [ast.dump(node) for node in parsed]
    assert [node.name for node in kept] == ["Trainer"] and kept[0] is tree.body[3]
    # The index no longer holding the tree: the text is parsed, as before.
    gone = ModuleCutter(module, outline_of(tree), lambda: None).slice(["helper"])
    assert gone is not None and [node.name for node in gone.definitions() or []] == ["helper"]
