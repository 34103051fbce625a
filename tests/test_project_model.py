"""The project index and the facts asked of its modules (trllint.semantic.project.index, .summaries).

Resolution is tested on small trees written here: src layout, scripts beside their helpers,
relative imports, re-exports through ``__init__.py``, a missing module, an import cycle, a
module reached under two names, and a 2,000-module tree. Each module fact the facts and rules
declare has its own case; the registry itself has its own tests (test_module_facts.py).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from trllint.semantic.project import fact_cache, modules as modules_module
from trllint.semantic.project import index as project_module
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.outline import ImportRef
from trllint.semantic.project.index import use_cache_folder
from trllint.semantic.project.modules import ProjectIndex
from trllint.semantic.project.resolution import project_root
from trllint.core.source import SourceFile
from trllint.facts.accelerators import ACCELERATOR_ATTRIBUTES
from trllint.facts.rank_flow import RETURNS_ACROSS_RANKS, ProjectReturns
from trllint.rules.trl001_wrapped_model_attribute.wrapped_models import SELF_ATTRIBUTES
from trllint.semantic.project.file_view import project_view
from trllint.rules.trl003_deepspeed_initialize_none.forwarding import FORWARDS_TO_DEEPSPEED
from trllint.rules.trl004_ungathered_metric.metric_buffers import REDUCES_STORED_METRICS


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def view_of(path: Path):
    source = SourceFile.from_bytes(path.read_bytes(), path.name)
    source.path = path
    return project_view(SemanticModel.of(source)), source


def returns(view, local_name: str) -> ProjectReturns | None:
    """What the project function ``local_name`` returns; None when it is none, or unreadable."""
    function = view.function(local_name)
    answer = None if function is None else view.fact(function, RETURNS_ACROSS_RANKS)
    return None if answer is None else ProjectReturns(*answer.get(function.name, ()))


def counting_parses(monkeypatch) -> list[Path]:
    parsed: list[Path] = []
    real = modules_module._parse
    monkeypatch.setattr(modules_module, "_parse", lambda path, data: parsed.append(path) or real(path, data))
    return parsed


@pytest.fixture(autouse=True)
def fresh_indexes():
    use_cache_folder(None)  # every test starts with no index and no disk cache
    yield
    use_cache_folder(None)


REDUCING_HELPER = """
    import torch.distributed as dist


    def get_all_reduce_mean(tensor):
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor / dist.get_world_size()


    def local_mean(tensor):
        return tensor.mean()
"""


# ---- the project root ------------------------------------------------------------------------


def test_root_is_the_nearest_marker(tmp_path: Path):
    write(tmp_path, {"pyproject.toml": "", "src/pkg/__init__.py": "", "src/pkg/train.py": ""})
    assert project_root(tmp_path / "src/pkg/train.py") == tmp_path.resolve()
    write(tmp_path, {"src/pkg/setup.py": ""})
    use_cache_folder(None)  # a new run (within one, the root of a folder is worked out once)
    assert project_root(tmp_path / "src/pkg/train.py") == (tmp_path / "src/pkg").resolve()


def test_root_without_marker_holds_the_top_package(tmp_path: Path):
    # An unpacked wheel: no pyproject, no .git; Python finds the package from its parent folder.
    write(tmp_path, {"site/trl/__init__.py": "", "site/trl/trainer/__init__.py": "", "site/trl/trainer/x.py": ""})
    assert project_root(tmp_path / "site/trl/trainer/x.py") == (tmp_path / "site").resolve()


def test_an_installed_package_inside_a_project_is_its_own_project(tmp_path: Path):
    # A virtual environment inside the project's tree: trl there is not the project's code, and
    # its imports never reach the transformers installed beside it.
    site = "proj/.venv/lib/python3.11/site-packages"
    write(tmp_path, {
        "proj/pyproject.toml": "",
        f"{site}/trl/__init__.py": "",
        f"{site}/trl/trainer/__init__.py": "",
        f"{site}/trl/trainer/utils.py": REDUCING_HELPER,
        f"{site}/trl/trainer/x.py": "from trl.trainer.utils import local_mean\nfrom transformers.dist import get_all_reduce_mean\n",
        f"{site}/transformers/__init__.py": "",
        f"{site}/transformers/dist.py": REDUCING_HELPER,
    })
    assert project_root(tmp_path / site / "trl/trainer/x.py") == (tmp_path / site).resolve()
    view, _ = view_of(tmp_path / site / "trl/trainer/x.py")
    assert returns(view, "local_mean") is not None
    assert returns(view, "get_all_reduce_mean") is None


def test_without_marker_only_the_files_own_package_is_the_project(tmp_path: Path):
    # site-packages holds many packages that are not one project: trl's findings never read the
    # installed transformers beside it, while trl's own modules are resolved.
    write(tmp_path, {
        "site/trl/__init__.py": "",
        "site/trl/utils.py": REDUCING_HELPER,
        "site/trl/train.py": "from trl.utils import local_mean\nfrom transformers.dist import get_all_reduce_mean\n",
        "site/transformers/__init__.py": "",
        "site/transformers/dist.py": REDUCING_HELPER,
    })
    view, _ = view_of(tmp_path / "site/trl/train.py")
    assert returns(view, "local_mean") is not None
    assert returns(view, "get_all_reduce_mean") is None


# ---- resolving imports ---------------------------------------------------------------------


def test_absolute_import_in_a_src_layout_and_a_relative_one(tmp_path: Path):
    write(tmp_path, {
        "pyproject.toml": "",
        "src/pkg/__init__.py": "",
        "src/pkg/utils/__init__.py": "",
        "src/pkg/utils/dist.py": REDUCING_HELPER,
        "src/pkg/train.py": "from pkg.utils.dist import get_all_reduce_mean\nfrom .utils.dist import local_mean as lm\n",
    })
    view, _ = view_of(tmp_path / "src/pkg/train.py")
    assert returns(view, "get_all_reduce_mean").returns_global
    assert not returns(view, "lm").returns_global
    assert view.function("print") is None and view.function("nothing") is None
    assert set(view.consulted) == {(tmp_path / "src/pkg/utils/dist.py").resolve()}


def test_script_beside_its_helpers_and_a_module_imported_as_a_whole(tmp_path: Path):
    write(tmp_path, {
        ".git/HEAD": "",
        "examples/train.py": "import utils.dist as d\nfrom utils import dist\n",
        "examples/utils/__init__.py": "",
        "examples/utils/dist.py": REDUCING_HELPER,
    })
    view, _ = view_of(tmp_path / "examples/train.py")
    assert returns(view, "d.get_all_reduce_mean").returns_global
    assert returns(view, "dist.get_all_reduce_mean").returns_global


def test_reexport_through_a_package_init(tmp_path: Path):
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "from .trainers import BaseTrainer\n",
        "pkg/trainers/__init__.py": "from .base import BaseTrainer\n",
        "pkg/trainers/base.py": "class BaseTrainer:\n    def log(self, logs):\n        pass\n",
        "train.py": "from pkg import BaseTrainer\n\n\nclass Mine(BaseTrainer):\n    pass\n",
    })
    view, source = view_of(tmp_path / "train.py")
    found = view.class_named("BaseTrainer")
    assert found is not None and found.name == "BaseTrainer" and "log" in found.methods
    assert found.path == (tmp_path / "pkg/trainers/base.py").resolve()
    assert [c.name for c in view.base_classes(source.module.body[1])] == ["BaseTrainer"]


def test_a_function_is_looked_for_only_in_modules_that_could_spell_the_tokens(tmp_path: Path):
    # `function_spelling`: the module that defines the function, when it spells a token; a module
    # on the way that spells none and names the function only where it defines it is not outlined.
    from trllint.core.prefilter import AnyOf

    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "from .engines import build_engine\nfrom .plain import build_plain\n",
        "pkg/engines.py": "import deepspeed\n\ndef build_engine(m):\n    return deepspeed.initialize(model=m)\n",
        "pkg/plain.py": "def build_plain(m):\n    return m\n\n\nclass Holder:\n    pass\n",
        "pkg/calls_itself.py": (
            "try:\n    from ._fast import again\nexcept ImportError:\n    def again(m):\n        return again(m)\n"
        ),
        "pkg/documented.py": (
            'class Runner:\n    """Use it so:\n\n    from pkg.documented import run\n    """\n\n\n'
            "def run(m):\n    return Runner(), run\n"
        ),
        "train.py": (
            "from pkg import build_engine, build_plain\nfrom pkg.plain import Holder\n"
            "from pkg.calls_itself import again\nfrom pkg.documented import run\n"
        ),
    })
    tokens = AnyOf("deepspeed")
    view, _ = view_of(tmp_path / "train.py")
    plain, engines, again = [(tmp_path / "pkg" / n).resolve() for n in ("plain.py", "engines.py", "calls_itself.py")]
    # Followed through the package's re-export (its __init__ spells no token but imports the name).
    found = view.function_spelling("build_engine", tokens)
    assert found is not None and (found.path, found.name) == (engines, "build_engine")
    assert view.function("build_engine") == found
    # Defined in a module that spells no token: none, and that module was never outlined.
    assert view.function("build_plain") is not None  # it is a function of the project...
    use_cache_folder(None)
    view, _ = view_of(tmp_path / "train.py")
    index = view.index
    assert view.function_spelling("build_plain", tokens) is None  # ...whose module says nothing
    assert index.content_hash(plain) not in index._outlines
    assert plain in view.consulted  # its text was read: a change to it must reach the cache
    assert view.function_spelling("Holder", tokens) is None  # a class is no function
    # A module whose docstring and calls name the function, never where a module-level import
    # could bind it, is not outlined either.
    documented = (tmp_path / "pkg" / "documented.py").resolve()
    assert view.function_spelling("run", tokens) is None
    assert index.content_hash(documented) not in index._outlines
    # A module that spells the name where an import binds it is outlined, to follow the import.
    assert view.function_spelling("again", tokens) is None
    assert index.content_hash(again) in index._outlines


def test_a_module_names_a_word_only_where_it_defines_it(tmp_path: Path):
    index = ProjectIndex(tmp_path)
    cases = {
        "def helper(x):\n    return x\n": True,
        "class helper:\n    pass\n": True,
        "x = obj.helper(1)\n": True,  # an attribute of something else binds nothing here
        "def helpers():\n    return my_helper\n": True,  # other words
        "": True,
        "from .impl import helper\n": False,
        "from .impl import (\n    other,\n    helper,\n)\n": False,
        "from .impl import thing as helper\n": False,
        "import helper\n": False,
        "def helper():\n    return helper ()\n": True,  # called: no import is followed by a bracket
        '__all__ = ["helper", \'helper\']\n': True,  # quoted
        "import helper\n(x)\n": False,  # the bracket on the next line is another statement's
        "from .impl import helper  # (see helper())\n": False,
        # Bound or read some other way: the outline follows imports alone, so nothing leads on.
        "helper = make()\n": True,
        "x = helper\n": True,
        "print(a, helper)\n": False,  # after a comma, before a bracket: as an import's list reads
        # Where an import's name stands, across lines too.
        "from .impl import other, \\\n    helper\n": False,
        "from .impl import other, \\\r\n    helper\r\n": False,
        "from .impl import (\n    # why\n    helper  # note\n)\n": False,
        "from .impl import (a as\n    helper)\n": False,
        "from .impl import (\nhelper,\n)\n": False,
        "import helper.sub\n": False,
        "import a, helper.sub\n": False,
        "from .impl import helper; y = 1\n": False,
        "from .impl import\thelper\r\n": False,
        "try:\n    from .impl import helper\nexcept ImportError:\n    helper = None\n": False,
        "def f():\n    pass\n# a comment in the first column\nif X:\n    import helper\n": False,
        "definitely = 1\nif X:\n    import helper\n": False,  # `def` only as a word of its own
        # Nowhere an import's name stands, or only inside a definition.
        '"""Uses `helper`."""\nx = helper.attribute\n': True,
        "x = 1 + \\\n    helper.y\n": True,
        "a = (\n    helper.b\n)\n": True,
        "class A(Base, helper):\n    pass\n": True,
        "def f():\n    from .impl import helper\n": True,
        "@decorate\ndef f():\n    import helper\n": True,
        "async def f():\n    import helper\n": True,
        'class A:\n    """Use it so:\n\n    from pkg import helper\n    """\n': True,
        "def f(\n    a,\n) -> None:\n    return (a, helper)\n": True,  # a signature's closing line
    }
    for number, (text, expected) in enumerate(cases.items()):
        path = tmp_path / f"m{number}.py"
        path.write_text(text, encoding="utf-8")
        assert index.names_only_where_defined(path, "helper") is expected, text


def test_missing_module_outside_module_and_broken_module_are_unknown(tmp_path: Path):
    write(tmp_path, {
        "pyproject.toml": "",
        "broken.py": "def helper(:\n",
        "train.py": "from nowhere import helper\nfrom torch import nn\nfrom broken import helper as h2\nfrom . import x\n",
    })
    view, _ = view_of(tmp_path / "train.py")
    assert view.function("helper") is None
    assert view.function("nn") is None
    assert view.function("h2") is None
    assert view.function("x") is None


def test_import_cycle_and_base_class_cycle_end(tmp_path: Path):
    write(tmp_path, {
        "pyproject.toml": "",
        "a.py": "from b import helper, B\n\n\nclass A(B):\n    pass\n",
        "b.py": "from a import helper, A\n\n\nclass B(A):\n    pass\n",
    })
    view, source = view_of(tmp_path / "a.py")
    assert view.function("helper") is None
    bases = view.base_classes(source.module.body[1])
    assert [c.name for c in bases] == ["B"]  # B's own base is A, this very file: not followed again


def test_module_under_two_names_is_summarised_once(tmp_path: Path, monkeypatch):
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/utils.py": REDUCING_HELPER,
        "pkg/train.py": "from pkg.utils import get_all_reduce_mean\nfrom .utils import local_mean\n",
    })
    parsed = counting_parses(monkeypatch)
    # The whole module's summary is what two import names could compute twice.
    view, _ = view_of(tmp_path / "pkg/train.py")
    assert returns(view, "get_all_reduce_mean").returns_global
    assert returns(view, "local_mean") is not None
    assert len(parsed) == 1


def test_two_thousand_modules_cost_only_what_is_imported(tmp_path: Path, monkeypatch):
    files = {"pyproject.toml": "", "pkg/__init__.py": ""}
    for i in range(2000):
        files[f"pkg/m{i}.py"] = f"from pkg.m{i + 1} import Base{i + 1}\n\n\nclass Base{i}(Base{i + 1}):\n    pass\n"
    files["pkg/train.py"] = "from pkg.m0 import Base0\n\n\nclass Mine(Base0):\n    pass\n"
    write(tmp_path, files)
    parsed = counting_parses(monkeypatch)
    view, source = view_of(tmp_path / "pkg/train.py")
    chain = view.base_classes(source.module.body[1])
    assert len(chain) == project_module.MAX_BASE_DEPTH  # a runaway chain ends
    assert parsed == []  # followed through outlines: no module parsed until a fact is asked
    assert all(view.fact(base, REDUCES_STORED_METRICS) == {} for base in chain)
    assert len(parsed) == project_module.MAX_BASE_DEPTH


def test_resolution_never_leaves_the_root(tmp_path: Path):
    write(tmp_path, {
        "outside.py": REDUCING_HELPER,
        "proj/pyproject.toml": "",
        "proj/train.py": "from outside import get_all_reduce_mean\n",
    })
    view, _ = view_of(tmp_path / "proj/train.py")
    assert view.function("get_all_reduce_mean") is None


# ---- the facts modules declare ---------------------------------------------------------------


def facts_of(text: str) -> SemanticModel:
    return SemanticModel.of(SourceFile(text=textwrap.dedent(text), display_path="m.py"))


def test_function_facts():
    model = facts_of((REDUCING_HELPER + """
    def gathered(accelerator, x):
        return accelerator.gather(x).mean()


    def unknown(self_like):
        return compute_elsewhere(self_like)


    def init_engine(model, config):
        engine, *_ = deepspeed.initialize(model=model, config=config)
        return engine


    def init_guarded(model, config):
        if model is None:
            return None
        return deepspeed.initialize(model=model, config=config)


    class Engines:
        def build(self, model):
            return deepspeed.initialize(model=model)

        def mean(self, x):
            dist.all_reduce(x)
            return x
    """).replace("import torch.distributed as dist", "import deepspeed\n    import torch.distributed as dist\n    from helpers import compute_elsewhere, load"))
    returned = RETURNS_ACROSS_RANKS.compute(model)
    assert returned["get_all_reduce_mean"] == [True, False] and returned["gathered"] == [True, False]
    assert "local_mean" not in returned  # neither global nor unknown: left out
    assert returned["unknown"] == [False, True]
    assert returned["Engines.mean"] == [True, False]
    forwards = FORWARDS_TO_DEEPSPEED.compute(model)
    assert forwards["init_engine"] == [["model", 0]] and forwards["self.build"] == [["model", 0]]
    assert "init_guarded" not in forwards


def test_class_facts():
    model = facts_of("""
    from accelerate import Accelerator
    from transformers import Trainer


    class Base(Trainer):
        def __init__(self, model):
            self.accelerator = Accelerator()
            self.model = self.accelerator.prepare(model)
            self.ref = model
            self._metrics = {"loss": []}

        def log(self, logs):
            metric_list = [sum(v) / len(v) for v in self._metrics.values()]
            metric_list = self.accelerator.reduce(metric_list, "mean")
            super().log(logs)


    class Plain:
        def log(self, logs):
            print({k: sum(v) for k, v in self._metrics.items()})
    """)
    attributes = SELF_ATTRIBUTES.compute(model)
    assert set(attributes["Base"]["wrapped"]) == {"self.model"}
    assert attributes["Base"]["wrapped"]["self.model"][2] == "self.accelerator"
    assert attributes["Base"]["bound"] == ["self._metrics", "self.accelerator", "self.model", "self.ref"]
    assert "Plain" not in attributes
    assert ACCELERATOR_ATTRIBUTES.compute(model) == {"Base": "self.accelerator"}
    assert REDUCES_STORED_METRICS.compute(model) == {"Base": True}


def test_outline():
    import ast

    from trllint.semantic.project.outline import outline_of

    outline = outline_of(ast.parse(textwrap.dedent('''
        import os.path
        import numpy as np
        from transformers import Trainer
        from ..utils import reduce_mean as rm
        from . import metrics
        try:
            from deepspeed import initialize
        except ImportError:
            initialize = None
        if os.environ.get("X"):
            pass
        elif True:
            from .fast import kernel
        from x import *

        def helper(): ...
        async def fetch(): ...

        class Base(Trainer, pkg.Mixin, Generic[T], metaclass=Meta):
            def __init__(self): ...
            async def step(self): ...
            if True:
                def hidden(self): ...
    ''')))
    assert outline.imports == {
        "os": ImportRef("os"),
        "np": ImportRef("numpy"),
        "Trainer": ImportRef("transformers", 0, "Trainer"),
        "rm": ImportRef("utils", 2, "reduce_mean"),
        "metrics": ImportRef("", 1, "metrics"),
        "initialize": ImportRef("deepspeed", 0, "initialize"),
        "kernel": ImportRef("fast", 1, "kernel"),
    }
    assert outline.functions == {"helper", "fetch"}
    assert outline.classes["Base"].bases == ("Trainer", "pkg.Mixin")
    assert outline.classes["Base"].methods == ("__init__", "step")


def test_the_outline_lists_the_methods_that_keep_an_argument():
    import ast

    from trllint.semantic.project.outline import Keeper, ModuleOutline, outline_of

    outline = outline_of(ast.parse(textwrap.dedent('''
        class Foundation:
            def __init__(self, model):
                self.model = model  # the constructor's argument: no method call hands it
            def set_prepared_model(self, model, base_model=False):
                if base_model:
                    self.base = model
                else:
                    self.model = model
            def use(self, *, encoder=None):
                self.encoder: object = encoder
            def later(self, model):
                def inner():
                    self.late = model  # a nested function keeps it when it runs, if ever
                self.copy = model.copy()  # not the argument itself
            @staticmethod
            def make(model):
                model.x = model
            @property
            def bare(self):
                return self.model
            def set_unwrapped(self, model):
                model = self.accelerator.unwrap_model(model)  # no longer the argument
                self.model = model
            def __setstate__(self, state):
                self.state = state
            def load_model(self, path):
                self.model = load(path)
                self.post_model_load_setup()
                self.fuse()
            def save(self):
                self.fuse()  # runs at other times too
    ''')))
    assert outline.classes["Foundation"].keepers == (
        Keeper("set_prepared_model", "model", 0, "base"),
        Keeper("set_prepared_model", "model", 0, "model"),
        Keeper("use", "encoder", -1, "encoder"),
    )
    assert ("model", "post_model_load_setup") in outline.classes["Foundation"].setting_up
    assert ("model", "fuse") not in outline.classes["Foundation"].setting_up
    assert ModuleOutline.from_json(json.loads(json.dumps(outline.to_json()))) == outline


def test_the_index_finds_the_modules_that_call_a_method_anywhere_in_the_project(tmp_path: Path):
    write(tmp_path / "proj", {
        "pyproject.toml": "",
        "models/foundation.py": "class Foundation:\n    def set_prepared_model(self, model):\n        self.model = model\n",
        "training/trainer.py": "def go(m, r):\n    m.set_prepared_model (r[0])\n",
        "training/notes.py": "# set_prepared_model is called by the trainer\nx = 'set_prepared_model'\n",
        ".venv/lib/site.py": "m.set_prepared_model(r)\n",
    })
    use_cache_folder(None)
    view, _ = view_of(tmp_path / "proj/models/foundation.py")
    assert view.modules_calling({"set_prepared_model"}) == [(tmp_path / "proj/training/trainer.py").resolve()]
    assert view.modules_calling({"set_model"}) == []
    (folder, stamp), = view.projects.items()
    assert project_module.project_modules_unchanged(folder, stamp)
    (tmp_path / "proj/training/notes.py").write_text("m.set_prepared_model(x)\n")
    project_module.forget_module(tmp_path / "proj/training/notes.py")
    assert not project_module.project_modules_unchanged(folder, stamp)


# ---- the disk cache ------------------------------------------------------------------------


def test_a_warm_index_parses_nothing(tmp_path: Path, monkeypatch):
    write(tmp_path / "proj", {"pyproject.toml": "", "utils.py": REDUCING_HELPER, "train.py": "from utils import get_all_reduce_mean, local_mean\n"})
    use_cache_folder(tmp_path / "cache")
    view, _ = view_of(tmp_path / "proj/train.py")
    assert returns(view, "local_mean") is not None and returns(view, "get_all_reduce_mean") is not None
    use_cache_folder(tmp_path / "cache")  # a new run: no index in memory

    def no_parse(*args):
        raise AssertionError("a warm run parsed an imported module")

    monkeypatch.setattr(modules_module, "_parse", no_parse)
    monkeypatch.setattr(ProjectIndex, "_outline_now", no_parse)  # its outline is kept beside its facts
    view, _ = view_of(tmp_path / "proj/train.py")
    assert returns(view, "local_mean") is not None and returns(view, "get_all_reduce_mean").returns_global


def test_a_damaged_cached_summary_is_made_again(tmp_path: Path):
    write(tmp_path / "proj", {"pyproject.toml": "", "utils.py": REDUCING_HELPER, "train.py": "from utils import get_all_reduce_mean, local_mean\n"})
    use_cache_folder(tmp_path / "cache")
    returns(view_of(tmp_path / "proj/train.py")[0], "local_mean")
    damaged = list((tmp_path / "cache").rglob("*.json"))
    assert damaged
    for cached in damaged:
        cached.write_text("{not json", encoding="utf-8")
    use_cache_folder(tmp_path / "cache")
    assert returns(view_of(tmp_path / "proj/train.py")[0], "get_all_reduce_mean").returns_global
    for cached in damaged:  # valid JSON, an outline of the wrong shape: read from the module again
        cached.write_text(json.dumps({modules_module.OUTLINE: {"imports": [], "functions": 1}}), encoding="utf-8")
    use_cache_folder(tmp_path / "cache")
    assert returns(view_of(tmp_path / "proj/train.py")[0], "get_all_reduce_mean").returns_global


def test_text_that_is_no_file_has_no_project():
    source = SourceFile(text="from utils import helper\n", display_path="<stdin>")
    assert project_view(SemanticModel.of(source)) is None


def test_index_resolution_is_cached_per_importer(tmp_path: Path):
    write(tmp_path, {"pyproject.toml": "", "utils.py": REDUCING_HELPER, "train.py": ""})
    index = ProjectIndex(tmp_path.resolve())
    ref = ImportRef("utils", 0, "local_mean")
    first = index.resolve((tmp_path / "train.py").resolve(), ref)
    assert first == ((tmp_path / "utils.py").resolve(), "local_mean")
    assert index.resolve((tmp_path / "train.py").resolve(), ref) is first
    assert isinstance(cst.parse_module((tmp_path / "utils.py").read_text()), cst.Module)


# ---- questions asked before the file is parsed ---------------------------------------------


def _may_match(rule_code: str, path: Path) -> bool:
    from trllint.rule.registry import all_rules

    source = SourceFile.from_bytes(path.read_bytes(), path.name)
    source.path = path
    return all_rules()[rule_code].rule.may_match(source.text, {}, source)


def test_reached_lets_a_file_through_only_when_a_module_it_leads_to_spells_the_tokens(tmp_path: Path):
    # TRL003's prefilter: the caller names DeepSpeed and None but calls no sink itself.
    caller = """
        from typing import Optional
        from helpers.engines import build_engine  # deepspeed engines
        from helpers.plain import build_plain
        from lab.base import Base

        def main(model: Optional[object] = None):
            return {call}(model)

        class Trainer({base}):
            def step(self):
                return self.make(None)
    """
    write(tmp_path / "proj", {
        "pyproject.toml": "",
        "helpers/__init__.py": "",
        "helpers/engines.py": "import deepspeed\n\ndef build_engine(m):\n    return deepspeed.initialize(model=m)\n",
        "helpers/plain.py": "def build_plain(m):\n    return m  # initialize nothing\n",
        "lab/__init__.py": "",
        "lab/base.py": "from lab.root import Root\n\nclass Base(Root):\n    pass\n",
        "lab/root.py": "import deepspeed\n\nclass Root:\n    def make(self, m):\n        return deepspeed.initialize(model=m)\n",
        "lab/other.py": "class Other:\n    def make(self, m):\n        return m\n",
    })
    train = tmp_path / "proj" / "train.py"
    for call, base, reached in [
        ("build_engine", "object", True),  # the helper's module calls deepspeed.initialize
        ("build_plain", "object", False),  # it does not: no summary could make it a sink
        ("build_plain", "Base", True),  # a base's base does
    ]:
        train.write_text(textwrap.dedent(caller.format(call=call, base=base)), encoding="utf-8")
        use_cache_folder(None)
        assert _may_match("TRL003", train) is reached, (call, base)
    # Text held in memory belongs to no project; a file CPython cannot parse is let through (the
    # run reports its syntax error).
    source = SourceFile.from_bytes(train.read_bytes(), "<stdin>")
    from trllint.rule.registry import all_rules

    rule = all_rules()["TRL003"].rule
    assert rule.may_match(source.text.replace("Base", "object"), {}, source) is False
    train.write_text("import deepspeed\nfrom helpers.plain import build_plain\nx = None\ndef f(:\n", encoding="utf-8")
    assert _may_match("TRL003", train) is True


def test_reached_through_bases_only_for_trl001(tmp_path: Path):
    write(tmp_path / "proj", {
        "pyproject.toml": "",
        "base.py": "from accelerate import Accelerator\n\nclass BaseTrainer:\n    def __init__(self, model):\n"
                   "        self.accelerator = Accelerator()\n        self.model = self.accelerator.prepare(model)\n",
        "plain.py": "class PlainBase:\n    def __init__(self, model):\n        self.model = model\n",
        "wrapping_helpers.py": "def wrap(m, accelerator):\n    return accelerator.prepare(m)\n",
    })
    train = tmp_path / "proj" / "sub.py"
    for base, reached in [("BaseTrainer", True), ("PlainBase", False)]:
        module = {"BaseTrainer": "base", "PlainBase": "plain"}[base]
        train.write_text(
            f"from {module} import {base}\nfrom wrapping_helpers import wrap\n\n"
            f"class Sub({base}):\n    def step(self):\n        wrap(None, None)\n        return self.model.config.hidden_size\n",
            encoding="utf-8",
        )
        use_cache_folder(None)
        # A called helper that wraps does not count: only an inherited attribute can break a read.
        assert _may_match("TRL001", train) is reached, base
    # A class that binds the attribute it reads hides whatever its bases bound to it: the prefilter
    # tests the text only (it lets the file through), and the rule itself finds nothing.
    train.write_text(
        "from base import BaseTrainer\n\nclass Sub(BaseTrainer):\n    def __init__(self, model, other):\n"
        "        super().__init__(model)\n        self.model, self.other = other, None\n\n"
        "    def step(self):\n        return self.model.config.hidden_size\n",
        encoding="utf-8",
    )
    use_cache_folder(None)
    assert _may_match("TRL001", train) is True
    from trllint.core.source import SourceFile
    from trllint.engine.lint import lint_source
    from trllint.rule.registry import all_rules
    from trllint.rule.ruleset import RuleSet

    source = SourceFile(text=train.read_text(), display_path="sub.py", path=train)
    assert lint_source(source, "sub.py", RuleSet([all_rules()["TRL001"].rule], preview=True)) == []


def test_class_bases_reads_every_class_statement_nested_or_not():
    import ast

    from trllint.semantic.project.outline import class_bases

    text = textwrap.dedent("""
        class Top(base.Trainer):
            class Inner(Mixin):
                pass

        def factory():
            class Local(LocalBase):
                pass
            return Local

        try:
            class Guarded(GuardBase):
                pass
        except ImportError:
            class Fallback(FallbackBase):
                pass
        finally:
            pass

        match kind:
            case "a":
                class Matched(MatchBase):
                    pass

        x = [SomethingElse for SomethingElse in ()]
    """)
    bases = class_bases(ast.parse(text), text.splitlines())
    assert bases == {"base.Trainer", "Mixin", "LocalBase", "GuardBase", "FallbackBase", "MatchBase"}


def test_imports_are_found_from_folder_listings_and_found_afresh_once_a_module_is_created(tmp_path: Path):
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/ops.py": "def f():\n    pass\n",
        "pkg/not_a_package/data.py": "",  # a folder without __init__.py: a namespace, not followed
        "train.py": "",
    })
    index = ProjectIndex(tmp_path.resolve())
    train = (tmp_path / "train.py").resolve()
    pkg = (tmp_path / "pkg").resolve()
    assert index.resolve(train, ImportRef("pkg.sub.ops", 0, "f")) == (pkg / "sub" / "ops.py", "f")
    assert index.resolve(train, ImportRef("pkg.sub", 0, "ops")) == (pkg / "sub" / "ops.py", None)
    assert index.resolve(train, ImportRef("pkg", 0, "sub")) == (pkg / "sub" / "__init__.py", None)
    assert index.resolve(train, ImportRef("pkg.not_a_package", 0, "x")) is None
    assert index.resolve(train, ImportRef("pkg.sub.missing", 0, "g")) is None
    (tmp_path / "pkg" / "sub" / "missing.py").write_text("def g():\n    pass\n", encoding="utf-8")
    assert index.resolve(train, ImportRef("pkg.sub.missing", 0, "g")) is None  # not read again yet
    index.forget((tmp_path / "pkg" / "sub" / "missing.py").resolve())  # as the editor's server does
    assert index.resolve(train, ImportRef("pkg.sub.missing", 0, "g")) == (pkg / "sub" / "missing.py", "g")


def test_a_module_is_read_once_for_every_question_about_it(tmp_path: Path, monkeypatch):
    # Its spellings, the names it may import and its outline are each asked of the bytes its
    # content hash was taken from, not read from disk again.
    from trllint.core.prefilter import AnyOf

    write(tmp_path, {"pyproject.toml": "", "helpers.py": "import torch.distributed as dist\n\n\ndef mean(t):\n    dist.all_reduce(t)\n    return t\n"})
    path = (tmp_path / "helpers.py").resolve()
    reads: list[Path] = []
    real_read = fact_cache.read_module

    def counted(module: Path) -> bytes:
        reads.append(module)
        return real_read(module)

    monkeypatch.setattr(fact_cache, "read_module", counted)
    monkeypatch.setattr(modules_module, "read_module", counted)
    index = ProjectIndex(tmp_path.resolve())
    assert index.spells(path, AnyOf("all_reduce"))
    assert not index.spells(path, AnyOf("initialize"))
    assert index.names_only_where_defined(path, "mean")
    assert not index.names_only_where_defined(path, "dist")
    assert set(index.outline(path).functions) == {"mean"}
    assert reads == [path]


def test_spelled_dotted_names_hold_every_imported_call_libcst_finds():
    """The prefilter's ``Reached`` asks the text for the file's calls before any parse; it must
    miss none of the calls the parsed file has (else a helper's finding would vanish)."""
    from trllint.semantic.project.outline import module_imports, spelled_dotted_names
    import ast

    odd = textwrap.dedent('''
        import utils, pkg.io as io
        from .helpers import save
        x = utils.save(a)
        y = (utils  # the chain goes on
             .io
             .load)(b)
        z = utils\\
            .k()
        w = save(1) + io.read(2) + other.utils.f()
        def f():
            return [utils.g(i) for i in range(3)]
    ''')
    texts = [odd] + [path.read_text(encoding="utf-8") for path in sorted(Path("rules").glob("*/cases/*.py"))]
    for text in texts:
        heads = set(module_imports(ast.parse(text)))
        model = SemanticModel.of(SourceFile(text=text, display_path="case.py"))
        called = {name for name in model.dotted_calls if name.partition(".")[0] in heads}
        assert called <= spelled_dotted_names(text, heads), text[:200]
    assert spelled_dotted_names(odd, {"utils", "io", "save"}) >= {
        "utils.save", "utils.io.load", "utils.k", "save", "io.read", "utils.g",
    }
    assert "utils.f" not in spelled_dotted_names(odd, {"utils"})  # an attribute of another name


# MAE's meters and evaluation loop, as TRL004's case holds them: util/misc.py's MetricLogger asks
# each SmoothedValue to all-reduce its count and total; engine.py returns their global averages.
METER_CASE = Path(__file__).resolve().parents[1] / "rules/trl004_ungathered_metric/cases/good_project_meter_object_synced"
METERS = (METER_CASE / "util/misc.py").read_text(encoding="utf-8")
EVALUATE = (METER_CASE / "engine.py").read_text(encoding="utf-8")


def test_a_helper_that_syncs_a_meter_object_of_another_module_returns_a_global_value(tmp_path: Path):
    # evaluate() reads util/misc.py's class while its own module is read for its facts; the answer
    # lists that module, so once the meters stop syncing the stored answer is not read again.
    files = {"pyproject.toml": "", "util/__init__.py": "", "util/misc.py": METERS, "engine.py": EVALUATE,
             "train.py": "from engine import evaluate\n"}
    write(tmp_path / "proj", files)
    use_cache_folder(tmp_path / "cache")
    view, _ = view_of(tmp_path / "proj/train.py")
    assert returns(view, "evaluate").returns_global
    assert tmp_path / "proj/util/misc.py" in view.consulted  # what the answer read, the file read too

    write(tmp_path / "proj", {"util/misc.py": METERS.replace("dist.all_reduce(t)", "pass")})
    use_cache_folder(tmp_path / "cache")  # a new run, with the answer for engine.py stored on disk
    assert not returns(view_of(tmp_path / "proj/train.py")[0], "evaluate").returns_global
    write(tmp_path / "proj", {"engine.py": EVALUATE.replace("metric_logger.synchronize_between_processes()", "pass")})
    write(tmp_path / "proj", {"util/misc.py": METERS})
    use_cache_folder(tmp_path / "cache")
    assert not returns(view_of(tmp_path / "proj/train.py")[0], "evaluate").returns_global  # no sync called


def test_an_answer_that_read_other_modules_holds_only_for_its_own_module(tmp_path: Path):
    # Two packages hold engine.py with the same text; each imports its own package's meters, and
    # only a's sync. b's answer is b's own, in memory and from the disk cache alike.
    engine = EVALUATE.replace("import util.misc as misc", "from . import misc")
    files = {"pyproject.toml": "", "a/__init__.py": "", "a/misc.py": METERS, "a/engine.py": engine,
             "b/__init__.py": "", "b/misc.py": METERS.replace("dist.all_reduce(t)", "pass"), "b/engine.py": engine,
             "train.py": "from a.engine import evaluate as evaluate_a\nfrom b.engine import evaluate as evaluate_b\n"}
    write(tmp_path / "proj", files)
    for _ in range(2):  # the second run reads the disk cache
        use_cache_folder(tmp_path / "cache")
        view, _ = view_of(tmp_path / "proj/train.py")
        assert returns(view, "evaluate_a").returns_global
        assert not returns(view, "evaluate_b").returns_global
        assert tmp_path / "proj/b/misc.py" in view.consulted


def test_an_answer_that_read_a_broken_module_is_made_again_once_it_is_mended(tmp_path: Path):
    files = {"pyproject.toml": "", "util/__init__.py": "", "util/misc.py": METERS + "\ndef broken(:\n",
             "engine.py": EVALUATE, "train.py": "from engine import evaluate\n"}
    write(tmp_path / "proj", files)
    use_cache_folder(tmp_path / "cache")
    assert not returns(view_of(tmp_path / "proj/train.py")[0], "evaluate").returns_global
    write(tmp_path / "proj", {"util/misc.py": METERS})
    use_cache_folder(tmp_path / "cache")
    assert returns(view_of(tmp_path / "proj/train.py")[0], "evaluate").returns_global


def test_a_module_read_for_its_facts_may_ask_its_imports_only_facts_of_their_own_module(tmp_path: Path):
    write(tmp_path / "proj", {"pyproject.toml": "", "helpers.py": REDUCING_HELPER, "engine.py": "from helpers import local_mean\n"})
    view = project_module.ProjectView.for_module_read_for_facts(tmp_path / "proj/engine.py")
    with pytest.raises(ValueError, match="reads other modules"):
        view.fact(view.function("local_mean"), RETURNS_ACROSS_RANKS)
