"""A file's rules split over two processes (trllint.app.rule_split) find what they find one after
the other: the same findings, fixes and evidence, the same TRL999 for a rule that fails, and the
same project files read for the result cache, whichever process ran which rule."""

from __future__ import annotations

import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.test_trl004_project import _loop
from trllint.app import memory, rule_split
from trllint.app.pool import POOL_MIN_FILES, process_files
from trllint.core.source import SourceFile
from trllint.engine.lint import lint_source
from trllint.engine.pipeline import Mode, fix_bytes, process_bytes
from trllint.rule.base import Rule
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.semantic.model import SemanticModel

pytestmark = pytest.mark.skipif(not rule_split.available(), reason="the split needs Linux's fork and memfd_create")


@pytest.fixture
def every_size(monkeypatch):
    """Split every file, however small."""
    monkeypatch.setattr(rule_split, "MIN_CHARS", 0)


def _shipped(*, split: bool) -> RuleSet:
    rules = [info.rule for info in all_rules().values()]
    # Every rule checks every case, the prefilter off: every case is split.
    runner = rule_split.check_in_two_processes if split else None
    return RuleSet(rules, preview=True, use_prefilter=False, check_runner=runner)


def _everything(findings) -> list[dict[str, Any]]:
    return [asdict(f) for f in findings]  # evidence and the preview mark too (not compared by ==)


def _cases() -> list[Path]:
    folders = [info.folder / "cases" for info in all_rules().values()]
    return sorted(p for folder in folders for p in folder.glob("*.py") if ".fixed" not in p.name)


def test_the_shipped_rules_find_the_same_in_two_processes(every_size, monkeypatch):
    cases = _cases()
    assert len(cases) > 200
    forks = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    found = 0
    for case in cases:
        text = case.read_text(encoding="utf-8")
        alone = lint_source(SourceFile(text=text, display_path=case.name), case.name, _shipped(split=False))
        split = lint_source(SourceFile(text=text, display_path=case.name), case.name, _shipped(split=True))
        assert _everything(split) == _everything(alone), case
        found += len(alone)
    assert found > 100
    assert len(forks) == len(cases)


def test_the_shipped_rules_fix_the_same_in_two_processes(every_size):
    cases = [p for p in _cases() if p.with_suffix(".fixed.py").exists()]
    assert len(cases) > 50
    fixed = 0
    for case in cases:
        data = case.read_bytes()
        alone = fix_bytes(data, case.name, _shipped(split=False), unsafe=True)
        split = fix_bytes(data, case.name, _shipped(split=True), unsafe=True)
        assert split[1] == alone[1], case
        assert _everything(split[0].findings) == _everything(alone[0].findings), case
        fixed += alone[1] is not None
    assert fixed > 50


# ---- the split itself, with rules that say where they ran ------------------------------------

PARENT = os.getpid()
# While set, a rule checked in the parent waits until the child has begun a rule: the child's
# claims are then certain, however quickly the parent could have taken every rule alone.
WAIT_FOR_CHILD = [False]


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, f"waited 20 s for {what}"
        time.sleep(0.005)


class Noted(Rule):
    """Notes in ``log`` the process that checks it, then reports one finding."""

    code = "TST900"
    name = "noted"
    message = "checked"
    log: ClassVar[Path]

    def note(self) -> None:
        in_parent = os.getpid() == PARENT
        with open(self.log, "a", encoding="utf-8") as out:
            out.write(f"{self.code} {'parent' if in_parent else 'child'}\n")
        if in_parent and WAIT_FOR_CHILD[0]:
            _wait_for(lambda: " child" in self.log.read_text(encoding="utf-8"), "the child's first rule")

    def check_module(self, model: SemanticModel) -> None:
        self.note()
        self.report(model.source.module.body[0], f"{self.message} by {self.code}")


def _noted(code: str, facts: tuple[str, ...] = (), check=None) -> type[Rule]:
    attributes: dict[str, Any] = {"code": code, "name": code.lower(), "costly_facts": facts}
    if check is not None:
        attributes["check_module"] = check
    return type(f"Noted{code}", (Noted,), attributes)


def _checked_by(log: Path) -> dict[str, list[str]]:
    where: dict[str, list[str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        code, process = line.split()
        where.setdefault(code, []).append(process)
    return where


def _run(rules: list[type[Rule]], *, split: bool, wait: bool | None = None) -> list[dict[str, Any]]:
    source = SourceFile(text="x = 1\n" * 50, display_path="t.py")
    ruleset = RuleSet(rules, check_runner=rule_split.check_in_two_processes if split else None)
    WAIT_FOR_CHILD[0] = split if wait is None else wait
    try:
        return _everything(lint_source(source, "t.py", ruleset))
    finally:
        WAIT_FOR_CHILD[0] = False


@pytest.fixture
def log(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "checked.log"
    path.write_text("", encoding="utf-8")
    monkeypatch.setattr(Noted, "log", path, raising=False)
    return path


def test_both_processes_check_rules_and_each_rule_is_checked_once(every_size, log):
    rules = [_noted(f"TST9{n:02}") for n in range(10)]
    split = _run(rules, split=True)
    where = _checked_by(log)
    assert sorted(where) == [r.code for r in rules] and all(len(p) == 1 for p in where.values())
    assert {p for (p,) in where.values()} == {"parent", "child"}
    assert where["TST900"] == ["parent"] and where["TST909"] == ["child"]  # the two ends of the line
    log.write_text("", encoding="utf-8")
    assert split == _run(rules, split=False) and len(split) == 10


def test_rules_that_build_the_same_facts_go_to_the_childs_end(every_size, log):
    rules = [
        _noted("TST901", ("ranks", "rank_flow")), _noted("TST902"), _noted("TST903", ("wrapping",)),
        _noted("TST904", ("ranks",)), _noted("TST905"),
    ]
    assert [r.code for r in rule_split.in_line([rule(None) for rule in rules])] == [  # type: ignore[arg-type]
        "TST902", "TST903", "TST905", "TST904", "TST901",
    ]
    _run(rules, split=True)
    assert _checked_by(log)["TST901"] == ["child"]


def _raises_in_child(self, model):
    self.note()
    if os.getpid() != PARENT:
        raise RuntimeError("only in the child")
    self.report(model.source.module.body[0], f"{self.message} by {self.code}")


def _dies_in_child(self, model):
    self.note()
    if os.getpid() != PARENT:
        os._exit(3)
    self.report(model.source.module.body[0], f"{self.message} by {self.code}")


@pytest.mark.parametrize("failing", [_raises_in_child, _dies_in_child])
def test_a_rule_the_child_does_not_finish_is_checked_here(every_size, log, failing):
    rules = [_noted(f"TST9{n:02}") for n in range(6)] + [_noted("TST990", (), failing)]
    split = _run(rules, split=True)
    assert _checked_by(log)["TST990"] == ["child", "parent"]
    log.write_text("", encoding="utf-8")
    assert split == _run(rules, split=False) and len(split) == 7


def _raises(self, model):
    self.note()
    raise RuntimeError("a bug in the rule")


@pytest.mark.parametrize("end", ["parent", "child"])
def test_a_rule_that_fails_is_reported_as_without_the_split(every_size, log, end):
    failing, others = _noted("TST990", (), _raises), [_noted(f"TST9{n:02}") for n in range(4)]
    rules = [failing, *others] if end == "parent" else [*others, failing]
    split = _run(rules, split=True)
    assert _checked_by(log)["TST990"][0] == end
    assert split == _run(rules, split=False)
    assert [f["code"] for f in split].count("TRL999") == 1 and len(split) == 5


@pytest.mark.parametrize("leaves", [False, True])
def test_the_child_is_reaped_unless_the_process_exits_at_once(every_size, log, monkeypatch, leaves):
    # A lint of one file exits a moment after its rules: the system reaps the child then, and
    # waiting for the child's own exit would only delay this one's.
    forked: list[int] = []
    fork = os.fork

    def recorded_fork() -> int:
        pid = fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(rule_split.os, "fork", recorded_fork)
    rules = [_noted(f"TST9{n:02}") for n in range(4)]
    runner = rule_split.check_leaving_the_child if leaves else rule_split.check_in_two_processes
    source = SourceFile(text="x = 1\n" * 50, display_path="t.py")
    WAIT_FOR_CHILD[0] = True
    try:
        assert len(lint_source(source, "t.py", RuleSet(rules, check_runner=runner))) == 4
    finally:
        WAIT_FOR_CHILD[0] = False
    assert len(forked) == 1 and {p for (p,) in _checked_by(log).values()} == {"parent", "child"}
    if leaves:
        assert os.waitpid(forked[0], 0)[0] == forked[0]  # left for whoever reaps it
    else:
        with pytest.raises(ChildProcessError):
            os.waitpid(forked[0], os.WNOHANG)  # already reaped


def test_a_small_file_is_checked_here_alone(log):
    rules = [_noted(f"TST9{n:02}") for n in range(4)]
    assert len(_run(rules, split=True, wait=False)) == 4
    assert {p for processes in _checked_by(log).values() for p in processes} == {"parent"}


def test_what_the_childs_rules_read_of_the_project_is_kept_for_the_cache(every_size, tmp_path, monkeypatch):
    source = _loop(tmp_path, "from utils.dist import local_mean", "local_mean(correct)")
    path = source.path
    assert path is not None
    trl004 = all_rules()["TRL004"].rule
    done = tmp_path / "trl004-done"
    check = trl004.check_module

    def checked_then_marked(self, model):
        check(self, model)
        done.write_text(str(os.getpid()), encoding="utf-8")

    class WaitsForTheChild(Rule):
        """First in line, so the parent's: waits until TRL004 (reading utils/dist.py) is done in the child."""

        code, name, message = "TST999", "waits", "never reported"

        def check_module(self, model: SemanticModel) -> None:
            if WAIT_FOR_CHILD[0]:
                _wait_for(done.exists, "TRL004 in the child")

    monkeypatch.setattr(trl004, "check_module", checked_then_marked)
    data = path.read_bytes()
    rules = [WaitsForTheChild, trl004]
    alone = process_bytes(data, path.name, path.name, RuleSet(rules), Mode(), path)[0]
    done.unlink()
    WAIT_FOR_CHILD[0] = True
    try:
        split_rules = RuleSet(rules, check_runner=rule_split.check_in_two_processes)
        split = process_bytes(data, path.name, path.name, split_rules, Mode(), path)[0]
    finally:
        WAIT_FOR_CHILD[0] = False
    assert done.read_text(encoding="utf-8") != str(os.getpid())  # TRL004 ran in the child
    assert [(f.line, f.code) for f in split.findings] == [(f.line, f.code) for f in alone.findings] == [(13, "TRL004")]
    assert str(tmp_path / "utils" / "dist.py") in alone.dependencies
    assert split.dependencies == alone.dependencies


# ---- when the command line splits ---------------------------------------------------------------


def test_the_command_line_splits_only_when_it_runs_files_in_its_own_process(tmp_path, monkeypatch):
    seen: list[Any] = []
    def process_file(path, display, ruleset, mode, digest):
        seen.append(ruleset.check_runner)

    monkeypatch.setattr("trllint.app.pool.process_file", process_file)
    files = [(tmp_path / f"f{n}.py", f"f{n}.py") for n in range(POOL_MIN_FILES - 1)]
    process_files(files[:1], RuleSet([]), Mode(), workers=2)
    process_files(files, RuleSet([]), Mode(), workers=4)
    process_files(files[:1], RuleSet([]), Mode(), workers=1)  # --jobs 1: one process, as asked
    assert seen[: POOL_MIN_FILES] == [rule_split.check_in_two_processes] * POOL_MIN_FILES
    assert seen[POOL_MIN_FILES:] == [None]
    # A lint of one file from the command line, which exits unfreed right after: its child is
    # left to the system; not when it fixes (each round forks again) nor for several files.
    seen.clear()
    monkeypatch.setattr(memory, "_exits_unfreed", True)
    process_files(files[:1], RuleSet([]), Mode(), workers=2)
    process_files(files[:1], RuleSet([]), Mode(fix=True), workers=2)
    process_files(files[:2], RuleSet([]), Mode(), workers=2)
    assert seen == [rule_split.check_leaving_the_child, rule_split.check_in_two_processes, rule_split.check_in_two_processes, rule_split.check_in_two_processes]


def test_every_costly_fact_named_is_a_module_of_the_facts():
    import trllint.facts

    folder = Path(trllint.facts.__file__).parent
    named = {fact for info in all_rules().values() for fact in info.rule.costly_facts}
    assert named and all((folder / f"{fact}.py").is_file() for fact in named)
