"""Recall on real bugs: lint the buggy and the fixed version of every bug-fix pair.

    python benchmarks/recall/run.py --mirror DIR [--pairs FILE] [--only ID,...] [--json OUT]

Each pair of ``pairs.toml`` names a repository, a fix commit, its parent (the buggy version), a
file, a rule code and the lines of the bug in the parent. For every pair this script:

1. writes out the whole tree of each commit (``git archive``) from the repository's git snapshot
   under ``--mirror DIR`` (``DIR/<owner>+<name>/repo``, ``DIR/<owner>+<name>.git`` or
   ``DIR/<owner>+<name>``) into a temporary folder: the pair's file is linted inside its project,
   as a user, a pre-commit hook or CI lints it, with the launch scripts, configs and modules the
   project holds (the precision benchmark lints whole projects alike). The project's own
   ``[tool.trllint]``, if any, is replaced by an empty one, so that no configuration applies.
   ``--file-alone`` instead writes only the file and the ``context`` paths the pair lists
   (``git show <commit>:<path>``): what the file itself proves;
2. lints the pair's file with this checkout's trllint (``--select ALL --format json``, plus
   ``--preview`` when the CLI has it);
3. counts the pair **caught** when the parent has a finding of the pair's rule within ``NEAR``
   lines of a bug line, and the fix **silent** when the fixed file has no finding of that rule
   within ``NEAR`` lines of where the bug lines went (the fix's own lines, found by diffing the
   two versions).

It prints one row per pair, then per rule and per split: pairs, caught, fixed versions silent.
With ``--results FILE`` it lints every pair both with ``--preview`` and in the default selection
and writes, per rule, the pairs, those caught each way and those it could not evaluate under the
``recall`` key of the benchmark's result file (``benchmarks/precision/results.py``), keeping the
rest of the file.
The split is the precision benchmark's, by the pair's ``project`` (the name the precision
benchmark's pin files give the project): see ``split_of``. Never commits or keeps the fetched
source: everything is written under a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NEAR = 2  # a finding this many lines from a bug line still points at it (a statement's first line)
SPLITS = ("dev", "test")

# The precision benchmark's split rule: the nineteen releases the rules were tuned on
# are dev by declaration; any other project is test when the first hex digit of the SHA-256 of
# its name is 0-7, else dev. benchmarks/precision/run.py owns the rule once it has it; this copy
# is used only while that file does not define ``split_of``.
_DECLARED_DEV = frozenset({
    "trl", "accelerate", "peft", "transformers", "deepspeed", "llamafactory", "axolotl", "openrlhf",
    "verl", "ms-swift", "alignment-handbook", "unsloth", "areal", "xtuner", "llm-foundry",
    "torchtune", "nemo-aligner", "liger-kernel",
})


def _own_split_of(name: str) -> str:
    if name in _DECLARED_DEV:
        return "dev"
    return "test" if hashlib.sha256(name.encode("utf-8")).hexdigest()[0] < "8" else "dev"


def _precision_run():
    """The precision benchmark's script, whose split rule and snapshot reading this one shares."""
    path = REPO / "benchmarks" / "precision" / "run.py"
    spec = importlib.util.spec_from_file_location("precision_run", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - a file that cannot be imported has no rule to offer
        del sys.modules[spec.name]
        return None
    return module


PRECISION = _precision_run()
split_of = getattr(PRECISION, "split_of", None) or _own_split_of


@dataclass(frozen=True)
class Pair:
    id: str
    project: str
    repo: str
    fix: str
    parent: str
    path: str
    code: str
    lines: tuple[int, ...]
    description: str
    context: tuple[str, ...] = ()

    @property
    def split(self) -> str:
        return split_of(self.project)


@dataclass
class Outcome:
    pair: Pair
    caught: bool = False
    fix_silent: bool = False
    parent_lines: list[int] = field(default_factory=list)  # the rule's findings on the parent file
    fix_lines: list[int] = field(default_factory=list)  # ... and on the fixed file
    fix_region: tuple[int, int] = (0, 0)  # where the bug lines went in the fixed file
    caught_kinds: list[str] = field(default_factory=list)  # the finding kinds near a bug line
    error: str = ""


def read_pairs(path: Path) -> list[Pair]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        sys.exit(f"recall: cannot read {path}: {exc}")
    pairs = []
    for number, entry in enumerate(data.get("pair", []), 1):
        try:
            pairs.append(Pair(
                id=entry["id"], project=entry["project"], repo=entry["repo"], fix=entry["fix"],
                parent=entry["parent"], path=entry["path"], code=entry["code"],
                lines=tuple(entry["lines"]), description=entry["description"],
                context=tuple(entry.get("context", ())),
            ))
        except KeyError as exc:
            sys.exit(f"recall: pair {number} of {path} has no {exc.args[0]}")
    ids = [p.id for p in pairs]
    if len(set(ids)) != len(ids):
        sys.exit(f"recall: {path} repeats a pair id")
    return pairs


def git_dir(mirror: Path, repo: str) -> Path | None:
    stem = repo.replace("/", "+")
    for candidate in (mirror / stem / "repo", mirror / f"{stem}.git", mirror / stem):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    return None


def show(gitdir: Path, commit: str, path: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={gitdir}", "show", f"{commit}:{path}"],
        capture_output=True, text=True, errors="replace",
    )
    if done.returncode != 0:
        raise LookupError(f"git show {commit[:12]}:{path}: {done.stderr.strip()}")
    return done.stdout


def has_preview_flag() -> bool:
    done = subprocess.run([sys.executable, "-m", "trllint", "--help"], capture_output=True, text=True, cwd=REPO)
    return "--preview" in done.stdout


def lint(root: Path, preview: bool, paths: list[str]) -> list[dict]:
    command = [sys.executable, "-m", "trllint", "--format", "json", "--select", "ALL", "--no-cache",
               "--exit-zero", "--jobs", "1"]
    if preview:
        command.append("--preview")
    done = subprocess.run(command + paths, capture_output=True, text=True, cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"trllint exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout or "[]")


def materialise(root: Path, gitdir: Path, commit: str, paths: list[str]) -> None:
    (root / "pyproject.toml").parent.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.trllint]\n", encoding="utf-8")
    for path in paths:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(show(gitdir, commit, path), encoding="utf-8")


def materialise_project(root: Path, gitdir: Path, commit: str) -> None:
    """The whole tree of ``commit`` under ``root``, its trllint configuration emptied."""
    root.mkdir(parents=True, exist_ok=True)
    # A snapshot may lack its largest blobs (weights, images): left out, as the precision benchmark
    # leaves them.
    if PRECISION is None or PRECISION.write_tree(gitdir, commit, root) is None:
        raise LookupError(f"cannot write out {commit[:12]} from {gitdir}")
    config = root / "pyproject.toml"
    text = config.read_text(encoding="utf-8", errors="replace") if config.is_file() else ""
    # A project's own [tool.trllint] would change what runs; other tools' sections are kept (the
    # file marks the project root).
    kept = re.sub(r"(?ms)^\[tool\.trllint[^\]]*\].*?(?=^\[|\Z)", "", text)
    config.write_text(kept.rstrip() + "\n\n[tool.trllint]\n", encoding="utf-8")


def fix_region(parent_text: str, fix_text: str, lines: tuple[int, ...]) -> tuple[int, int]:
    """The lines of the fixed file that the bug lines became (1-based, inclusive)."""
    matcher = difflib.SequenceMatcher(None, parent_text.splitlines(), fix_text.splitlines(), autojunk=False)
    mapped: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for line in lines:
            if i1 < line <= i2 or (i1 == i2 and line == i1):
                if tag == "equal":
                    mapped.append(j1 + (line - i1))
                else:
                    mapped.extend((j1 + 1, max(j1 + 1, j2)))
    return (min(mapped), max(mapped)) if mapped else (0, 0)


def near(found: list[int], low: int, high: int) -> bool:
    return any(low - NEAR <= line <= high + NEAR for line in found)


def evaluate(pair: Pair, mirror: Path, workdir: Path, previews: tuple[bool, ...], in_project: bool = True) -> list[Outcome]:
    """The pair's outcome for each of ``previews`` (lint with ``--preview`` or not), from one
    copy of each version."""
    outcomes = [Outcome(pair) for _ in previews]
    gitdir = git_dir(mirror, pair.repo)
    if gitdir is None:
        for outcome in outcomes:
            outcome.error = f"no git snapshot of {pair.repo} under {mirror}"
        return outcomes
    paths = [pair.path, *pair.context]
    try:
        sides: dict[tuple[str, bool], list[dict]] = {}
        for side, commit in (("parent", pair.parent), ("fix", pair.fix)):
            root = workdir / pair.id / side
            if in_project:
                materialise_project(root, gitdir, commit)
            else:
                materialise(root, gitdir, commit, paths)
            for preview in previews:
                found = [f for f in lint(root, preview, [pair.path]) if f["code"] == pair.code and f["path"] == pair.path]
                sides[side, preview] = found
        parent_text = (workdir / pair.id / "parent" / pair.path).read_text(encoding="utf-8")
        fix_text = (workdir / pair.id / "fix" / pair.path).read_text(encoding="utf-8")
    except (LookupError, RuntimeError, json.JSONDecodeError, OSError, subprocess.CalledProcessError) as exc:
        for outcome in outcomes:
            outcome.error = str(exc)
        return outcomes
    finally:
        shutil.rmtree(workdir / pair.id, ignore_errors=True)  # a project tree is large: one at a time
    region = fix_region(parent_text, fix_text, pair.lines)
    for outcome, preview in zip(outcomes, previews):
        parent, fixed = sides["parent", preview], sides["fix", preview]
        outcome.parent_lines = sorted({f["line"] for f in parent})
        outcome.fix_lines = sorted({f["line"] for f in fixed})
        outcome.caught_kinds = sorted({f.get("kind", "") for f in parent
                                       if any(near([f["line"]], line, line) for line in pair.lines)})
        outcome.caught = bool(outcome.caught_kinds)
        outcome.fix_region = region
        outcome.fix_silent = not near(outcome.fix_lines, *region)
    return outcomes


def summary(outcomes: list[Outcome]) -> str:
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for o in outcomes:
        if o.error:
            continue
        for key in ((o.pair.code, o.pair.split), (o.pair.code, "all"), ("all", o.pair.split), ("all", "all")):
            row = table[key]
            row[0] += 1
            row[1] += o.caught
            row[2] += o.fix_silent
    codes = sorted({code for code, _ in table if code != "all"}) + ["all"]
    head = "| rule | " + " | ".join(f"{s}: caught / pairs, fix silent" for s in (*SPLITS, "all")) + " |"
    rows = [head, "|" + "---|" * (len(SPLITS) + 2)]
    for code in codes:
        cells = []
        for split in (*SPLITS, "all"):
            pairs, caught, silent = table.get((code, split), [0, 0, 0])
            cells.append(f"{caught} / {pairs}, {silent}" if pairs else "-")
        rows.append(f"| {code} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def recall_by_rule(with_preview: list[Outcome], by_default: list[Outcome]) -> dict[str, dict[str, int]]:
    """Per rule: the pairs, those caught with --preview and in the default selection, and those
    either run could not evaluate (left out of the other counts)."""
    rules: dict[str, dict[str, int]] = {}
    for preview, default in zip(with_preview, by_default):
        entry = rules.setdefault(preview.pair.code, {"pairs": 0, "caught_preview": 0, "caught_default": 0, "errors": 0})
        if preview.error or default.error:
            entry["errors"] += 1
            continue
        entry["pairs"] += 1
        entry["caught_preview"] += preview.caught
        entry["caught_default"] += default.caught
    return dict(sorted(rules.items()))


def write_recall(path: Path, rules: dict[str, dict[str, int]], pairs_file: Path, method: str) -> None:
    """The ``recall`` key of the result file at ``path``; the precision run's keys are kept."""
    spec = importlib.util.spec_from_file_location("precision_results", REPO / "benchmarks" / "precision" / "results.py")
    assert spec is not None and spec.loader is not None
    results = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(results)
    commit, dirty = results.checkout_state(REPO)
    recall = {"date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(), "commit": commit,
              "dirty": dirty, "pairs_file": pairs_file.name, "method": method, "rules": rules}
    earlier = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    results.write_results(path, {"recall": recall}, keep=[key for key in earlier if key != "recall"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True,
                        help="folder of git snapshots: <owner>+<name>/repo, <owner>+<name>.git or <owner>+<name>")
    parser.add_argument("--pairs", type=Path, default=HERE / "pairs.toml")
    parser.add_argument("--only", help="comma-separated pair ids")
    parser.add_argument("--json", type=Path, help="also write every pair's outcome here")
    parser.add_argument(
        "--default-selection", action="store_true", help="lint without --preview: the recall of what users get by default"
    )
    parser.add_argument("--file-alone", action="store_true",
                        help="lint each pair's file with only its context paths, not inside its project's tree")
    parser.add_argument("--results", type=Path,
                        help="lint each pair with --preview and without, and write the recall per rule under the "
                             "'recall' key of this result file (benchmarks/precision/results.json), keeping the rest")
    args = parser.parse_args(argv)
    if not args.mirror.is_dir():
        parser.error(f"--mirror {args.mirror} is not a folder")
    pairs = read_pairs(args.pairs)
    if args.only:
        wanted = {w.strip() for w in args.only.split(",")}
        unknown = wanted - {p.id for p in pairs}
        if unknown:
            parser.error(f"no such pair: {', '.join(sorted(unknown))}")
        pairs = [p for p in pairs if p.id in wanted]
    preview = has_preview_flag() and not args.default_selection
    # With --results, each pair's copies are linted both ways (the first is what the table shows).
    previews = (preview, not preview) if args.results else (preview,)
    with tempfile.TemporaryDirectory(prefix="trllint-recall-") as tmp:
        both = [evaluate(pair, args.mirror, Path(tmp), previews, not args.file_alone) for pair in pairs]
    outcomes = [pair_outcomes[0] for pair_outcomes in both]
    if args.results:
        other = [pair_outcomes[1] for pair_outcomes in both]
        with_preview, by_default = (outcomes, other) if preview else (other, outcomes)
        write_recall(args.results, recall_by_rule(with_preview, by_default), args.pairs,
                     "alone" if args.file_alone else "in its project")
    where = "each file alone" if args.file_alone else "each file in its project"
    print(f"trllint {'with' if preview else 'without'} --preview, {len(pairs)} pairs, {where}, NEAR={NEAR}\n")
    print("| pair | split | rule | bug lines | caught | parent findings | fix silent | fix findings |")
    print("|---|---|---|---|---|---|---|---|")
    for o in outcomes:
        p = o.pair
        if o.error:
            print(f"| {p.id} | {p.split} | {p.code} | {list(p.lines)} | error: {o.error} | | | |")
            continue
        print(f"| {p.id} | {p.split} | {p.code} | {','.join(map(str, p.lines))} | {'yes' if o.caught else 'no'} "
              f"| {','.join(map(str, o.parent_lines)) or '-'} | {'yes' if o.fix_silent else 'no'} "
              f"| {','.join(map(str, o.fix_lines)) or '-'} |")
    print()
    print(summary(outcomes))
    errors = [o for o in outcomes if o.error]
    if args.json:
        args.json.write_text(json.dumps([
            {"id": o.pair.id, "split": o.pair.split, "code": o.pair.code, "caught": o.caught,
             "fix_silent": o.fix_silent, "parent_lines": o.parent_lines, "fix_lines": o.fix_lines,
             "fix_region": list(o.fix_region), "caught_kinds": o.caught_kinds, "error": o.error}
            for o in outcomes
        ], indent=2) + "\n", encoding="utf-8")
    if errors:
        print(f"\n{len(errors)} pair(s) could not be evaluated", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
