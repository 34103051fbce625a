"""The worker pool changes nothing but the time: --jobs 1 and --jobs 2 print the same report."""

from __future__ import annotations

import json

import pytest

from tests import engine_rules
from tests.test_cache import TRAINER, run
from trllint.app.pool import process_files
from trllint.engine.pipeline import Mode
from trllint.app.cli import main
from trllint.rule.registry import register_rules
from trllint.rule.ruleset import RuleSet


@pytest.fixture
def tree(tmp_path, monkeypatch):
    engine_rules.install_speed_rules()
    (tmp_path / "pyproject.toml").write_text('[tool.trllint]\nselect = ["TST"]\n', encoding="utf-8")
    for n in range(24):
        # Files of very different sizes, so the pool's largest-first order differs from the input's.
        body = TRAINER.format(n=n) + "\n\ndef pad():\n    return model.config\n" * (n % 5) * 8
        (tmp_path / f"m{n:02}.py").write_text(body, encoding="utf-8")
    (tmp_path / "broken.py").write_text("def f(:\n", encoding="utf-8")
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'.config\n")
    (tmp_path / "requirements.txt").write_text("vllm==0.5\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    register_rules({})


@pytest.mark.parametrize("output", ["json", "text"])
def test_one_worker_and_two_workers_report_the_same(tree, capsys, output):
    reports = []
    for jobs in ("1", "2"):
        status = main(["--no-cache", "--format", output, "--jobs", jobs, "."])
        reports.append((status, capsys.readouterr().out))
    assert reports[0] == reports[1]
    assert reports[0][0] == 1


def test_the_pool_keeps_the_order_of_the_files(tree):
    jobs = [(p, p.name) for p in sorted(tree.glob("*.py"))]
    ruleset = RuleSet([info.rule for info in engine_rules.speed_rule_infos().values()])
    alone = process_files(jobs, ruleset, Mode(), workers=1)
    pooled = process_files(jobs, ruleset, Mode(), workers=2)
    assert [r.path for r in pooled] == [name for _, name in jobs]
    assert [(r.path, r.findings, r.sha256) for r in pooled] == [(r.path, r.findings, r.sha256) for r in alone]
    assert sum(len(r.findings) for r in alone) > 24


def test_cached_runs_with_one_and_two_workers_agree(tree, capsys):
    status = main(["--format", "json", "--jobs", "2", "."])
    two_cold = json.loads(capsys.readouterr().out)
    _, one_warm = run(capsys, ".")  # --jobs 1, reading what the pool wrote
    assert status == 1 and one_warm == two_cold


def _facts_folder_in_worker(path, display):
    from trllint.semantic.project.index import cache_folder

    return str(cache_folder())


def test_spawned_workers_keep_module_facts_in_the_runs_folder(tmp_path, monkeypatch):
    """Where workers are spawned (macOS, Windows), they start with no module state: the pool hands
    them the run's module-fact folder, or every worker would recompute imported modules' facts."""
    import multiprocessing

    from trllint.app.pool import map_files
    from trllint.semantic.project.index import cache_folder, use_cache_folder

    real_get_context = multiprocessing.get_context
    monkeypatch.setattr(multiprocessing, "get_context", lambda method=None: real_get_context("spawn"))
    folder = tmp_path / "facts"
    previous = cache_folder()
    use_cache_folder(folder)
    try:
        jobs = [(tmp_path / f"m{i}.py", f"m{i}.py") for i in range(8)]
        seen = map_files(_facts_folder_in_worker, jobs, workers=2, rewrites=False)
    finally:
        use_cache_folder(previous)
    assert seen == [str(folder)] * 8
