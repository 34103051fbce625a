"""trllint.facts.nullness: may a name be None at the call marked `sink(...)`?"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from trllint.facts.nullness import NullnessAnalysis


def reasons_at_sink(code: str, name: str = "m"):
    wrapper = MetadataWrapper(cst.parse_module(textwrap.dedent(code)))
    parents = wrapper.resolve(ParentNodeProvider)
    sinks = []

    class Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "sink":
                sinks.append(node)

    wrapper.module.visit(Find())
    (call,) = sinks
    return NullnessAnalysis(parents.get, wrapper.module).none_reasons(name, call)


MAY_BE_NONE = {
    "default None": "def f(m=None):\n    sink(m)\n",
    "Optional string annotation": "def f(m: 'Optional[Model]'):\n    sink(m)\n",
    "Union with None": "def f(m: Union[None, Model]):\n    sink(m)\n",
    "None in one branch": "def f(c):\n    if c:\n        m = None\n    else:\n        m = Model()\n    sink(m)\n",
    "loop may not run": "def f(xs):\n    m = None\n    for x in xs:\n        m = x\n    sink(m)\n",
    "except handler": "def f():\n    try:\n        m = load()\n    except OSError:\n        m = None\n    sink(m)\n",
    "inside is None branch": "def f(m):\n    if m is None:\n        sink(m)\n",
    "alias of optional": "def f(n=None):\n    m = n\n    sink(m)\n",
    "ternary None": "def f(c):\n    m = Model() if c else None\n    sink(m)\n",
    "or guard misses": "def f(m=None, c=True):\n    if m is not None or c:\n        sink(m)\n",
    "module level": "m = cfg.get('model')\nsink(m)\n",
    "dereference may not run": "def f(m=None, c=True):\n    x = c and m.config\n    sink(m)\n",
    "getattr tolerates None": "def f(m=None):\n    q = getattr(m, 'is_loaded_in_4bit', False)\n    sink(m)\n",
    "another flag": "def f(a, b):\n    if a:\n        m = Model()\n    else:\n        m = None\n    if b:\n        sink(m)\n",
    "flag bound again": (
        "def f(a):\n    if a:\n        m = Model()\n    else:\n        m = None\n    a = not a\n    if a:\n        sink(m)\n"
    ),
    "or of the flag": "def f(a, b):\n    if a:\n        m = Model()\n    else:\n        m = None\n    if a or b:\n        sink(m)\n",
    "None under the flag too": (
        "def f(a, c):\n    m = None\n    if a:\n        m = load() if c else None\n    if a:\n        sink(m)\n"
    ),
}

NOT_NONE = {
    "required": "def f(m):\n    sink(m)\n",
    "guarded": "def f(m=None):\n    if m is not None:\n        sink(m)\n",
    "early continue": "def f(ms):\n    for m in ms:\n        if m is None:\n            continue\n        sink(m)\n",
    "while guard": "def f(m=None):\n    while m is not None:\n        sink(m)\n        m = m.next\n",
    "not-None after or-raise": "def f(m=None):\n    if not m:\n        raise ValueError\n    sink(m)\n",
    "with as": "def f(m=None):\n    with load() as m:\n        sink(m)\n",
    "reloaded in except": "def f():\n    try:\n        m = load()\n    except OSError:\n        m = Model()\n    sink(m)\n",
    "conjunction": "def f(m=None, c=True):\n    if c and m is not None:\n        sink(m)\n",
    "else of is None": "def f(m=None):\n    if m is None:\n        pass\n    else:\n        sink(m)\n",
    "elif": "def f(m=None, c=False):\n    if c:\n        pass\n    elif m:\n        sink(m)\n",
    "lambda": "def f(m=None):\n    g = lambda: sink(m)\n",
    "ternary guarded": "def f(n=None):\n    m = n if n is not None else Model()\n    sink(m)\n",
    "dereferenced before": "def f(m=None):\n    size = m.config.hidden_size\n    sink(m)\n",
    "dereferenced in a test": "def f(m=None):\n    if m.training:\n        pass\n    sink(m)\n",
    # The test that chose the None agrees with the one that guards the sink.
    "same flag": "def f(a):\n    if a:\n        m = Model()\n    else:\n        m = None\n    if a:\n        sink(m)\n",
    "same flag in a conjunction": (
        "def f(a, b):\n    if a:\n        m = Model()\n    else:\n        m = None\n    if b and a:\n        sink(m)\n"
    ),
    "negated flag": "def f(off):\n    m = None\n    if not off:\n        m = Model()\n    if not off:\n        sink(m)\n",
}


# Aliases: (the name at the sink, code). A guard on one name of `self.m = r` covers the other.
ALIAS_MAY_BE_NONE = {
    "alias rebound before the guard": (
        "self.m",
        "def f(self, r=None):\n    self.m = r\n    r = load()\n    if r is not None:\n        sink(self.m)\n",
    ),
    "alias made in one arm only": (
        "self.m",
        "def f(self, r=None, c=True):\n    if c:\n        self.m = r\n    else:\n        self.m = None\n"
        "    if r is not None:\n        sink(self.m)\n",
    ),
}

ALIAS_NOT_NONE = {
    "guard on the alias": (
        "self.m",
        "def f(self, r=None):\n    self.m = r\n    if r is not None:\n        sink(self.m)\n",
    ),
    "guard on the attribute's source": (
        "r",
        "def f(self, r=None):\n    self.m = r\n    init()\n    if self.m is not None:\n        sink(r)\n",
    ),
    "alias in both arms": (
        "self.m",
        "def f(self, r=None, c=True):\n    if c:\n        self.m = r\n    else:\n        self.m = r\n"
        "    if r is not None:\n        sink(self.m)\n",
    ),
    "alias read in the branch test": (
        "self.m",
        "def f(self, r=None):\n    self.m = r\n    if not getattr(r.inner, 'flag', False):\n        sink(self.m)\n",
    ),
}


@pytest.mark.parametrize("name, code", ALIAS_MAY_BE_NONE.values(), ids=ALIAS_MAY_BE_NONE.keys())
def test_alias_may_be_none(name, code):
    assert reasons_at_sink(code, name)


@pytest.mark.parametrize("name, code", ALIAS_NOT_NONE.values(), ids=ALIAS_NOT_NONE.keys())
def test_alias_not_none(name, code):
    assert not reasons_at_sink(code, name)


@pytest.mark.parametrize("code", MAY_BE_NONE.values(), ids=MAY_BE_NONE.keys())
def test_may_be_none(code):
    assert reasons_at_sink(code)


@pytest.mark.parametrize("code", NOT_NONE.values(), ids=NOT_NONE.keys())
def test_not_none(code):
    assert not reasons_at_sink(code)


def test_self_attribute_starts_as_init_leaves_it():
    code = """
    class T:
        def __init__(self, m, c):
            self.m = m if c else None

        def step(self):
            sink(self.m)
    """
    assert reasons_at_sink(code, "self.m")
    assert not reasons_at_sink(code.replace("if c else None", "if c else Model()"), "self.m")
