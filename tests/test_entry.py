"""The command's entry point leaves without freeing the process's objects (`cli.entry`): what the
run printed or wrote must all be there, and its exit status be main()'s."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Enough findings that the JSON report is far larger than a pipe's buffer and stdout's.
_BAD = textwrap.dedent(
    """
    from accelerate import Accelerator

    accelerator = Accelerator()
    model = accelerator.prepare(model)
    """
) + "".join(f"print(model.config.hidden_size_{i})\n" for i in range(400))


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.trllint]\npreview = true\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(_BAD, encoding="utf-8")
    return tmp_path


def _trllint(cwd: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trllint", "--no-cache", *args],
        cwd=cwd, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120,
        **kwargs,
    )


def test_a_report_larger_than_the_buffers_reaches_the_pipe_whole(tmp_path):
    project = _project(tmp_path)
    done = _trllint(project, "--format", "json", "train.py")
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)
    assert len(done.stdout) > 64 * 1024
    assert [f["code"] for f in findings] == ["TRL001"] * 400
    assert done.stderr == ""


def test_a_report_smaller_than_the_buffer_is_printed(tmp_path):
    # A short report sits in stdout's buffer until the process flushes it: an exit that frees
    # nothing flushes nothing by itself.
    project = _project(tmp_path)
    (project / "clean.py").write_text("x = 1\n", encoding="utf-8")
    (project / "one.py").write_text(_BAD.split("print(")[0] + "print(model.config)\n", encoding="utf-8")
    clean = _trllint(project, "clean.py")
    assert (clean.returncode, clean.stdout) == (0, "All checks passed!\n")
    one = _trllint(project, "one.py")
    assert one.returncode == 1
    assert one.stdout.startswith("one.py:") and "TRL001" in one.stdout and one.stdout.endswith("--fix).\n")


def test_the_exit_status_is_mains(tmp_path):
    project = _project(tmp_path)
    assert _trllint(project, "--exit-zero", "train.py").returncode == 0
    (project / "clean.py").write_text("x = 1\n", encoding="utf-8")
    assert _trllint(project, "clean.py").returncode == 0
    usage = _trllint(project, "--no-such-flag")
    assert usage.returncode == 2 and "unrecognized arguments" in usage.stderr


def test_the_report_file_and_the_fixed_file_are_written_whole(tmp_path):
    project = _project(tmp_path)
    done = _trllint(project, "--format", "json", "--output-file", "report.json", "--exit-zero", "train.py")
    assert done.returncode == 0, done.stderr
    assert len(json.loads((project / "report.json").read_text(encoding="utf-8"))) == 400
    fixed = _trllint(project, "--fix", "--exit-zero", "train.py")
    assert fixed.returncode == 0, fixed.stderr
    text = (project / "train.py").read_text(encoding="utf-8")
    assert text.count("accelerator.unwrap_model(model).config.hidden_size_") == 400
    compile(text, "train.py", "exec")


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path):
    project = _project(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "trllint", "--no-cache", "--format", "json", "train.py"],
        cwd=project, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()  # the reader leaves: the rest of the report meets a closed pipe
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1
    assert "Traceback" not in stderr and "Exception ignored" not in stderr


def test_a_profiled_run_exits_as_usual_so_the_profile_is_written(tmp_path):
    project = _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", "run.prof", "-m", "trllint", "--no-cache", "--exit-zero", "train.py"],
        cwd=project, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    import pstats

    assert pstats.Stats(str(project / "run.prof")).total_calls > 0


# Runs cli.entry() with os._exit wrapped to report how many collections the run made.
_COUNTING_DRIVER = """
import gc, os, sys
from trllint.app import cli
before = sum(s["collections"] for s in gc.get_stats())
real_exit = os._exit
def leave(code):
    sys.stderr.write(f"COLLECTIONS {sum(s['collections'] for s in gc.get_stats()) - before}\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = leave
sys.argv = ["trllint", *sys.argv[1:]]
cli.entry()
"""


def _collections(cwd: Path, *args: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _COUNTING_DRIVER, "--no-cache", "--exit-zero", *args],
        cwd=cwd, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stderr.rsplit("COLLECTIONS ", 1)[1])


def test_one_file_is_linted_without_a_collection_and_several_with(tmp_path):
    # A collection just before an exit that frees nothing would walk everything the lint built.
    project = _project(tmp_path)
    assert _collections(project, "train.py") == 0
    (project / "other.py").write_text("x = 1\n", encoding="utf-8")
    assert _collections(project, "train.py", "other.py") > 0  # a run of several collects after each file
