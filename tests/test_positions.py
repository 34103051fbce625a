"""Positions placed per node (trllint.core.positions) are LibCST's, to the column.

Every node of real training code, of every rule case and of source written to trip the statement
matching (decorators with comments between them, elif chains, handlers, ``match``, ``a; b`` lines,
tabs, CRLF, no final line break, a form feed LibCST drops) is asked in a shuffled order, and a
sample again each on a fresh object, and compared with ``PositionProvider`` and
``WhitespaceInclusivePositionProvider``.
"""

from __future__ import annotations

import random

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, WhitespaceInclusivePositionProvider

from tests.samples import real_code_sample
from trllint.core.cst.parents import parent_map
from trllint.core.positions import NodePositions
from trllint.core.source import SourceFile

TRICKY = {
    "decorators": (
        "# header\n\nimport os\n\n\n@first\n# between\n\n@second(\n    arg,\n)\n"
        "def f(a,\n      b):  # trailing\n    # leading\n    return a.config\n\n"
        "@decorated\nclass C(Base):\n    x = 1; y = x.config\n\n    @property\n    def p(self):\n"
        "        if self.model.config:\n            return 1\n        elif self.other:\n            pass\n"
        "        elif (\n            z\n        ):\n            return 2\n        else:\n            return 3\n"
    ),
    "handlers": (
        "try:\n    a = b.config\nexcept (ValueError,\n        KeyError) as e:\n    log(e)\nelse:\n    c()\n"
        "finally:\n    d = [\n        1,\n    ]\nfor i in x:\n    pass\nelse:\n    e()\nwhile q:\n    break\nelse:\n    f()\n"
    ),
    "trystar": "try:\n    pass\nexcept* OSError as group:\n    handle(group)\nfinally:\n    done()\n",
    "match": (
        "match command.split():\n    case [action]:\n        run(action)\n    case [action, obj] if obj:\n"
        "        run(action, obj)\n    case _:\n        pass\n"
    ),
    "async": "async def main():\n    async with a as b:\n        async for x in b:\n            await x.config\n",
    "suites": "if x: a(); b.config\nelse: c()\nclass D: pass\ndef g(): return 1; \n",
    "tabs": "def f():\n\tif x:\n\t\treturn y.config\n\telse:\n\t  return z\n",
    "crlf": "def f():\r\n    # c\r\n    return x.config\r\n\r\nz = 1\r\n",
    "no_final_newline": "def f():\n    return x.config",
    "form_feed": "import os\n\x0c\ndef f():\n    return x.config\n\x0cclass A:\n    pass\n",
    "continuation": "x = 1 + \\\n    2\nif a and \\\n        b:\n    y = (c\n         .config)\n",
    "parenthesized": "@(\n    decorator\n)\ndef f():\n    pass\n(a\n ) = 1\n",
    "empty_lines_end": "x = 1\n\n# trailing comment\n\n",
    "strings": 's = """\nline\n"""; t = f"{x.config}"\nu = (\n    "a"\n    "b"\n)\n',
}


def _check(source: SourceFile) -> int:
    module = source.module
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    syntactic = wrapper.resolve(PositionProvider)
    inclusive = wrapper.resolve(WhitespaceInclusivePositionProvider)
    parents = parent_map(module)
    nodes = list(syntactic)
    random.Random(len(nodes)).shuffle(nodes)
    shared = NodePositions(source, parents)
    for node in nodes:
        assert shared.syntactic(node) == syntactic[node], (source.display_path, node)
        assert shared.whitespace_inclusive(node) == inclusive[node], (source.display_path, node)
    for node in nodes[:40]:  # nothing cached from other nodes' statements
        fresh = NodePositions(source, parents)
        assert fresh.whitespace_inclusive(node) == inclusive[node], (source.display_path, node)
        assert fresh.syntactic(node) == syntactic[node], (source.display_path, node)
    return len(nodes)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_positions_equal_libcst_on_tricky_source(name):
    assert _check(SourceFile.from_bytes(TRICKY[name].encode(), name)) > 0


def test_positions_equal_libcst_on_real_code():
    files = real_code_sample(every=25, max_bytes=40_000)
    assert len(files) > 50
    for path in files:
        source = SourceFile.from_bytes(path.read_bytes(), str(path))
        try:
            source.module
        except cst.ParserSyntaxError:
            continue
        _check(source)


def _counting_module_codegen(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = cst.Module._codegen_impl

    def counting(self, state, *args, **kwargs):
        calls.append(1)
        return real(self, state, *args, **kwargs)

    monkeypatch.setattr(cst.Module, "_codegen_impl", counting)
    return calls


def test_a_node_in_a_statement_is_placed_without_generating_the_module(monkeypatch):
    source = SourceFile.from_bytes(TRICKY["decorators"].encode(), "f.py")
    calls = _counting_module_codegen(monkeypatch)
    positions = NodePositions(source, parent_map(source.module))
    function = source.module.body[1]
    read = function.body.body[0].body[0].value  # a.config
    assert positions.syntactic(read).start.line == 15
    assert positions.syntactic(read).start.column == 11
    assert calls == []


def test_where_the_file_differs_from_libcst_the_module_is_generated_once(monkeypatch):
    # LibCST drops the form feed before `class A`: its columns there are not the file's.
    source = SourceFile.from_bytes(TRICKY["form_feed"].encode(), "f.py")
    calls = _counting_module_codegen(monkeypatch)
    positions = NodePositions(source, parent_map(source.module))
    cls = source.module.body[2]
    assert positions.syntactic(cls.name).start == cst.metadata.CodePosition(5, 6)  # the file's column is 7
    assert positions.syntactic(source.module.body[1].name).start == cst.metadata.CodePosition(3, 4)
    assert calls == [1]


def test_a_node_of_another_tree_is_a_key_error():
    source = SourceFile.from_bytes(b"x = 1\n", "f.py")
    positions = NodePositions(source, parent_map(source.module))
    with pytest.raises(KeyError):
        positions.syntactic(cst.Name("stranger"))
