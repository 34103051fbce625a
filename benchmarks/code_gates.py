"""The code tokens of the prefilters hide no finding, on real code.

    python benchmarks/code_gates.py FOLDER [FOLDER ...] [--jobs N]

A rule's prefilter may end in parts that ask CPython's tree (``Calls``, ``Reads``, ``Defines``,
``TreeCheck``: trllint.core.prefilter). For every Python file under the folders and every rule,
where the prefilter's text parts hold and its code parts do not, this lints the file with that
rule alone and the prefilter off: any finding there is one the code parts hid, and is printed.
Exit 1 when there is one. Point it at the precision benchmark's unpacked projects
(``benchmarks/precision/cache/src``); each file is read in its project, as a run reads it.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _check(paths: list[str]) -> tuple[int, int, list[str]]:
    from trllint.core.findings import Finding
    from trllint.engine.lint import lint_source, read_source
    from trllint.rule.base import prefilter_inputs
    from trllint.rule.registry import available_rules
    from trllint.rule.ruleset import RuleSet

    rules = [info.rule for info in available_rules().values() if info.rule.prefilter is not None]
    asked = spared = 0
    hidden: list[str] = []
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        source = read_source(data, path, os.path.basename(path))
        if isinstance(source, Finding) or not source.is_python:
            continue
        source.path = Path(path)
        code, reaches = prefilter_inputs(source)
        for rule in rules:
            if not rule.reads_file(os.path.basename(path)) or not rule.prefilter.holds(source.text, {}, reaches):
                continue  # the text (and the project) rule the file out already
            asked += 1
            if rule.prefilter.holds(source.text, {}, reaches, code):
                continue
            spared += 1
            found = lint_source(source, os.path.basename(path), RuleSet([rule], use_prefilter=False, preview=True))
            hidden += [f"{path}:{f.line}:{f.column}: {f.code} {f.message}" for f in found if f.code == rule.code]
        source.release()
    return asked, spared, hidden


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    files = sorted(str(p) for folder in args.folders for p in folder.rglob("*.py") if p.is_file())
    chunks = [files[i :: args.jobs * 8] for i in range(args.jobs * 8)]
    asked = spared = 0
    hidden: list[str] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for a, s, h in pool.map(_check, chunks):
            asked, spared, hidden = asked + a, spared + s, hidden + h
    print(f"{len(files)} files; {asked} (file, rule) pairs passed the text parts; the code parts spared {spared}")
    for line in hidden:
        print("hidden:", line)
    print(f"{len(hidden)} findings hidden by the code parts")
    return 1 if hidden else 0


if __name__ == "__main__":
    sys.exit(main())
