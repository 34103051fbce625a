"""benchmarks/ab.py: two checkouts timed alternately on the same files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AB = REPO / "benchmarks" / "ab.py"


def test_compares_two_checkouts_file_by_file(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("from accelerate import Accelerator\n\nmodel = Accelerator().prepare(model)\nprint(model.config)\n")
    done = subprocess.run(
        [sys.executable, str(AB), str(REPO), str(REPO), str(script), "--rounds", "1"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert header.split() == ["file", "import+parse", "base", "new", "change", "CPU", "base", "CPU", "new", "change"]
    assert row.split()[0] == "train.py" and row.rstrip().endswith("%")


def test_refuses_a_folder_that_is_no_checkout(tmp_path):
    done = subprocess.run(
        [sys.executable, str(AB), str(tmp_path), str(REPO), str(AB)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "is no trllint checkout" in done.stderr
