"""The result cache: a warm run gives the same findings without linting again, anything that can
change a finding (the file, the selected rules, a rule setting) makes it lint again, a damaged
cache is ignored, and runs that share the folder leave it loadable.

The stand-in rules of ``tests/engine_rules.py`` are the run's rules here, so these tests hold
whatever the rule pack holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import engine_rules
from trllint.app import pool as pool_module
from trllint.app.cli import main
from trllint.rule.registry import register_rules

REPO = Path(__file__).resolve().parent.parent

PYPROJECT = """\
[tool.trllint]
select = ["TST101", "TST102", "TST103"]
{extra}
"""

TRAINER = '''\
import deepspeed


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.is_encoder_decoder = model.config.is_encoder_decoder  # {n}

    def setup(self):
        engine, *_ = deepspeed.initialize(model=self.model, config=self.args)
        return engine, self.model.generation_config
'''


@pytest.fixture
def stand_in_rules():
    engine_rules.install_speed_rules()
    yield
    register_rules({})


@pytest.fixture
def project(tmp_path, monkeypatch, stand_in_rules):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.format(extra=""), encoding="utf-8")
    src = tmp_path / "src"
    src.mkdir()
    for n in range(10):
        (src / f"trainer_{n}.py").write_text(TRAINER.format(n=n), encoding="utf-8")
    (src / "plain.py").write_text("import os\n", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("vllm>=0.6\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def linted(monkeypatch):
    """Records which files each run actually linted (the cache's misses)."""
    calls: list[list[str]] = []
    # The cache imports the pool only when something is left to lint (a warm run never does).
    real = pool_module.process_files

    def recording(jobs, *args, **kwargs):
        calls.append(sorted(display for _, display in jobs))
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(pool_module, "process_files", recording)
    return calls


def run(capsys, *args: str) -> tuple[int, list[dict]]:
    status = main(["--format", "json", "--jobs", "1", *args])
    out = capsys.readouterr().out
    return status, json.loads(out)


def cache_files(root: Path) -> list[Path]:
    return sorted((root / ".trllint_cache").glob("results-*.json"))


def test_warm_run_gives_the_same_findings_and_lints_nothing(project, capsys, linted):
    status, cold = run(capsys, ".")
    assert status == 1 and len(cold) == 10 * 2 + 1
    assert len(linted[-1]) == 12
    status, warm = run(capsys, ".")
    assert status == 1 and warm == cold
    assert linted[-1] == []
    assert (project / ".trllint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_warm_run_equals_an_uncached_run(project, capsys):
    run(capsys, ".")
    _, warm = run(capsys, ".")
    _, uncached = run(capsys, "--no-cache", ".")
    assert warm == uncached


def test_editing_a_file_lints_it_again(project, capsys, linted):
    run(capsys, ".")
    target = project / "src" / "trainer_3.py"
    # Same size, new content: the size alone cannot tell.
    target.write_text(TRAINER.format(n=3).replace("model.config.", "model.konfig."), encoding="utf-8")
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
    _, after = run(capsys, ".")
    assert linted[-1] == ["src/trainer_3.py"]
    assert [f["code"] for f in after if f["path"] == "src/trainer_3.py"] == ["TST102"]
    assert len(after) == 20


def test_touching_a_file_without_changing_it_is_still_a_hit(project, capsys, linted):
    _, cold = run(capsys, ".")
    target = project / "src" / "trainer_5.py"
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
    _, warm = run(capsys, ".")
    assert linted[-1] == [] and warm == cold
    # ... and the new mtime was remembered: the next run does not even hash it.
    _, again = run(capsys, ".")
    assert again == cold


def test_selecting_other_rules_lints_again(project, capsys, linted):
    _, everything = run(capsys, ".")
    _, only_initialize = run(capsys, "--select", "TST102", ".")
    assert len(linted[-1]) == 11  # another configuration (and no text rule): nothing is reused
    assert {f["code"] for f in only_initialize} == {"TST102"}
    assert only_initialize == [f for f in everything if f["code"] == "TST102"]
    _, back = run(capsys, ".")
    assert back == everything and linted[-1] == []  # each configuration keeps its own file
    assert len(cache_files(project)) == 2


def test_changing_a_rule_setting_lints_again(project, capsys, linted):
    _, before = run(capsys, ".")
    assert {f["line"] for f in before if f["code"] == "TST101"} == {7}
    (project / "pyproject.toml").write_text(
        PYPROJECT.format(extra='watched-attributes = ["generation_config"]'), encoding="utf-8"
    )
    _, after = run(capsys, ".")
    assert len(linted[-1]) == 12
    assert {f["line"] for f in after if f["code"] == "TST101"} == {11}


def test_ignoring_a_rule_in_the_configuration_lints_again(project, capsys):
    run(capsys, ".")
    (project / "pyproject.toml").write_text(PYPROJECT.format(extra='ignore = ["TST103"]'), encoding="utf-8")
    _, after = run(capsys, ".")
    assert "TST103" not in {f["code"] for f in after}


@pytest.mark.parametrize(
    "damage",
    [
        b"\x00\xff not json at all",
        b'{"truncated": ',
        b"[1, 2, 3]",
        b'{"%(path)s": {"size": "big", "findings": 7}}',
        b'{"%(path)s": {"size": %(size)d, "mtime": %(mtime)d, "sha256": "x", "display": "src/trainer_0.py", '
        b'"findings": [{"code": "TST101", "unexpected": 1}]}}',
    ],
    ids=["binary", "truncated", "not-a-table", "wrong-types", "bad-finding"],
)
def test_a_damaged_cache_is_ignored_and_replaced(project, capsys, damage):
    _, expected = run(capsys, "--no-cache", ".")
    run(capsys, ".")
    target = project / "src" / "trainer_0.py"
    st = target.stat()
    values = {b"path": str(target.absolute()).encode(), b"size": st.st_size, b"mtime": st.st_mtime_ns}
    for file in cache_files(project):
        file.write_bytes(damage % values if b"%(" in damage else damage)
    status, findings = run(capsys, ".")
    assert status == 1 and findings == expected
    for file in cache_files(project):
        assert isinstance(json.loads(file.read_bytes()), dict)
    _, warm = run(capsys, ".")
    assert warm == expected


def test_an_unwritable_cache_folder_does_not_fail_the_run(project, capsys):
    (project / ".trllint_cache").write_text("a file where the folder should be", encoding="utf-8")
    status, findings = run(capsys, ".")
    assert status == 1 and len(findings) == 21


_DRIVER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from tests import engine_rules
    engine_rules.install_speed_rules()
    from trllint.app.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def test_concurrent_runs_sharing_the_folder_leave_a_loadable_cache(project, capsys):
    _, expected = run(capsys, "--no-cache", ".")
    driver = [sys.executable, "-c", _DRIVER.format(repo=str(REPO))]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for round_index in range(3):
        # Each round a new configuration (an ignored code) so that both runs start cold, and the
        # two runs lint different subsets so that each has entries the other lacks.
        (project / "pyproject.toml").write_text(
            PYPROJECT.format(extra=f'per-file-ignores = {{ "x{round_index}.py" = ["TST101"] }}'),
            encoding="utf-8",
        )
        runs = [
            subprocess.Popen(
                [*driver, "--format", "json", "--jobs", str(jobs), *paths],
                cwd=project,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for jobs, paths in ((2, ["src", "requirements.txt"]), (1, ["."]))
        ]
        outputs = [process.communicate(timeout=300) for process in runs]
        for process, (out, err) in zip(runs, outputs):
            assert process.returncode == 1, err.decode()
        assert json.loads(outputs[1][0]) == expected
        for file in cache_files(project):
            assert isinstance(json.loads(file.read_bytes()), dict)
        assert not list((project / ".trllint_cache").glob(".results-*"))  # no temporary file left
        _, warm = run(capsys, ".")
        assert warm == expected


def test_the_code_fingerprint_reads_every_source_file_but_the_cases_in_path_order(tmp_path):
    # What keys the cache to the engine's and the rules' code: every .py and .toml file, in the
    # order of their paths' parts (a sort of the paths themselves: `a/` before `a-b/`), and
    # nothing under a rule's cases folder or a bytecode folder.
    from trllint.app.result_cache import _fingerprinted_files

    for relative in [
        "a/z.py", "a-b/x.py", "a/b/c.toml", "rule.py", "README.md", "a/cases/good.py",
        "a/cases/more/deep.py", "a/__pycache__/z.cpython-311.pyc", "z/notes.txt", "z/__init__.py",
    ]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x = 1\n", encoding="utf-8")
    expected = [
        p for p in sorted(tmp_path.rglob("*")) if p.suffix in (".py", ".toml") and "cases" not in p.relative_to(tmp_path).parts
    ]
    found = _fingerprinted_files(tmp_path)
    assert found == expected
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a/b/c.toml", "a/z.py", "a-b/x.py", "rule.py", "z/__init__.py"]
