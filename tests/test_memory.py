"""trllint.app.memory: when the collector runs, and that an in-process caller gets it back as it was."""

from __future__ import annotations

import gc

import pytest

from trllint.app import memory
from trllint.app.cli import main


@pytest.fixture
def collector():
    """Each test starts with the collector on at CPython's thresholds, and leaves it so."""
    thresholds = gc.get_threshold()
    gc.enable()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    gc.enable()
    memory._state[0] = False


def test_a_run_pauses_the_collector_and_gives_it_back(collector):
    with memory.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with memory.paused():
        pass
    assert not gc.isenabled()  # it was off before: it stays off


def test_linting_one_file_leaves_it_off_and_anything_else_turns_it_on(collector):
    with memory.paused():
        memory.for_run(1, rewrites=False)
        assert not gc.isenabled()  # the tree lives until the process ends
        memory.for_run(1, rewrites=True)
        assert gc.isenabled()  # each fix round re-parses: the old rounds must go
    with memory.paused():
        memory.for_run(5, rewrites=False)
        assert gc.isenabled() and gc.get_threshold()[0] == memory._FIRST_GENERATION_THRESHOLD


def test_the_command_run_in_process_restores_the_collector(collector, tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text("import torch.distributed as dist\n\ndef f(model):\n    return model.config\n", encoding="utf-8")
    # --preview: every rule is preview; without it the run would lint nothing.
    main(["--no-cache", "--preview", str(script)])
    assert gc.isenabled()
    main(["--no-cache", "--preview", "--fix", str(script)])
    assert gc.isenabled()


def _installed_trainers() -> list:
    import importlib.util
    from pathlib import Path

    found = []
    for package, module in (("trl", "trainer/dpo_trainer.py"), ("accelerate", "accelerator.py")):
        spec = importlib.util.find_spec(package)  # located, never imported
        if spec is not None and spec.submodule_search_locations:
            path = Path(next(iter(spec.submodule_search_locations))) / module
            if path.is_file():
                found.append(path)
    return found


def test_a_linted_file_leaves_no_reference_cycle_holding_its_tree(collector):
    """After a lint, the file's tree and analyses are freed by reference counting: no closure
    that calls itself, no class made per call, holds any of it in a cycle. Otherwise a run of many
    files collects each tree after the fact (a fifth of the collector's time went to that)."""
    import libcst as cst

    from trllint.app.config import Config
    from trllint.engine.pipeline import lint_bytes

    trainers = _installed_trainers()
    assert trainers, "the test extra installs trl and accelerate"
    config = Config(preview=True)
    ruleset = config.ruleset(config.selected_codes())
    for path in trainers:
        data = path.read_bytes()
        lint_bytes(data, path.name, ruleset, display=str(path), path=path)  # imports, caches
        gc.collect()
        gc.disable()
        result = lint_bytes(data, path.name, ruleset, display=str(path), path=path)
        assert not [f for f in result.findings if f.code == "TRL999"]
        del result
        unreachable = gc.collect()
        nodes, pending = 0, [cst.parse_module(data)]
        while pending:
            nodes += 1
            pending.extend(pending.pop().children)
        assert unreachable < nodes // 20, (path.name, unreachable, nodes)


@pytest.mark.parametrize(("exits_unfreed", "files", "released"), [(True, 1, 0), (False, 1, 1), (True, 2, 2)])
def test_only_the_one_file_of_a_process_that_exits_unfreed_keeps_its_tree(
    tmp_path, monkeypatch, exits_unfreed, files, released
):
    from trllint.app.pool import process_files
    from trllint.core.source import SourceFile
    from trllint.engine.results import Mode
    from trllint.rule.registry import all_rules
    from trllint.rule.ruleset import RuleSet

    releases: list[str] = []
    release = SourceFile.release
    monkeypatch.setattr(SourceFile, "release", lambda self: releases.append(self.display_path) or release(self))
    monkeypatch.setattr(memory, "exits_unfreed", lambda: exits_unfreed)
    jobs = []
    for n in range(files):
        (tmp_path / f"t{n}.py").write_text("import torch.distributed as dist\n\ndist.barrier()\n", encoding="utf-8")
        jobs.append((tmp_path / f"t{n}.py", f"t{n}.py"))
    process_files(jobs, RuleSet([info.rule for info in all_rules().values()], preview=True), Mode(), workers=1)
    assert sorted(releases) == [name for _, name in jobs][:released]
