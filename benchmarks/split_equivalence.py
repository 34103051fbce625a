"""Do a file's rules find the same split over two processes (trllint.app.rule_split) as one after
the other? Every Python file of the folders, linted with every shipped rule (preview on, the
prefilters as a run has them) both ways, each file split whatever its size.

    python benchmarks/split_equivalence.py FOLDER... [--seconds 600] [--jobs 2]

Prints how many files were linted, how many were split (more than one rule checked them), their
findings, and every file whose findings differ (fixes, evidence and the preview mark compared
too). Exit 1 when any differs.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from multiprocessing import Pool
from pathlib import Path

from trllint.app import rule_split
from trllint.engine.pipeline import Mode, process_bytes
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet

MAX_BYTES = 400_000


def check_file(name: str) -> tuple[str, int, int, bool] | None:
    """(path, findings, forks, alike) for one file; None when it is not read."""
    path = Path(name)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > MAX_BYTES:
        return None
    rules = [info.rule for info in all_rules().values()]
    alone = process_bytes(data, name, path.name, RuleSet(rules, preview=True), Mode(), path)[0]
    forks = [0]
    fork = rule_split.os.fork

    def counted() -> int:
        forks[0] += 1
        return fork()

    rule_split.os.fork = counted  # type: ignore[assignment]  # the module's os is this process's os
    try:
        runner = rule_split.check_in_two_processes
        split = process_bytes(data, name, path.name, RuleSet(rules, preview=True, check_runner=runner), Mode(), path)[0]
    finally:
        rule_split.os.fork = fork  # type: ignore[assignment]
    same = [asdict(f) for f in alone.findings] == [asdict(f) for f in split.findings]
    return name, len(alone.findings), forks[0], same and alone.dependencies == split.dependencies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--seconds", type=float, default=600, help="stop starting new files after this long")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if not rule_split.available():
        print("the split needs Linux's fork and memfd_create", file=sys.stderr)
        return 2
    rule_split.MIN_CHARS = 0
    files = sorted(str(p) for folder in args.folders for p in folder.rglob("*.py") if p.is_file())
    deadline = time.monotonic() + args.seconds
    linted = split = findings = 0
    differ: list[str] = []
    with Pool(args.jobs) as pool:
        for result in pool.imap_unordered(check_file, files, chunksize=4):
            if result is not None:
                name, found, forks, same = result
                linted += 1
                split += forks > 0
                findings += found
                if not same:
                    differ.append(name)
            if time.monotonic() > deadline:
                pool.terminate()
                break
    print(f"{linted} files linted, {split} split over two processes, {findings} findings; {len(differ)} differ")
    for name in differ:
        print(f"  differs: {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
