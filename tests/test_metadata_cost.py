"""Metadata is computed only as needed, and the cheap versions give the same answers.

- ``ParentProvider`` (parent links read from node fields) equals LibCST's ParentNodeProvider on
  real training code and on every rule case.
- Positions are placed only for the nodes a rule reports (trllint.core.positions, checked against
  LibCST's providers in tests/test_positions.py): no file pays for a whole-module code
  generation, with findings or without.
"""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from tests import engine_rules
from tests.samples import real_code_sample
from trllint.core.cst.parents import ParentProvider, parent_map
from trllint.core.cst.walk import TOKEN_TYPES
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source, read_source


def test_parent_provider_equals_libcst_parent_node_provider():
    files = real_code_sample()
    assert files
    for path in files:
        try:
            module = cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        expected = dict(wrapper.resolve(ParentNodeProvider))
        parents = wrapper.resolve(ParentProvider)
        # Whitespace and punctuation are linked on the first question about one of them.
        syntax = {node: parent for node, parent in expected.items() if type(node) not in TOKEN_TYPES}
        assert dict(parents) == syntax, path
        assert {node: parents[node] for node in expected} == expected, path
        assert dict(parents) == expected, path


def test_parent_map_answers_like_a_dict_before_and_after_completing():
    module = cst.parse_module("f(a, b)\n")
    parents = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentProvider)
    call = module.body[0].body[0].value
    comma = call.args[0].comma
    stranger = cst.Name("x")
    assert parents.get(stranger) is None and stranger not in parents
    assert parents.get(module) is None  # the root has no parent
    direct = parent_map(module)
    assert direct.get(module) is None and direct.get(stranger) is None and direct[call.args[1]] is call
    with pytest.raises(KeyError):
        direct[module]
    assert not direct._complete  # questions about other nodes do not link the tokens
    assert comma in parents and parents.get(comma) is call.args[0]
    assert parents[call.args[1]] is call
    with pytest.raises(KeyError):
        parents[stranger]


def test_positions_never_generate_the_whole_module(monkeypatch):
    """Positions are placed per reported node (trllint.core.positions): neither a file without
    findings nor one with them pays for LibCST's providers or a code generation of the module."""
    generated: list[str] = []
    real_provider, real_module = PositionProvider._gen_impl, cst.Module._codegen_impl

    def counting_provider(self, module):
        generated.append("provider")
        return real_provider(self, module)

    def counting_module(self, state, *args, **kwargs):
        generated.append("module")
        return real_module(self, state, *args, **kwargs)

    monkeypatch.setattr(PositionProvider, "_gen_impl", counting_provider)
    monkeypatch.setattr(cst.Module, "_codegen_impl", counting_module)
    rules = RuleSet([info.rule for info in engine_rules.speed_rule_infos().values()])
    quiet = "def configure(model):\n    return model.settings\n"  # passes the prefilter, no finding
    source = read_source(quiet.encode(), "quiet.py", "quiet.py")
    assert lint_source(source, "quiet.py", rules) == []
    assert source._module is not None and generated == []
    loud = "def configure(model):\n    return model.config, model.config.x\n"
    source = read_source(loud.encode(), "loud.py", "loud.py")
    findings = lint_source(source, "loud.py", rules)
    assert [(f.line, f.column, f.end_column) for f in findings] == [(2, 12, 24), (2, 26, 38)]
    assert generated == []
