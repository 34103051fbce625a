"""Two checkouts of trllint on the same files, run alternately in one run: what a change did.

    python benchmarks/ab.py BASE_CHECKOUT NEW_CHECKOUT FILE... [--rounds 7]

Each round lints each file once with each checkout (a fresh process, ``--no-cache``, preview on),
then times ``import libcst`` + a parse of that file, so a machine that slows down mid-run slows
all three alike. Each checkout runs its own engine and its own rules: the measured processes get
``PYTHONPATH=<shim>:<checkout>``, the shim dropping an editable install's import finders (see
``bench.py``). Prints the medians, each as a ratio to import + parse, and the change; then the
change in CPU seconds (user + system), which moves less when other work shares the machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import EDITABLE_FINDERS_DROPPED, PARSE_ONE, compile_checkout


def _seconds(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall-clock and CPU (user + system) seconds of one run. CPU time moves less than the wall
    clock when other work shares the machine."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"ab: {' '.join(argv)} exited {process.returncode}: {stderr.decode(errors='replace').strip()}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path, help="the checkout before the change")
    parser.add_argument("new", type=Path, help="the checkout after it")
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    checkouts = {"base": args.base.resolve(), "new": args.new.resolve()}
    args.files = [path.resolve() for path in args.files]  # the runs start in a folder of their own
    for checkout in checkouts.values():
        if not (checkout / "trllint" / "__main__.py").is_file():
            raise SystemExit(f"ab: {checkout} is no trllint checkout")
        compile_checkout(checkout)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "sitecustomize.py").write_text(EDITABLE_FINDERS_DROPPED, encoding="utf-8")
        # An explicit configuration: without one, trllint would find the nearest above each file.
        (work / "pyproject.toml").write_text("[tool.trllint]\npreview = true\n", encoding="utf-8")
        config = str(work / "pyproject.toml")
        times: dict[tuple[Path, str], list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for path in args.files:
                for label, checkout in checkouts.items():
                    env = {"PYTHONPATH": f"{work}:{checkout}", "PATH": "/usr/bin:/bin"}
                    command = [sys.executable, "-m", "trllint", "--no-cache", "--exit-zero", "--config", config, str(path)]
                    times.setdefault((path, label), []).append(_seconds(command, env, work))
                parse = [sys.executable, "-c", PARSE_ONE, str(path)]
                times.setdefault((path, "parse"), []).append(_seconds(parse, {"PATH": "/usr/bin:/bin"}, work))
    print(f"{'file':32} {'import+parse':>12} {'base':>14} {'new':>14} {'change':>7} {'CPU base':>9} {'CPU new':>8} {'change':>7}")
    for path in args.files:
        parse, base, new = (statistics.median(t for t, _ in times[(path, label)]) for label in ("parse", "base", "new"))
        cpu_base, cpu_new = (statistics.median(c for _, c in times[(path, label)]) for label in ("base", "new"))
        print(
            f"{path.name:32} {parse:11.2f}s {base:6.2f}s {base / parse:5.2f}x {new:6.2f}s {new / parse:5.2f}x"
            f" {100 * (new - base) / base:+6.0f}% {cpu_base:8.2f}s {cpu_new:7.2f}s {100 * (cpu_new - cpu_base) / cpu_base:+6.0f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
