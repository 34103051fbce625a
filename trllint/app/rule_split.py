"""One large file's rules checked in two processes, for a run of too few files to spread over a
pool (``trllint.app.pool`` lints fewer than eight in its own process): the pre-commit hook on
the one training script a commit touched.

Once the file is parsed, just before its rules check it, the process forks. Both processes
share the tree and every fact computed so far without copying them. The rules are put in a line:
at the back those that build costly facts other rules build too (``Rule.costly_facts``), the
ones that build the most of them last; at the front the rest, in the registry's order. The
parent takes rules from the front, the child from the back, each claiming its next rule in a
table both map, until none is left. So rules that build the same facts tend to run in the same
process (the child's), and one slow rule leaves the others to the other process.

The child sends back the findings of the rules it finished, and what they read of the project
(the result cache keys on it). Each rule's findings are what checking it alone gives: the facts
are the same wherever they are computed. A rule the child did not finish (it raised, or the
child died) is checked again here, so its failure is reported as without the split.

Only where ``fork`` and ``memfd_create`` are Linux's, and only for a file large enough to repay
the fork; otherwise the rules run one after the other.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from trllint.rule.base import Rule
    from trllint.semantic.model import SemanticModel

# Below this many characters a file's rules take less time than the fork and the pages both
# processes then copy as they write (benchmarks/README.md, "Issue 33, seventeenth stop").
MIN_CHARS = 80_000

_FREE, _PARENT, _CHILD = 0, 1, 2


def available() -> bool:
    return sys.platform == "linux" and hasattr(os, "fork") and hasattr(os, "memfd_create")


class _Claims:
    """Which process checks which rule: one byte per rule, in memory both processes map, written
    under a record lock, which the kernel drops when its holder exits (a killed child never
    leaves the parent waiting)."""

    def __init__(self, count: int) -> None:
        import mmap

        self.count = count
        self._fd = os.memfd_create("trllint-rule-claims", os.MFD_CLOEXEC)
        os.ftruncate(self._fd, count)
        self._table = mmap.mmap(self._fd, count)

    def next(self, claimant: int) -> int | None:
        """The first free rule from the claimant's end, now claimed by it; None when none is free."""
        import fcntl

        fcntl.lockf(self._fd, fcntl.LOCK_EX)
        try:
            order = range(self.count) if claimant == _PARENT else range(self.count - 1, -1, -1)
            for index in order:
                if self._table[index] == _FREE:
                    self._table[index] = claimant
                    return index
            return None
        finally:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)

    def claimed_by(self, claimant: int) -> list[int]:
        return [index for index in range(self.count) if self._table[index] == claimant]

    def close(self) -> None:
        self._table.close()
        os.close(self._fd)


def check_in_two_processes(model: SemanticModel, rules: list[Rule], *, reap: bool = True) -> None:
    """Each rule's ``check_module(model)``, the rules shared between this process and a fork
    (a ``trllint.rule.ruleset.CheckRunner``). Without ``reap``, see ``check_leaving_the_child``."""
    if len(model.source.text) < MIN_CHARS:
        _check_here(model, rules)
        return
    import pickle  # before the fork: the child imports nothing it can avoid

    rules = in_line(rules)
    claims = _Claims(len(rules))
    read_fd, write_fd = os.pipe()
    try:
        child = os.fork()
    except OSError:  # no memory or no process left for it: one after the other
        os.close(read_fd)
        os.close(write_fd)
        claims.close()
        _check_here(model, rules)
        return
    if child == 0:
        _check_in_child(model, rules, claims, read_fd, write_fd)
    os.close(write_fd)
    finished: dict[int, list] = {}
    read: dict[str, str] = {}
    reported = False
    try:
        while (index := claims.next(_PARENT)) is not None:
            rules[index].check_module(model)
        with os.fdopen(read_fd, "rb", closefd=False) as pipe:
            report = pipe.read()  # until the child exits
        reported = True
    finally:
        if not reported:  # a rule of ours raised: the child's work is no longer wanted
            os.kill(child, signal.SIGKILL)
        os.close(read_fd)
        if reap or not reported:
            os.waitpid(child, 0)
        left_to_child = claims.claimed_by(_CHILD)
        claims.close()
    try:
        finished, read = pickle.loads(report)
    except Exception:  # the child died before it wrote all of it: its rules are checked here
        pass
    for index in left_to_child:
        if index in finished:
            rules[index].findings = finished[index]
    # A rule the child claimed and did not finish.
    _check_here(model, [rules[i] for i in left_to_child if i not in finished])
    model.read_elsewhere.update(read)


def check_leaving_the_child(model: SemanticModel, rules: list[Rule]) -> None:
    """``check_in_two_processes`` for a process that exits right after this file (a lint of one
    file from the command line): the child, once it has sent its report, is left to the system,
    which reaps it at the exit. Waiting for its exit (its pages unmapped) costs 1 to 3 ms."""
    check_in_two_processes(model, rules, reap=False)


def _check_here(model: SemanticModel, rules: list[Rule]) -> None:
    for rule in rules:
        rule.check_module(model)


def in_line(rules: list[Rule]) -> list[Rule]:
    """The rules from the parent's end of the line to the child's (see the module's text)."""

    def sharers(rule: type[Rule]) -> int:
        facts = set(rule.costly_facts)
        return sum(1 for other in rules if type(other) is not rule and facts.intersection(other.costly_facts))

    def place(rule: Rule) -> tuple[bool, int]:
        shares = sharers(type(rule)) > 0
        return shares, len(rule.costly_facts) if shares else 0

    return sorted(rules, key=place)  # stable: rules placed alike keep the registry's order


def _check_in_child(model: SemanticModel, rules: list[Rule], claims: _Claims, read_fd: int, write_fd: int) -> NoReturn:
    status = 1
    try:
        import gc
        import pickle

        from trllint.engine.pipeline import file_dependencies

        os.close(read_fd)
        gc.disable()  # the child lives a moment: a collection would only copy the parent's pages
        finished: dict[int, list] = {}
        try:
            while (index := claims.next(_CHILD)) is not None:
                rules[index].check_module(model)
                finished[index] = rules[index].findings
        except Exception:
            pass  # the parent checks this rule again, and reports its failure
        report = pickle.dumps((finished, file_dependencies(model)), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(report)
        status = 0
    finally:
        os._exit(status)  # never back into the parent's code, nor flushing its buffers
