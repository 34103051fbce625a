"""The runtime tests' launcher: a teardown abort is launched again, a few times at most; nothing else is."""

from __future__ import annotations

from pathlib import Path

from tests.runtime import launch
from tests.runtime.launch import TEARDOWN_ABORT, TEARDOWN_RETRIES, Launch


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


def test_teardown_aborts_past_the_retries_fail_the_launch(monkeypatch, tmp_path: Path):
    aborts = [Launch(1, TEARDOWN_ABORT)] * (TEARDOWN_RETRIES + 1)
    calls = _launcher(monkeypatch, [*aborts, Launch(0, "")])
    result = launch.accelerate_launch(tmp_path / "scenario.py")
    assert not result.ok and len(calls) == TEARDOWN_RETRIES + 1
    assert f"[launch {TEARDOWN_RETRIES + 1}]" in result.output


def test_an_abort_then_another_failure_reports_the_other_failure(monkeypatch, tmp_path: Path):
    error = "AttributeError: 'DistributedDataParallel' object has no attribute 'config'"
    calls = _launcher(monkeypatch, [Launch(1, TEARDOWN_ABORT), Launch(1, error), Launch(0, "")])
    result = launch.accelerate_launch(tmp_path / "scenario.py")
    assert not result.ok and len(calls) == 2 and result.output.endswith(error)


def test_any_other_failure_is_not_launched_again(monkeypatch, tmp_path: Path):
    error = "AttributeError: 'DistributedDataParallel' object has no attribute 'config'"
    calls = _launcher(monkeypatch, [Launch(1, error), Launch(0, "")])
    result = launch.accelerate_launch(tmp_path / "scenario.py")
    assert not result.ok and len(calls) == 1 and result.output == error
