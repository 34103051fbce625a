from __future__ import annotations

import io
import sys
from dataclasses import dataclass

import pytest

from trllint.rule.registry import register_rules


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def engine_rules():
    """Swap the rule pack for the small rules of tests/engine_rules.py."""
    from tests.engine_rules import TEST_RULES

    register_rules(TEST_RULES)
    yield TEST_RULES
    register_rules({})


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run ``trllint`` in this process: ``cli("--fix", "x.py", stdin=b"...")``."""
    from trllint.app.cli import main

    def run(*args: str, stdin: bytes | None = None) -> CliResult:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own exits
            code = exc.code if isinstance(exc.code, int) else 2
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def flows_built(monkeypatch) -> list[str]:
    """The scopes whose rank flow is built while the test runs, by name (``<module>`` for the
    module's): what a fact or rule followed, and what it spared."""
    import libcst as cst

    from trllint.facts import rank_flow

    built: list[str] = []
    new_flow = rank_flow.FileRankFlows._new_flow

    def counted(self, scope, **kwargs):
        built.append(scope.name.value if isinstance(scope, cst.FunctionDef) else "<module>")
        return new_flow(self, scope, **kwargs)

    monkeypatch.setattr(rank_flow.FileRankFlows, "_new_flow", counted)
    return built
