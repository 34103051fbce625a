"""The per-file semantic model and the shared facts asked of it: one model per file, each fact
computed once, typed questions."""

from __future__ import annotations

import textwrap

import pytest

import libcst as cst

from trllint.core.source import SourceFile
from trllint.facts.calls import called_names
from trllint.facts.accelerators import accelerator_in_scope
from trllint.facts.nullness import may_be_none
from trllint.facts.rank_flow import is_global, rank_flows
from trllint.rules.trl001_wrapped_model_attribute.wrapped_models import is_wrapped, wrapping_facts
from trllint.semantic.context import DEFAULT_STEP_METHODS
from trllint.semantic.model import SemanticModel

CODE = textwrap.dedent(
    """
    import torch.distributed as dist
    from accelerate import Accelerator


    def train(model, loader, ref_model=None):
        accelerator = Accelerator()
        model = accelerator.prepare(model)
        for batch in loader:
            loss = model(**batch).loss
            total = accelerator.gather(loss).mean()
            width = model.config.hidden_size
            log(loss, total, width)
        if ref_model is not None:
            use(ref_model)
        use(ref_model)
    """
)


def model_of(text: str = CODE) -> SemanticModel:
    return SemanticModel.of(SourceFile(text=text, display_path="train.py"))


def nodes(model: SemanticModel, kind: type, predicate=lambda n: True) -> list:
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kind) and predicate(node):
                found.append(node)
            return True

    model.source.module.visit(Finder())
    return found


def test_one_model_per_file_and_facts_computed_once():
    source = SourceFile(text=CODE, display_path="train.py")
    model = SemanticModel.of(source)
    assert SemanticModel.of(source) is model
    assert model.imports is model.imports and rank_flows(model) is rank_flows(model)
    assert wrapping_facts(source, DEFAULT_STEP_METHODS) is wrapping_facts(source, DEFAULT_STEP_METHODS)
    calls = []
    assert model.once(("k", 1), lambda: calls.append(1) or 5) == 5
    assert model.once(("k", 1), lambda: calls.append(1) or 6) == 5
    assert model.once(("k", 2), lambda: 7) == 7 and len(calls) == 1
    assert source.with_text(CODE).model is None  # a fixed text gets a model of its own


def test_is_global():
    model = model_of()
    log_call = nodes(model, cst.Call, lambda c: isinstance(c.func, cst.Name) and c.func.value == "log")[0]
    loss, total = log_call.args[0].value, log_call.args[1].value
    assert is_global(model, total, log_call) and not is_global(model, loss, log_call)


def test_may_be_none():
    model = model_of()
    uses = nodes(model, cst.Call, lambda c: isinstance(c.func, cst.Name) and c.func.value == "use")
    assert not may_be_none(model, "ref_model", uses[0]) and may_be_none(model, "ref_model", uses[1])


def test_is_wrapped_and_accelerator_at():
    model = model_of()
    config = nodes(model, cst.Attribute, lambda a: a.attr.value == "config")[0]
    wrapping = is_wrapped(model, config, DEFAULT_STEP_METHODS)
    assert wrapping is not None and wrapping.accelerator == "accelerator"
    assert accelerator_in_scope(model, config) == "accelerator"
    first = nodes(model, cst.Assign)[0]  # accelerator = Accelerator(): not bound before itself
    assert accelerator_in_scope(model, first) is None


def test_imports_in_every_arm_of_an_elif_chain():
    model = model_of(
        "import sys\n\nif sys.platform == 'win32':\n    import ntpath as osp\n"
        "elif sys.version_info < (3, 9):\n    import posixpath as old\nelse:\n    from deepspeed import initialize\n"
    )
    assert model.imports.resolve("old") == "posixpath" and model.imports.resolve("initialize") == "deepspeed.initialize"


def test_calls_and_definitions_come_from_one_walk_in_libcsts_order():
    model = model_of()
    expected_calls = nodes(model, cst.Call)  # LibCST's own traversal: an outer call before its arguments'
    assert [model.source.module.code_for_node(c) for c in model.calls] == [
        model.source.module.code_for_node(c) for c in expected_calls
    ]
    assert all(a is b for a, b in zip(model.calls, expected_calls)) and len(model.calls) == len(expected_calls)
    assert [f.name.value for f in model.definitions.functions] == ["train"]
    nested = model_of("class A:\n    def m(self):\n        def inner():\n            g()\n        f(h())\n")
    assert [f.name.value for f in nested.definitions.functions] == ["m", "inner"]
    assert [cst.Module([]).code_for_node(c.func) for c in nested.calls] == ["g", "f", "h"]
    assert nested.definitions.class_of_method == {id(nested.definitions.functions[0]): nested.definitions.classes[0]}


def test_called_names_are_the_last_names_of_what_the_calls_call():
    model = model_of()
    assert called_names(model) == {"Accelerator", "prepare", "model", "gather", "mean", "log", "use"}
    assert called_names(model) is called_names(model)  # once per file
    assert called_names(model_of("x = obj.attr\n(lambda: 1)()\n")) == frozenset()  # no name is called


def test_the_shared_walk_finds_every_assignment_and_the_accelerators_bound_by_them():
    model = SemanticModel.of(SourceFile(text=textwrap.dedent(
        """
        from accelerate import Accelerator as Acc

        main_acc = Acc()
        limit: int = 3

        class Trainer:
            helper: Acc = Acc(mixed_precision="bf16")

            def setup(self):
                self.acc = Acc()
                other = make()
                run = lambda: (inner := Acc())
        """
    ), display_path="train.py"))
    code = model.source.module.code_for_node
    targets = [
        code(target.target) for node in model.assignments
        for target in (node.targets if isinstance(node, cst.Assign) else [node])
    ]
    assert sorted(targets) == ["helper", "limit", "main_acc", "other", "run", "self.acc"]
    from trllint.facts.accelerators import _names_bound_to_accelerators

    # An annotated assignment and one to `self` count; a walrus inside a lambda is no assignment.
    assert _names_bound_to_accelerators(model.source.module, model.context) == {"main_acc", "helper", "self.acc"}


SCOPES = textwrap.dedent(
    """
    top()

    @register(make())
    class Outer:
        field = build()

        def method(self, value=default()):
            self.step()

            def helper():
                inner()

            handler = lambda: in_lambda()

            class Local:
                def local_method(self):
                    deep()

        if flag():
            def conditional(self):
                cond()


    def module_function(arg=default_arg()):
        class InFunction:
            def nested_method(self):
                nested()
        body()
    """
)


def test_the_shared_walk_says_where_each_call_sits_as_walking_its_parents_up_does():
    # The model answers a call's function and class from its one walk; the same questions asked
    # of the parent map (a context without the walk) must agree for every call of the file.
    from trllint.semantic.context import NodeContext

    model = model_of(SCOPES)
    by_parents = NodeContext(model.parents.get, model.source)
    code = model.source.module.code_for_node
    answers = {}
    for call in model.calls:
        function, cls = model.context.enclosing_function(call), model.context.enclosing_class(call)
        assert function is by_parents.enclosing_function(call)
        assert cls is by_parents.enclosing_class(call)
        outermost = None
        for ancestor in by_parents.ancestors(call):
            if isinstance(ancestor, cst.ClassDef):
                outermost = ancestor
        assert model.outermost_class_holding(call) is outermost
        answers[code(call.func)] = (
            function.name.value if function else None,
            cls.name.value if cls else None,
            outermost.name.value if outermost else None,
        )
    assert answers == {
        "top": (None, None, None),
        "register": (None, None, "Outer"),  # a class's decorators are its children, as a def's are
        "make": (None, None, "Outer"),
        "build": (None, None, "Outer"),
        "default": ("method", "Outer", "Outer"),
        "self.step": ("method", "Outer", "Outer"),
        "inner": ("helper", None, "Outer"),
        "in_lambda": ("method", "Outer", "Outer"),
        "deep": ("local_method", "Local", "Outer"),
        "flag": (None, None, "Outer"),
        "cond": ("conditional", "Outer", "Outer"),
        "default_arg": ("module_function", None, None),
        "nested": ("nested_method", "InFunction", "InFunction"),
        "body": ("module_function", None, None),
    }


def test_a_question_about_a_call_builds_no_parent_map():
    model = model_of(SCOPES)
    code = model.source.module.code_for_node
    call = next(c for c in model.calls if code(c.func) == "deep")
    assert model.context.enclosing_function(call).name.value == "local_method"
    assert model.context.enclosing_class(call).name.value == "Local"
    assert "parents" not in vars(model)  # the walk answered: no map of the whole file yet
    statement = model.context.enclosing_statement(call)  # walks up through the call's function
    assert code(statement).strip() == "deep()"
    above = [type(a).__name__ for a in model.context.ancestors(statement)]
    assert above[-3:] == ["IndentedBlock", "ClassDef", "Module"]  # Outer's body, Outer, the file
    assert "parents" not in vars(model)
    decorator_call = next(c for c in model.calls if code(c.func) == "make")  # in no function
    assert model.context.enclosing_statement(decorator_call) is not None
    assert "parents" in vars(model)


NESTED_BLOCKS = textwrap.dedent(
    """
    import torch

    if torch.cuda.is_available():
        def on_gpu(x):
            return x.cuda()
    else:
        try:
            def fallback(x):
                with torch.no_grad():
                    return helper(x)
        except ImportError:
            def missing():
                raise RuntimeError(explain())
        finally:
            cleanup()

    class Trainer(Base):
        def step(self, batch):
            for item in batch:
                while item.ready():
                    match item.kind:
                        case "a":
                            self.log(reduce(item))
                        case _:
                            def nested(y=default()):
                                return [convert(z) for z in y if keep(z)]
                            nested()
            return lambda: finish(batch)
    """
)


@pytest.mark.parametrize("source", [SCOPES, NESTED_BLOCKS])
def test_the_links_of_a_calls_function_answer_as_the_whole_files_map(source):
    # Before the file's map is built, a question about a call is answered from the links of the
    # function around it and of the statements above that function: every node on the way up,
    # from every call, must be the one the file's map names.
    from trllint.semantic.context import NodeContext

    for index in range(len(model_of(source).calls)):
        model = model_of(source)  # a fresh context for each call: no links left from another
        call = model.calls[index]
        in_function = model.context.enclosing_function(call) is not None
        chain = list(model.context.ancestors(call))
        statement = model.context.enclosing_statement(call)
        assert ("parents" in vars(model)) is not in_function, model.source.module.code_for_node(call)
        by_map = NodeContext(model.parents.get, model.source)
        assert [id(n) for n in chain] == [id(n) for n in by_map.ancestors(call)]
        assert statement is by_map.enclosing_statement(call)
        assert chain[-1] is model.source.module and model.context.parent(model.source.module) is None


HOLDERS = textwrap.dedent(
    """
    from accelerate import Accelerator

    class Outer:
        shared: int = 0
        table = {}

        def __init__(self):
            self.acc = Accelerator()
            self.model, self.optimizer = build()
            self.model.config.use_cache = False

            def later():
                self.late = make()

        class Inner:
            def setup(self):
                self.inner_acc = Accelerator(mixed_precision="bf16")

            @property
            def accelerator(self):
                return self.inner_acc

        if flag:
            def conditional(self):
                self.flagged = Accelerator()


    def outside():
        self.not_a_member = Accelerator()
    """
)


def test_a_class_holds_what_walking_it_finds_read_from_the_shared_walk():
    # What a class's assignments bind, and which `self` attributes hold an accelerator, come from
    # the model's one walk; each class (a nested one too) must get what walking it alone gives.
    from trllint.semantic.model import ClassFacts

    model = model_of(HOLDERS)
    classes = {cls.name.value: cls for cls in model.definitions.classes}
    assert sorted(classes) == ["Inner", "Outer"]
    for cls in classes.values():
        walked = ClassFacts(cls, model.imports)  # no contents: it walks the class
        shared = model.class_facts(cls)
        assert shared._held is not None
        assert shared.names_assigned == walked.names_assigned
        assert shared.self_attributes == walked.self_attributes
    assert model.class_facts(classes["Outer"]).names_assigned == {
        "shared", "table", "self.acc", "self.model", "self.optimizer", "self.model.config.use_cache",
        "self.late", "self.inner_acc", "self.flagged",
    }
    assert model.class_facts(classes["Outer"]).self_attributes == {
        "self.acc": True, "self.model": False, "self.optimizer": False, "self.late": False,
        "self.inner_acc": True, "self.accelerator": True, "self.flagged": True,
    }
    assert model.class_facts(classes["Inner"]).self_attributes == {"self.inner_acc": True, "self.accelerator": True}


def test_the_calls_a_functions_body_runs_are_those_a_walk_of_the_body_collects():
    # Not its decorators' or defaults' calls, nor those of a def, class or lambda inside it: the
    # same calls, in the same order, as collecting them from its body without entering those.
    import importlib.util
    from pathlib import Path

    from trllint.core.cst import walk

    scopes = walk.node_types(cst.FunctionDef, cst.ClassDef, cst.Lambda)
    folder = Path(next(iter(importlib.util.find_spec("libcst").submodule_search_locations)))
    sources = [SCOPES, NESTED_BLOCKS, *(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.py"))[:30])]
    checked = 0
    for source in sources:
        model = model_of(source)
        for function in model.definitions.functions:
            expected = walk.of_types(function.body, walk.node_types(cst.Call), scopes)
            assert [id(c) for c in model.calls_in_body(function)] == [id(c) for c in expected]
            checked += bool(expected)
    assert checked > 100
    model = model_of(SCOPES)
    method = next(f for f in model.definitions.functions if f.name.value == "method")
    code = model.source.module.code_for_node
    assert [code(c.func) for c in model.calls_in_body(method)] == ["self.step"]  # not default(), inner(), ...
    other = model_of(SCOPES).definitions.functions[0]
    assert model.calls_in_body(other) is None  # a function of another tree
