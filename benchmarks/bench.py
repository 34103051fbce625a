"""trllint beside LibCST, Fixit and TorchFix on real training code, measured in one run.

    python benchmarks/bench.py                      # trl, accelerate, deepspeed, transformers
    python benchmarks/bench.py --packages trl,accelerate --repeat 5
    python benchmarks/bench.py --paths src/ --limit 500 --skip fixit,torchfix
    python benchmarks/bench.py --only-large --large 3     # the pre-commit case on big scripts

Every measurement is a fresh process timed from start to exit (wall clock), so start-up is
counted the same way for every tool. Repetitions are interleaved (each round runs every
measurement once, in the same order), so a machine that slows down mid-run slows all of them
alike; the table shows medians. Peak memory is the largest resident set of any single process
of the measurement (os.wait4 reports the maximum over the child and the workers it reaped).

The corpus is found with importlib.util.find_spec, never imported. Every tool gets the same
explicit list of files.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PACKAGES = ("trl", "accelerate", "deepspeed", "transformers")

# Parses every file in one process: the floor of any linter that parses everything.
PARSE_ALL = """
import sys
import libcst
failed = 0
for path in open(sys.argv[1], encoding="utf-8").read().splitlines():
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        libcst.parse_module(data)
    except Exception:
        failed += 1
sys.stderr.write(f"{failed} files did not parse\\n")
"""


# Run at start-up in each measured process (a sitecustomize on PYTHONPATH). An editable install of
# trllint in this interpreter, from another checkout, adds an import finder that would serve
# trllint.rules from that checkout while PYTHONPATH serves trllint from this one: a comparison of
# two checkouts then times one's engine with the other's rules. Without the finder, trllint comes
# from PYTHONPATH and its registry mounts this checkout's rules/ itself.
EDITABLE_FINDERS_DROPPED = """import sys
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
"""


# Imports LibCST and parses one file: what one file costs any LibCST linter from process start.
PARSE_ONE = """
import sys
import libcst
with open(sys.argv[1], "rb") as handle:
    libcst.parse_module(handle.read())
"""

# Each rule alone on one already parsed file, in one process: CPU seconds per rule (the syntax
# check every file gets included, and shown alone as "none").
RULE_COSTS = """
import json, sys, time
from trllint.rule.registry import all_rules
from trllint.engine.lint import RuleSet, lint_source, read_source
path = sys.argv[1]
data = open(path, "rb").read()
name = path.rsplit("/", 1)[-1]
costs = {}
for code, info in [("none", None), *sorted(all_rules().items())]:
    best = None
    for _ in range(int(sys.argv[2])):
        source = read_source(data, path, name)
        source.module
        start = time.process_time()
        findings = lint_source(source, name, RuleSet([info.rule] if info else []))
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    costs[code] = {"seconds": best, "findings": len(findings)}
print(json.dumps(costs))
"""

# A file is a training script when it steps an optimizer or subclasses a Trainer.
TRAINING_MARKERS = (b".backward(", b"Trainer)", b"Trainer, ")


@dataclass
class Measurement:
    key: str
    label: str
    argv: list[str]
    cwd: Path
    slow: bool = False  # runs only in the first --slow-repeat rounds
    before: object = None  # called before each run (clearing the cache, say)
    seconds: list[float] = field(default_factory=list)
    peak_kb: list[int] = field(default_factory=list)
    exit_codes: list[int] = field(default_factory=list)


def compile_checkout(checkout: Path) -> None:
    """Bytecode for the checkout's trllint and rules, as an installed trllint has. Without it, a
    measured process started where PYTHONDONTWRITEBYTECODE is set (this sandbox sets it) compiles
    every module edited since its bytecode was written, at every start, and an A/B credits one
    checkout with the other's compiling."""
    for folder in ("trllint", "rules"):
        if (checkout / folder).is_dir():
            compileall.compile_dir(checkout / folder, quiet=1)


def package_root(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"bench: package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def corpus_files(packages: list[str], paths: list[str], limit: int | None) -> list[Path]:
    roots = [package_root(name) for name in packages] + [Path(p) for p in paths]
    files: list[Path] = []
    for root in roots:
        if root.is_file():
            files.append(root.resolve())
            continue
        files.extend(sorted(p.resolve() for p in root.rglob("*.py") if p.is_file()))
    if limit is not None and limit < len(files):
        # Evenly spaced over the sorted list, so every package keeps its share.
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    return files


def run_once(m: Measurement, env: dict[str, str]) -> None:
    if callable(m.before):
        m.before()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(m.argv, cwd=m.cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        code = process.returncode
        if code not in (0, 1):  # 1 means "findings" for every linter here
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-2000:]
            raise SystemExit(f"bench: {m.label} failed with exit code {code}:\n{tail}")
    m.seconds.append(elapsed)
    m.peak_kb.append(usage.ru_maxrss)  # kilobytes on Linux
    m.exit_codes.append(code)


def machine() -> dict[str, object]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return {
        "cpu": cpu,
        "cores": cores,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "libcst": _version("libcst"),
        "fixit": _version("fixit"),
        "torchfix": _version("torchfix"),
    }


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _installed(name: str) -> bool:
    return (Path(sys.executable).parent / name).exists() or shutil.which(name) is not None


def executable(name: str) -> str:
    """The console script beside this interpreter (the `bench` extra installs it there)."""
    candidate = Path(sys.executable).parent / name
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"bench: {name} is not installed (pip install '.[bench]'), or pass --skip {name}")
    return found


def build(args: argparse.Namespace, files: list[Path], work: Path) -> list[Measurement]:
    python = sys.executable
    listing = work / "files.txt"
    listing.write_text("\n".join(map(str, files)) + "\n", encoding="utf-8")
    # trllint's cache lives beside the configuration it finds; the corpus has none, so the cache
    # goes to the working folder of the run, which is ours alone.
    lint_cwd = work / "lint"
    lint_cwd.mkdir()
    cache = lint_cwd / ".trllint_cache"
    one_cwd = work / "one"
    one_cwd.mkdir()
    one_cache = one_cwd / ".trllint_cache"
    # An explicit configuration in each working folder: without it trllint finds the nearest one
    # above the files (for a corpus inside this checkout's .venv, this checkout's own), and keeps
    # its cache there, where "cold" would not clear it. Preview on: every rule is timed, as in the
    # tables measured before preview rules left the default selection.
    for folder in (lint_cwd, one_cwd):
        (folder / "pyproject.toml").write_text("[tool.trllint]\npreview = true\n", encoding="utf-8")
    trllint = [python, "-m", "trllint", "--exit-zero", "--format", "json", "--config", str(lint_cwd / "pyproject.toml")]
    if args.jobs:
        trllint += ["--jobs", str(args.jobs)]
    names = [str(f) for f in files]
    one = str(args.one_file or median_file(files))

    skip = set(args.skip)
    if args.only_large:
        skip |= {"parse", "cold", "warm", "fixit", "torchfix", "one_file", "one_file_no_cache", "ruff"}
    if "ruff" not in skip and not _installed("ruff"):
        sys.stderr.write("bench: ruff is not installed (pip install ruff): its column is left out\n")
        skip.add("ruff")

    def tool(name: str) -> str:
        return name if name in skip else executable(name)  # a skipped tool need not be installed

    def clear(folder: Path):
        return lambda: shutil.rmtree(folder, ignore_errors=True)

    measurements = [
        Measurement("parse", "LibCST parse, every file, 1 process", [python, "-c", PARSE_ALL, str(listing)], work),
        Measurement("cold", "trllint, cold cache", trllint + names, lint_cwd, before=clear(cache)),
        Measurement("warm", "trllint, warm cache", trllint + names, lint_cwd),
        Measurement("fixit", "fixit lint", [tool("fixit"), "lint", *names], work, slow=True),
        Measurement("torchfix", "torchfix --select ALL", [tool("torchfix"), "--select", "ALL", *names], work, slow=True),
        Measurement(
            "one_file", "trllint one_file.py",
            [python, "-m", "trllint", "--config", str(one_cwd / "pyproject.toml"), one], one_cwd, before=clear(one_cache),
        ),
        Measurement(
            "ruff", "ruff check --select ALL",
            [tool("ruff"), "check", "--select", "ALL", "--isolated", "--no-cache", "--exit-zero", "--quiet", *names], work,
        ),
        Measurement(
            "one_file_no_cache", "trllint --no-cache one_file.py",
            [python, "-m", "trllint", "--no-cache", "--config", str(one_cwd / "pyproject.toml"), one], one_cwd,
        ),
        Measurement("import_libcst", 'python -c "import libcst"', [python, "-c", "import libcst"], work),
    ]
    # A script that imports a big module of its own project (a pre-commit hook on a fresh clone):
    # cold, without a cache; then warm, its cache (and its modules' facts) kept in its own folder.
    project_cwd = work / "project"
    project_cwd.mkdir()
    (project_cwd / "pyproject.toml").write_text("[tool.trllint]\npreview = true\n", encoding="utf-8")
    for index, script in enumerate(args.project_paths):
        lines = script.read_bytes().count(b"\n")
        label = f"{script.name} ({lines} lines, imports its project)"
        in_project = [python, "-m", "trllint", "--config", str(project_cwd / "pyproject.toml"), str(script)]
        measurements += [
            Measurement(f"project_{index}", f"trllint --no-cache {label}", in_project[:3] + ["--no-cache"] + in_project[3:], project_cwd),
            Measurement(f"project_warm_{index}", f"trllint {script.name}, warm cache", in_project, project_cwd),
            Measurement(f"project_parse_{index}", f"import libcst + parse {script.name}", [python, "-c", PARSE_ONE, str(script)], work),
            # The pre-commit case: only this script changed since the last run. A copy beside it
            # (its imports resolve alike) gets a new last line before each run; its project's
            # module facts stay in the cache.
            Measurement(
                f"project_changed_{index}", f"trllint {script.name}, only it changed",
                [*in_project[:-1], str(changed_copy(script))], project_cwd, before=edit_copy(script),
            ),
        ]
    for index, script in enumerate(args.large_paths):
        lines = script.read_bytes().count(b"\n")
        label = f"{script.name} ({lines} lines)"
        measurements += [
            Measurement(
                f"large_{index}", f"trllint {label}",
                [python, "-m", "trllint", "--no-cache", "--config", str(one_cwd / "pyproject.toml"), str(script)], one_cwd,
            ),
            Measurement(f"large_parse_{index}", f"import libcst + parse {label}", [python, "-c", PARSE_ONE, str(script)], work),
        ]
    return [m for m in measurements if m.key not in skip and not (m.key.startswith("large") and "large" in skip)]


def changed_copy(script: Path) -> Path:
    return script.with_name(f"trllint_bench_changed_{script.name}")


def edit_copy(script: Path):
    """Writes the script's copy with a last line no run has seen, so only that file changed."""
    edits = iter(range(1_000_000))
    return lambda: changed_copy(script).write_bytes(script.read_bytes() + f"\n# edit {next(edits)}\n".encode())


def large_scripts(args: argparse.Namespace, files: list[Path]) -> list[Path]:
    """The ``--large`` largest training scripts of the corpus, then every ``--large-script``."""
    sized = []
    for path in files:
        data = path.read_bytes()
        if any(marker in data for marker in TRAINING_MARKERS):
            sized.append((data.count(b"\n"), str(path), path))
    chosen = [path for _, _, path in sorted(sized, reverse=True)[: args.large]]
    return chosen + [Path(p).resolve() for p in args.large_script]


def rule_costs(script: Path, env: dict[str, str], repeat: int) -> dict[str, dict]:
    out = subprocess.run(
        [sys.executable, "-c", RULE_COSTS, str(script), str(repeat)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def median_file(files: list[Path]) -> Path:
    by_size = sorted(files, key=lambda p: p.stat().st_size)
    return by_size[len(by_size) // 2]


def table(results: list[dict], floor: float | None, one_file_base: float | None, large_bases: dict[str, float]) -> str:
    rows = [("measurement", "runs", "median s", "ratio to (1)", "peak MB")]
    for r in results:
        ratio = f"{r['median_s'] / floor:.3f}" if floor else "-"
        if r["key"] in ("one_file", "one_file_no_cache", "warm") or r["key"].startswith("project_warm_"):
            if one_file_base:
                ratio += f" ({r['median_s'] / one_file_base:.2f} x import libcst)"
        if large_bases.get(r["key"]):
            ratio += f" ({r['median_s'] / large_bases[r['key']]:.2f} x import libcst + parse)"
        rows.append((r["label"], str(r["runs"]), f"{r['median_s']:.2f}", ratio, f"{r['peak_mb']:.0f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", default=",".join(DEFAULT_PACKAGES), help="installed packages to lint (comma-separated; '' for none)")
    parser.add_argument("--paths", nargs="*", default=[], help="more files or folders to lint")
    parser.add_argument("--limit", type=int, help="at most this many files, evenly spaced over the corpus")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--slow-repeat", type=int, default=1, help="rounds that include Fixit and TorchFix (default 1)")
    parser.add_argument("--skip", type=lambda s: [x for x in s.split(",") if x], default=[],
                        help="measurements to leave out: parse,cold,warm,fixit,torchfix,ruff,one_file,"
                             "one_file_no_cache,import_libcst,large")
    parser.add_argument("--jobs", type=int, help="trllint --jobs (default: trllint's own default, the cores)")
    parser.add_argument("--one-file", help="the file for the one-file measurement (default: the corpus file of median size)")
    parser.add_argument("--large", type=int, default=3, help="the N largest training scripts of the corpus, one process each (default 3)")
    parser.add_argument("--large-script", nargs="*", default=[], help="more large scripts for that case")
    parser.add_argument("--only-large", action="store_true", help="only the large-script case (and import libcst)")
    parser.add_argument("--project-script", nargs="*", default=[],
                        help="scripts that import big modules of their own project (kohya-ss/sd-scripts' sdxl_train.py, "
                             "say): each linted alone cold without a cache, then warm, beside import libcst + its parse")
    parser.add_argument("--rule-repeat", type=int, default=3, help="runs per rule for the per-rule costs (best kept)")
    parser.add_argument("--json", default="benchmarks/results.json", help="where to write the results (default %(default)s)")
    args = parser.parse_args(argv)

    packages = [p for p in args.packages.split(",") if p]
    files = corpus_files(packages, args.paths, args.limit)
    # The large scripts come from the whole corpus, whatever --limit samples.
    args.large_paths = large_scripts(args, corpus_files(packages, args.paths, None) if args.limit else files)
    args.project_paths = [Path(p).resolve() for p in args.project_script]
    if not files:
        raise SystemExit("bench: the corpus is empty")
    compile_checkout(REPO)
    env = dict(os.environ)
    # The checkout's trllint and rules, whether or not one is installed; and no colour.
    shim = tempfile.TemporaryDirectory(prefix="trllint-bench-shim-")  # removed when main returns
    (Path(shim.name) / "sitecustomize.py").write_text(EDITABLE_FINDERS_DROPPED, encoding="utf-8")
    env["PYTHONPATH"] = os.pathsep.join([shim.name, str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["NO_COLOR"] = "1"
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    sys.stderr.write(f"bench: {len(files)} files, {lines} lines, {args.repeat} rounds\n")

    with tempfile.TemporaryDirectory(prefix="trllint-bench-") as temp:
        measurements = build(args, files, Path(temp))
        # One untimed run of each fast measurement first: the page cache and .pyc files are warm
        # for everyone, and the warm-cache run has a cache to read.
        for m in measurements:
            if not m.slow:
                run_once(m, env)
                m.seconds.clear(), m.peak_kb.clear(), m.exit_codes.clear()
        for round_index in range(args.repeat):
            for m in measurements:
                if m.slow and round_index >= args.slow_repeat:
                    continue
                run_once(m, env)
                sys.stderr.write(f"  round {round_index + 1}: {m.label}: {m.seconds[-1]:.2f} s\n")
    for script in args.project_paths:
        changed_copy(script).unlink(missing_ok=True)

    results = [
        {
            "key": m.key,
            "label": m.label,
            "runs": len(m.seconds),
            "median_s": statistics.median(m.seconds),
            "seconds": m.seconds,
            "peak_mb": max(m.peak_kb) / 1024,
            "argv": [a for a in m.argv[:6]] + (["..."] if len(m.argv) > 6 else []),
        }
        for m in measurements
        if m.seconds
    ]
    by_key = {r["key"]: r for r in results}
    floor = by_key.get("parse", {}).get("median_s")
    ratios = {}
    if floor:
        ratios = {f"{k}_to_parse": r["median_s"] / floor for k, r in by_key.items()}
    pairs = [("cold", "fixit"), ("cold", "torchfix"), ("cold", "ruff"), ("warm", "cold"), ("warm", "import_libcst"),
             ("one_file", "import_libcst"), ("one_file_no_cache", "import_libcst")]
    pairs += [(key, "import_libcst") for key in by_key if key.startswith("project_warm_")]
    for a, b in pairs:
        if a in by_key and b in by_key:
            ratios[f"{a}_to_{b}"] = by_key[a]["median_s"] / by_key[b]["median_s"]
    # Each script linted alone beside import libcst + its parse, one process each.
    large_bases: dict[str, float] = {}
    for key in by_key:
        for kind in ("large", "project"):
            if key.startswith(f"{kind}_") and not key.startswith((f"{kind}_parse_", f"{kind}_warm_")):
                base = by_key.get(f"{kind}_parse_{key.rsplit('_', 1)[1]}")
                if base:
                    large_bases[key] = base["median_s"]
                    ratios[f"{key}_to_import_and_parse"] = by_key[key]["median_s"] / base["median_s"]
    per_rule = {}
    if "large" not in args.skip:
        for script in args.large_paths:
            per_rule[str(script)] = {"lines": script.read_bytes().count(b"\n"), "rules": rule_costs(script, env, args.rule_repeat)}
    report = {
        "machine": machine(),
        "corpus": {"packages": packages, "paths": args.paths, "files": len(files), "lines": lines, "limit": args.limit},
        "one_file": str(args.one_file or median_file(files)),
        "repeat": args.repeat,
        "results": results,
        "ratios": ratios,
        "rule_costs": per_rule,
    }
    print(table(results, floor, by_key.get("import_libcst", {}).get("median_s"), large_bases))
    print()
    for name, value in ratios.items():
        print(f"{name}: {value:.3f}")
    for script, costs in per_rule.items():
        kilolines = costs["lines"] / 1000
        cells = ", ".join(
            f"{code} {c['seconds'] * 1000 / kilolines:.0f} ms/kl ({c['findings']} findings)" for code, c in costs["rules"].items()
        )
        print(f"per rule, CPU per 1,000 lines, {Path(script).name}: {cells}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    sys.stderr.write(f"bench: wrote {out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
