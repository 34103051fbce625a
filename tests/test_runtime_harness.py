"""The runtime tests' launcher: a teardown abort is launched once more, nothing else is."""

from __future__ import annotations

from pathlib import Path

from tests.runtime import launch
from tests.runtime.launch import TEARDOWN_ABORT, Launch


def _launcher(monkeypatch, outcomes: list[Launch]) -> list[list[str]]:
    calls: list[list[str]] = []

    def run(command, script, *, env, timeout):
        calls.append(command)
        return outcomes[len(calls) - 1]

    monkeypatch.setattr(launch, "_run_launch", run)
    return calls


def test_a_teardown_abort_is_launched_once_more(monkeypatch, tmp_path: Path):
    calls = _launcher(monkeypatch, [Launch(1, f"{TEARDOWN_ABORT}\nSignal 6"), Launch(0, "done")])
    result = launch.accelerate_launch(tmp_path / "scenario.py")
    assert result.ok and len(calls) == 2
    assert "aborted at teardown" in result.output and result.output.endswith("done")


def test_a_second_teardown_abort_fails_the_launch(monkeypatch, tmp_path: Path):
    calls = _launcher(monkeypatch, [Launch(1, TEARDOWN_ABORT), Launch(1, TEARDOWN_ABORT), Launch(0, "")])
    result = launch.accelerate_launch(tmp_path / "scenario.py")
    assert not result.ok and len(calls) == 2


def test_any_other_failure_is_not_launched_again(monkeypatch, tmp_path: Path):
    error = "AttributeError: 'DistributedDataParallel' object has no attribute 'config'"
    calls = _launcher(monkeypatch, [Launch(1, error), Launch(0, "")])
    result = launch.accelerate_launch(tmp_path / "scenario.py")
    assert not result.ok and len(calls) == 1 and result.output == error
