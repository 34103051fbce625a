"""Do slices answer as whole modules do? Every module fact declared ``per_definition`` (the rank
flows' returns and in-place reductions, and any a rule declares), asked of real modules: each
definition's answer from its slice (trllint.semantic.project.slices) beside the whole module's.

    python benchmarks/slice_equivalence.py FOLDER... [--seconds 600] [--per-module 12]

Walks the folders for Python modules that spell a collective or a rank (the ones such a fact is
asked of), asks up to ``--per-module`` of each module's top-level definitions (a seeded sample)
both ways, and prints the count of questions, how many answered alike, and every difference.
Where the fact declares a proof that it says nothing (``ModuleFact.says_nothing``), the proof is
made on the slice and on the whole module too: wherever it holds, the whole module's answer
must be empty ("proof wrong" otherwise). ``--every-module`` asks every module, not only those that
spell a collective or a rank (the proof is made mostly of modules that spell none). Exit 1 when
any answer differs or any proof is wrong.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

from trllint.core.source import SourceDecodeError, SourceFile
from trllint.rule.registry import all_rules
from trllint.semantic.project.index import ProjectIndex
from trllint.semantic.project.outline import outline_of
from trllint.core.syntax import cpython_tree
from trllint.semantic.project.slices import ModuleCutter, ModuleSlice
from trllint.semantic.project.summaries import ModuleFact, registered_facts

_ASKED_OF = re.compile(r"all_reduce|gather|get_rank|is_main_process|reduce_mean")
MAX_BYTES = 120_000  # past this a module's whole answer takes seconds: the sample stays broad


def _own(answer: dict, name: str) -> dict:
    return {key: value for key, value in answer.items() if key == name or key.startswith(name + ".")}


def check_module(job: tuple[str, int]) -> list[dict]:
    path, per_module = Path(job[0]), job[1]
    try:
        data = path.read_bytes()
        if len(data) > MAX_BYTES:
            return []
        source = SourceFile.from_bytes(data, str(path))
    except (OSError, SourceDecodeError):
        return []
    tree = cpython_tree(source)
    if tree is None:
        return []
    outline = outline_of(tree)
    cutter = ModuleCutter(source.text, outline)
    names = sorted({s.defines for s in outline.statements if s.defines})
    random.Random(str(path)).shuffle(names)
    rows = []
    for fact in _per_definition_facts():
        whole = ProjectIndex._answer(fact, source.with_text(source.text))
        if whole is None:
            continue
        for name in names[:per_module]:
            cut = cutter.slice([name])
            if fact.says_nothing is not None:
                rows.extend(_proofs(fact, path, name, _own(whole, name), cut, cutter.whole([name])))
            if cut is None:
                rows.append({"module": str(path), "fact": fact.key, "name": name, "verdict": "not cut"})
                continue
            part = ProjectIndex._answer(fact, source.with_text(cut.text))
            same = part is not None and _own(part, name) == _own(whole, name)
            row = {"module": str(path), "fact": fact.key, "name": name, "read": cut.worth_reading}
            row["verdict"] = "same" if same else "different"
            if not same:
                row["whole"], row["slice"] = _own(whole, name), None if part is None else _own(part, name)
            rows.append(row)
    return rows


def _proofs(fact: ModuleFact, path: Path, name: str, answer: dict, *parts: ModuleSlice | None) -> list[dict]:
    """A row for each part (the slice, then the whole module) on which the fact's proof holds."""
    assert fact.says_nothing is not None
    rows = []
    for kind, part in zip(("slice", "whole"), parts):
        if part is not None and fact.says_nothing(part):
            verdict = "proof wrong" if answer else "proven"
            rows.append({"module": str(path), "fact": fact.key, "name": name, "proof on": kind, "verdict": verdict, "whole": answer})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--seconds", type=float, default=600, help="stop asking after this long")
    parser.add_argument("--per-module", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--every-module", action="store_true", help="not only modules that spell a collective or a rank")
    args = parser.parse_args()
    modules = sorted(
        str(p) for folder in args.folders for p in folder.rglob("*.py") if p.is_file() and (args.every_module or _spells(p))
    )
    random.Random(0).shuffle(modules)
    deadline = time.monotonic() + args.seconds
    rows: list[dict] = []
    with Pool(args.jobs) as pool:
        for found in pool.imap_unordered(check_module, [(m, args.per_module) for m in modules]):
            rows.extend(found)
            if time.monotonic() > deadline:
                pool.terminate()
                break
    verdicts = Counter(row["verdict"] for row in rows)
    cut = [row for row in rows if "read" in row]
    questions = [row for row in rows if "proof on" not in row]
    print(f"{len(questions)} questions over {len({row['module'] for row in questions})} modules: {dict(verdicts)}")
    if cut:
        small = sum(1 for row in cut if row["read"])
        print(f"slices under half of their module (the ones the index reads): {small} of {len(cut)}")
    for row in rows:
        if row["verdict"] not in ("same", "proven"):
            print(json.dumps(row))
    return 1 if verdicts["different"] or verdicts["proof wrong"] else 0


def _per_definition_facts() -> list[ModuleFact]:
    all_rules()  # the rules' modules declare their facts when imported
    return sorted((f for f in registered_facts().values() if f.per_definition), key=lambda f: f.key)


def _spells(path: Path) -> bool:
    try:
        return bool(_ASKED_OF.search(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
