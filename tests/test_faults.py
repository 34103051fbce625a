"""Faults on purpose: `trllint --fix` killed with SIGKILL at random moments, and two runs at once.

The guarantee under test: every file is, at every moment, byte-identical to its original or to
its fully fixed form (a write is a temporary file beside it and one ``os.replace``), and
concurrent runs neither lose a fix nor corrupt the result cache.

``TRLLINT_KILL_ROUNDS`` sets how many kills (CI uses the default); ``TRLLINT_FAULT_SEED`` the seed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine_rules import ENTRY, REPO, SOUND_FIXING_RULES, run_cli
from trllint.engine.fix_loop import fix_source
from trllint.rule.ruleset import RuleSet
from trllint.core.source import SourceFile

KILL_ROUNDS = int(os.environ.get("TRLLINT_KILL_ROUNDS", "20"))
SEED = int(os.environ.get("TRLLINT_FAULT_SEED", "20261122"))
FILES = 300
SELECT = ("--select", "TRL901,TRL902")


def _module_text(rng: random.Random, index: int, size: int) -> str:
    parts = [f'"""Generated module {index}."""\n', f"import os\n\nREVISION = {index}\n\n"]
    for n in range(size):
        kind = rng.randrange(4)
        if kind == 0:
            parts.append(f"def step_{n}(batch, scale={rng.randrange(100)}):\n    if batch is None:\n        pass\n    return batch * scale + {n}\n\n")
        elif kind == 1:
            parts.append(f"class Holder{n}:\n    limit = {rng.randrange(10**6)}\n\n    def noop(self):\n        pass\n\n")
        elif kind == 2:
            parts.append(f"TABLE_{n} = [{', '.join(str(rng.randrange(1000)) for _ in range(rng.randrange(1, 12)))}]\n")
        else:
            parts.append(f"# a comment without numbers, {'x' * rng.randrange(40)}\nname_{n} = os.environ.get('NAME', 'default')\n")
    return "".join(parts)


def _encode(rng: random.Random, text: str) -> bytes:
    style = rng.randrange(5)
    if style == 0:
        return text.replace("\n", "\r\n").encode()
    if style == 1:
        return b"\xef\xbb\xbf" + text.encode()
    if style == 2:
        return ("# -*- coding: latin-1 -*-\n" + text.replace("default", "d\xe9faut")).encode("latin-1")
    return text.encode()


def _fully_fixed(data: bytes, name: str) -> bytes:
    source = SourceFile.from_bytes(data, name)
    outcome = fix_source(source, name, RuleSet(list(SOUND_FIXING_RULES)), unsafe=False)
    assert not outcome.problems and not outcome.findings, (name, outcome.problems)
    return source.to_bytes(outcome.text)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Originals and their fully fixed forms, by relative path; a few big files among many small."""
    rng = random.Random(SEED)
    originals: dict[str, bytes] = {}
    for index in range(FILES):
        size = rng.choice([1, 2, 3]) if index % 100 else 150  # three files of ~10 KB among small ones
        originals[f"pkg{index % 7}/mod_{index}.py"] = _encode(rng, _module_text(rng, index, size))
    fixed = {name: _fully_fixed(data, name) for name, data in originals.items()}
    assert sum(fixed[n] != originals[n] for n in originals) == FILES
    return originals, fixed


def _write_tree(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _states(root: Path, originals: dict[str, bytes], fixed: dict[str, bytes]) -> dict[str, int]:
    """Counts of files in each state; fails on any file that is neither original nor fixed."""
    counts = {"original": 0, "fixed": 0}
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*.py")}
    assert on_disk == set(originals), sorted(on_disk ^ set(originals))[:5]
    for name in originals:
        data = (root / name).read_bytes()
        if data == originals[name]:
            counts["original"] += 1
        elif data == fixed[name]:
            counts["fixed"] += 1
        else:
            pytest.fail(f"{name} is neither its original nor its fixed form ({len(data)} bytes)")
    return counts


def _leftovers(root: Path) -> list[Path]:
    """Files that are not the tree's own: only a killed writer's temporary files may be there."""
    stray = [p for p in root.rglob("*") if p.is_file() and p.suffix != ".py" and ".trllint_cache" not in p.parts]
    for path in stray:
        assert path.name.startswith(".mod_") and path.name.endswith(".trllint-tmp"), path
    return stray


def _start_fix(root: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), TRLLINT_TEST_RULES="")
    return subprocess.Popen(
        [sys.executable, str(ENTRY), "--fix", "--jobs", "2", *SELECT, *extra, "."],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the kill takes the workers with it
    )


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()
    # The workers die too, but a worker inside fsync dies only when it returns: wait for that,
    # or the next run could meet a writer that is still finishing its temporary file.
    deadline = time.monotonic() + 30
    while _group_running(process.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _group_running(group: int) -> bool:
    """A process of the group is still running (a zombie does not count: it writes nothing)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_bytes().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != b"Z":
            return True
    return False


def test_sigkill_at_random_moments_never_leaves_a_half_fixed_file(tmp_path: Path, corpus):
    originals, fixed = corpus
    rng = random.Random(SEED + 1)
    root = tmp_path / "tree"
    _write_tree(root, originals)

    started = time.monotonic()
    full = _start_fix(root)
    out, err = full.communicate(timeout=600)
    full_run = time.monotonic() - started
    assert full.returncode == 0, err.decode()
    assert _states(root, originals, fixed) == {"original": 0, "fixed": FILES}

    seen = {"original": 0, "fixed": 0, "mixed_trees": 0, "temp_files": 0}
    for round_number in range(KILL_ROUNDS):
        if round_number % 3 == 0:  # start again from scratch now and then, so kills land early too
            _write_tree(root, originals)
        process = _start_fix(root)
        time.sleep(rng.uniform(0.3, full_run))
        _kill_group(process)
        counts = _states(root, originals, fixed)
        seen["original"] += counts["original"]
        seen["fixed"] += counts["fixed"]
        seen["mixed_trees"] += bool(counts["original"] and counts["fixed"])
        seen["temp_files"] += len(_leftovers(root))

    # The same tree, killed many times, is finished by one more run.
    final = _start_fix(root)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()
    assert _states(root, originals, fixed) == {"original": 0, "fixed": FILES}
    # What killed writers left beside a file is removed when that file is next written, and a
    # file a writer was killed on is still original, so the final run writes (and tidies) it.
    assert _leftovers(root) == []
    print(f"\n{KILL_ROUNDS} kills over {FILES} files (full run {full_run:.1f} s): {seen}")
    # Some kills must land mid-run, or this test proves nothing.
    assert seen["mixed_trees"] >= 1, seen


def test_two_fix_runs_at_once_fix_everything_and_keep_the_cache_sound(tmp_path: Path, corpus):
    originals, fixed = corpus
    root = tmp_path / "tree"
    _write_tree(root, originals)
    env = dict(os.environ, PYTHONPATH=str(REPO), TRLLINT_TEST_RULES="")
    lint = [sys.executable, str(ENTRY), "--jobs", "2", *SELECT, "."]  # these two use the cache
    runs = [_start_fix(root), _start_fix(root)] + [
        subprocess.Popen(lint, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    for run, (out, err) in zip(runs[:2], outputs[:2]):
        # Each fix run either wrote a file or found it already written by the other: no error.
        assert run.returncode == 0, (out.decode(), err.decode())
        assert err.decode() == ""
    for run, (out, err) in zip(runs[2:], outputs[2:]):
        assert run.returncode in (0, 1) and "Traceback" not in err.decode(), err.decode()
    assert _states(root, originals, fixed) == {"original": 0, "fixed": FILES}
    assert _leftovers(root) == []

    cache_files = list((root / ".trllint_cache").glob("results-*.json"))
    assert cache_files, "the lint runs wrote no cache"
    for cache_file in cache_files:
        assert isinstance(json.loads(cache_file.read_text()), dict)
    # Entries written while files were changing must still describe the bytes now on disk.
    cached = run_cli(*SELECT, ".", cwd=root)
    fresh = run_cli("--no-cache", *SELECT, ".", cwd=root)
    assert (cached.returncode, cached.stdout) == (fresh.returncode, fresh.stdout) == (0, "All checks passed!\n")
    # And a cache entry for a file fixed behind its back is not trusted.
    victim = root / "pkg0/mod_0.py"
    victim.write_bytes(originals["pkg0/mod_0.py"])
    again = run_cli(*SELECT, ".", cwd=root)
    assert again.returncode == 1 and "pkg0/mod_0.py" in again.stdout


def test_only_orphaned_temporary_files_are_removed(tmp_path: Path):
    from trllint.app.atomic_write import write_atomically

    target = tmp_path / "m.py"
    target.write_bytes(b"x = 1\n")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = tmp_path / f".m.py.{int(dead.stdout)}.abc123.trllint-tmp"
    live = tmp_path / f".m.py.{os.getppid()}.def456.trllint-tmp"  # a writer still at work
    other = tmp_path / f".other.py.{int(dead.stdout)}.abc123.trllint-tmp"  # another file's
    for path in (orphan, live, other):
        path.write_bytes(b"x = (")
    write_atomically(target, b"x = (1)\n", expected_old=b"x = 1\n")
    assert target.read_bytes() == b"x = (1)\n"
    assert not orphan.exists() and live.exists() and other.exists()


def test_an_orphan_beside_a_file_another_run_already_fixed_is_removed(tmp_path: Path):
    # A run killed between its replace and its tidy-up leaves the file fixed and an earlier
    # run's orphan beside it; the next run finds nothing to write there and must still tidy.
    from trllint.app.atomic_write import write_atomically

    target = tmp_path / "m.py"
    target.write_bytes(b"x = (1)\n")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = tmp_path / f".m.py.{int(dead.stdout)}.abc123.trllint-tmp"
    orphan.write_bytes(b"x = (")
    write_atomically(target, b"x = (1)\n", expected_old=b"x = 1\n")
    assert target.read_bytes() == b"x = (1)\n" and not orphan.exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="tells a zombie by /proc")
def test_an_orphan_of_a_killed_writer_not_yet_reaped_is_removed(tmp_path: Path):
    # A killed worker lingers as a zombie until its parent (or init) reaps it; it is no writer.
    from trllint.app.atomic_write import write_atomically

    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while Path(f"/proc/{zombie.pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        target = tmp_path / "m.py"
        target.write_bytes(b"x = 1\n")
        orphan = tmp_path / f".m.py.{zombie.pid}.abc123.trllint-tmp"
        orphan.write_bytes(b"x = (")
        write_atomically(target, b"x = (1)\n", expected_old=b"x = 1\n")
        assert not orphan.exists()
    finally:
        zombie.wait()
