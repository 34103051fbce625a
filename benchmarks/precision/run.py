"""Precision on real code: lint pinned real training code and compare with labels.

    python benchmarks/precision/run.py [--split dev|test|all] [--mirror DIR] [--downloads DIR]
                                       [--cache DIR] [--packages trl,karpathy/nanoGPT]

1. ``pip download --no-deps`` every pinned release of ``packages.txt`` into ``<cache>/downloads``
   (skipped for a package whose wheel or sdist is already there or in ``--downloads DIR``);
   unpack each into ``<cache>/src/<name>-<version>/`` (a wheel as is; an sdist below its top
   ``name-version/`` folder);
2. write every repository commit pinned in ``repos.txt``, ``repos-test.txt`` and ``repos-dev.txt``
   (``owner/name@<commit>[:folder]``) out of
   its git directory under ``--mirror DIR`` (``DIR/owner+name/repo`` or ``DIR/owner+name``) with
   ``git archive <commit> [folder] | tar -x`` into ``<cache>/src/owner+name-<commit[:12]>/``;
3. make each such folder its own git work tree, as a user's checkout is: the cache lies in this
   repository's ignored files, which the linter would otherwise skip;
4. lint each with this checkout's trllint, every rule selected (opt-in and preview ones too),
   JSON output;
5. match every finding to ``labels/<CODE>.jsonl`` by (package, version, path, line, code) and print
   findings and strict precision per rule and per finding kind (real / all; debatable and
   unlabelled count as not real) for each split, the unlabelled findings and the stale labels
   (labels no finding matches);
6. with ``--results FILE``, write the run's numbers per split, rule and kind to the result file
   (``results.py`` describes it) that ``scripts/graduate.py`` reads.

The split (``split_of``) is by project and fixed: the nineteen releases the rules were tuned on
are dev by declaration; every repository of ``repos-test.txt`` (the sealed test split) is test by
declaration, and every repository of ``repos-dev.txt`` dev; every other project is test when the
first hex digit of the SHA-256 of its name (the PyPI name, or ``owner/name``, as written in the pin
file) is 0-7, else dev.

Exit 1 while any finding is unlabelled. Not in CI: it downloads.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VERDICTS = ("real", "wrong", "debatable")
NOT_LINTED = "TRL000"  # a file the linter could not read or parse: no rule's finding, not labelled


def _load_sibling(name: str):
    """A module of this folder, loaded from its file: the script runs from anywhere, and tests load it alone."""
    spec = importlib.util.spec_from_file_location(f"precision_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


results = _load_sibling("results")


# The releases of packages.txt the rules were tuned on before the split was made: dev, whatever their hash.
DECLARED_DEV = frozenset({
    "trl", "accelerate", "peft", "transformers", "deepspeed", "llamafactory", "axolotl", "openrlhf",
    "verl", "ms-swift", "alignment-handbook", "unsloth", "areal", "xtuner", "llm-foundry",
    "torchtune", "nemo-aligner", "liger-kernel",
})
SPLITS = ("dev", "test")
# Repositories declared test (or dev) before any of them was linted, whatever their hash; none is
# in another pin file, so the split of every project pinned there stays as the hash decides.
TEST_PINS = HERE / "repos-test.txt"
DEV_PINS = HERE / "repos-dev.txt"
# In a --snapshot folder: [commit, dirty] of the checkout that linted (what --rescore reports).
SNAPSHOT_COMMIT = "_linted_at.json"


def split_of(name: str) -> str:
    """The project's split, decided once: never change this rule or a project's name."""
    if name in DECLARED_DEV or name in pinned_in(DEV_PINS):
        return "dev"
    if name in pinned_in(TEST_PINS):
        return "test"
    return "test" if hashlib.sha256(name.encode("utf-8")).hexdigest()[0] < "8" else "dev"


@functools.cache
def pinned_in(declaration: Path) -> frozenset[str]:
    """The names a declaration file pins (``repos-test.txt``: the sealed test split)."""
    return frozenset(pin.name for pin in read_repo_pins(declaration))


@dataclass(frozen=True)
class Pin:
    """A pinned release (``version`` a PyPI version) or repository commit (``version`` 40 hex digits)."""

    name: str
    version: str
    folder_in_repo: str = ""  # a repository pin: only this folder of the commit is linted

    @property
    def is_repo(self) -> bool:
        return "/" in self.name

    @property
    def folder(self) -> str:
        if self.is_repo:
            return f"{self.name.replace('/', '+')}-{self.version[:12]}"
        return f"{self.name}-{self.version}"

    @property
    def split(self) -> str:
        return split_of(self.name)


_REPO_PIN = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]*/[\w.-]+)@(?P<commit>[0-9a-f]{40})(?::(?P<folder>[^\s:]+))?")


def read_pins(path: Path) -> list[Pin]:
    pins = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins.append(Pin(name.strip(), version.strip()))
    return pins


def read_repo_pins(path: Path) -> list[Pin]:
    """``owner/name@<40-hex commit>[:folder]`` per line; anything else is refused with its line."""
    pins = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = _REPO_PIN.fullmatch(line)
        if match is None:
            raise SystemExit(f"{path.name}:{number}: expected owner/name@<40 hex digits>[:folder], got {line!r}")
        pins.append(Pin(match["name"], match["commit"], match["folder"] or ""))
    return pins


def find_git_dir(pin: Pin, mirror: Path) -> Path | None:
    """The pin's git directory under ``mirror``: ``owner+name/repo`` (a fetched snapshot) or ``owner+name``."""
    base = mirror / pin.name.replace("/", "+")
    for candidate in (base / "repo", base, base / ".git"):
        if (candidate / "objects").is_dir() and (candidate / "HEAD").is_file():
            return candidate
    return None


def materialise(pin: Pin, mirror: Path | None, sources: Path) -> Path:
    """Write the pinned commit (its folder only, if one is named) into ``sources``, once."""
    root = sources / pin.folder
    marker = root / ".unpacked-from"
    wanted = f"{pin.version}:{pin.folder_in_repo}"
    if marker.is_file() and marker.read_text() == wanted:
        return root
    git_dir = find_git_dir(pin, mirror) if mirror else None
    if git_dir is None:
        where = f"under {mirror}" if mirror else "(no --mirror DIR given)"
        raise SystemExit(f"no git directory of {pin.name} {where}: fetch a snapshot of the repository "
                         f"holding commit {pin.version} first (see benchmarks/README.md)")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    missing = write_tree(git_dir, pin.version, root, pin.folder_in_repo)
    if missing is None:
        shutil.rmtree(root)
        raise SystemExit(f"git archive of {pin.name}@{pin.version} failed: the commit cannot be read")
    for path in missing:
        print(f"not in the snapshot, left out: {pin.folder}/{path}", file=sys.stderr)
    _own_work_tree(root)
    marker.write_text(wanted)
    return root


def write_tree(git_dir: Path, commit: str, root: Path, folder: str = "") -> list[str] | None:
    """Write ``commit``'s tree (its ``folder`` only, if one is named) under ``root``; the paths the
    snapshot lacks, left out. None when the commit itself cannot be read. (The recall benchmark
    writes each pair's project with it too.)"""
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, *([folder] if folder else [])],
        capture_output=True,
    )
    if archive.returncode == 0:
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
        return []
    # A snapshot may lack big blobs (data files, LFS): write out the blobs it has, one by one.
    return _write_blobs(git_dir, commit, folder, root)


def _write_blobs(git_dir: Path, commit: str, folder: str, root: Path) -> list[str] | None:
    """Write every regular file of the tree that the git directory holds; the paths it lacks.

    None when the commit itself cannot be read."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", commit, *([folder] if folder else [])],
        capture_output=True,
    )
    if listing.returncode != 0:
        return None
    files: list[tuple[str, str]] = []  # (blob id, path): regular files only (no links, no submodules)
    for entry in listing.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode in ("100644", "100755"):
            files.append((blob, path))
    request = "".join(f"{blob}\n" for blob, _ in files).encode()
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], input=request,
                           capture_output=True, check=True).stdout
    missing, at = [], 0
    for blob, path in files:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        if header[-1] == b"missing":
            missing.append(path)
            continue
        size = int(header[2])
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[at:at + size])
        at += size + 1  # the content, then a newline
    return missing


def _own_work_tree(root: Path) -> None:
    # The linter honours .gitignore, and the cache is ignored by this repository.
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def _dist_name(name: str) -> str:
    return name.replace("-", "_").lower()


def find_archive(pin: Pin, downloads: Path) -> Path | None:
    """The downloaded wheel or sdist of a pin (file names normalise ``-`` to ``_``)."""
    prefixes = {f"{_dist_name(pin.name)}-{pin.version}", f"{pin.name.lower()}-{pin.version}"}
    for path in sorted(downloads.glob("*")):
        stem = path.name.lower()
        if any(stem.startswith(p + "-") or stem.startswith(p + ".tar.gz") for p in prefixes):
            if path.suffix == ".whl" or path.name.endswith(".tar.gz"):
                return path
    return None


def download(pin: Pin, downloads: Path, extra: Path | None) -> Path:
    """The pin's archive: from ``extra`` (a read-only folder of earlier downloads) or ``downloads``."""
    archive = find_archive(pin, extra) if extra and extra.is_dir() else None
    archive = archive or find_archive(pin, downloads)
    if archive is None:
        downloads.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            # The source is read, never installed: a release for a newer Python is fine.
            [sys.executable, "-m", "pip", "download", "--no-deps", "--ignore-requires-python", "-q", "-d", str(downloads),
             f"{pin.name}=={pin.version}"],
        )
        archive = find_archive(pin, downloads)
        if archive is None:
            raise SystemExit(f"could not download {pin.name}=={pin.version} into {downloads}")
    return archive


def unpack(pin: Pin, archive: Path, sources: Path) -> Path:
    root = sources / pin.folder
    marker = root / ".unpacked-from"
    if marker.is_file() and marker.read_text() == archive.name:
        return root
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            wheel.extractall(root)
    else:
        with tarfile.open(archive) as sdist:
            sdist.extractall(root / "_sdist", filter="data")
        (top,) = (root / "_sdist").iterdir()  # the sdist's single ``name-version/`` folder
        for child in top.iterdir():
            child.rename(root / child.name)
        shutil.rmtree(root / "_sdist")
    _own_work_tree(root)
    marker.write_text(archive.name)
    return root


def _preview_flag() -> list[str]:
    """``--preview`` where this checkout's trllint has a preview tier: every rule, preview ones too."""
    help_text = subprocess.run([sys.executable, "-m", "trllint", "--help"], capture_output=True, text=True,
                               env=_env()).stdout
    return ["--preview"] if "--preview" in help_text else []


def lint(root: Path, config: Path, preview: list[str]) -> list[dict]:
    """Every finding of every rule in one unpacked project, paths relative to its root."""
    result = subprocess.run(
        [sys.executable, "-m", "trllint", "--select", "ALL", *preview, "--format", "json", "--no-cache",
         "--exit-zero", "--config", str(config), "."],
        cwd=root, capture_output=True, text=True, env=_env(),
    )
    if result.returncode != 0:
        raise SystemExit(f"trllint failed on {root}:\n{result.stderr}")
    # ALL selects TRL100 (stale `# noqa` codes) too: a check of the project's comments, not a
    # rule whose precision this benchmark measures.
    return [finding for finding in json.loads(result.stdout) if finding["code"] not in ENGINE_CHECKS]


ENGINE_CHECKS = {"TRL100"}


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


# --- matching and report (no I/O beyond reading the labels: unit-tested) -----------------------

Key = tuple[str, str, str, int, str]


def finding_key(pin: Pin, finding: dict) -> Key:
    return (pin.name, pin.version, Path(finding["path"]).as_posix(), int(finding["line"]), finding["code"])


def label_key(label: dict) -> Key:
    return (label["package"], label["version"], label["path"], int(label["line"]), label["code"])


def read_labels(folder: Path) -> dict[Key, dict]:
    labels: dict[Key, dict] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            label = json.loads(line)
            where = f"{path.name}:{number}"
            if label.get("verdict") not in VERDICTS:
                raise SystemExit(f"{where}: verdict must be one of {VERDICTS}")
            if not str(label.get("reason", "")).strip():
                raise SystemExit(f"{where}: a label needs a reason")
            key = label_key(label)
            if key in labels:
                raise SystemExit(f"{where}: labelled twice: {key}")
            labels[key] = label
    return labels


@dataclass
class Comparison:
    counts: dict[str, Counter]  # code -> Counter(findings, real, wrong, debatable, unlabelled)
    unlabelled: list[Key]
    stale: list[Key]


def compare(
    findings: list[Key], labels: dict[Key, dict], packages: set[tuple[str, str]] | None = None
) -> Comparison:
    """Count verdicts per rule; ``packages`` ((name, version) pairs) limits stale labels to those linted."""
    counts: dict[str, Counter] = {}
    unlabelled: list[Key] = []
    found = set(findings)
    for key in sorted(found):
        per_rule = counts.setdefault(key[4], Counter())
        per_rule["findings"] += 1
        label = labels.get(key)
        if label is None:
            per_rule["unlabelled"] += 1
            unlabelled.append(key)
        else:
            per_rule[label["verdict"]] += 1
    stale = sorted(k for k in labels if k not in found and (packages is None or k[:2] in packages))
    for key in stale:
        counts.setdefault(key[4], Counter())
    return Comparison(counts, unlabelled, stale)


def precision(counts: Counter) -> float | None:
    return counts["real"] / counts["findings"] if counts["findings"] else None


def table(comparison: Comparison) -> str:
    rows = ["| rule | findings | real | wrong | debatable | unlabelled | strict precision |",
            "|---|---|---|---|---|---|---|"]
    total: Counter = Counter()
    for code in sorted(comparison.counts):
        counts = comparison.counts[code]
        total.update(counts)
        rows.append(_row(code, counts))
    rows.append(_row("all", total))
    return "\n".join(rows)


def _row(name: str, counts: Counter) -> str:
    value = precision(counts)
    shown = "-" if value is None else f"{100 * value:.0f} %"
    cells = [counts[c] for c in ("findings", "real", "wrong", "debatable", "unlabelled")]
    return f"| {name} | " + " | ".join(str(c) for c in cells) + f" | {shown} |"


def select_pins(pins: list[Pin], split: str, wanted: str | None) -> list[Pin]:
    """The pins of one split (``all``: every pin), narrowed to ``wanted`` (names, name==version, owner/name)."""
    chosen = [p for p in pins if split == "all" or p.split == split]
    if wanted:
        names = {w.strip() for w in wanted.split(",")}
        chosen = [p for p in chosen if p.name in names or f"{p.name}=={p.version}" in names]
    return chosen


def per_kind(
    findings: list[Key], kinds: dict[Key, str], labels: dict[Key, dict], audits: dict[Key, list[str]], pins: list[Pin]
) -> dict[str, dict]:
    """Per split present among ``pins``: the numbers per rule and finding kind (``results.kind_counts``)."""
    by_split = {}
    for split in SPLITS:
        names = {p.name for p in pins if p.split == split}
        if names:
            by_split[split] = results.kind_counts([k for k in findings if k[0] in names], kinds, labels, audits)
    return by_split


def split_report(
    findings: list[Key], labels: dict[Key, dict], pins: list[Pin], kinds: dict[str, dict] | None = None
) -> tuple[str, Comparison]:
    """One table per split present among ``pins`` (with ``kinds``, ``per_kind``'s numbers, the
    split's table per kind beside it), then (for both) one over all of them."""
    parts, splits = [], 0
    for split in SPLITS:
        members = [p for p in pins if p.split == split]
        if not members:
            continue
        splits += 1
        names = {p.name for p in members}
        comparison = compare([k for k in findings if k[0] in names], labels, {(p.name, p.version) for p in members})
        parts.append(f"### {split}: {len(members)} pins\n\n{table(comparison)}")
        if kinds is not None:
            parts.append(f"Per finding kind ({split}):\n\n{results.kind_table(kinds.get(split, {}))}")
    whole = compare(findings, labels, {(p.name, p.version) for p in pins})
    if splits > 1:
        parts.append(f"### all: {len(pins)} pins\n\n{table(whole)}")
    return "\n\n".join(parts), whole


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all",
                        help="lint the projects of this split only (default: all, with a table per split)")
    parser.add_argument("--list", action="store_true", help="print every pin with its split, lint nothing")
    parser.add_argument("--mirror", type=Path,
                        help="a folder of git directories, DIR/owner+name/repo or DIR/owner+name, holding the "
                             "commits of repos.txt, repos-test.txt and repos-dev.txt (without it, repositories not already in "
                             "the cache fail)")
    parser.add_argument("--downloads", type=Path, help="a folder of wheels and sdists to read first")
    parser.add_argument("--cache", type=Path, default=HERE / "cache", help="git-ignored work folder")
    parser.add_argument("--packages", help="comma-separated names, name==version or owner/name: only these pins")
    parser.add_argument("--labels", type=Path, default=HERE / "labels")
    parser.add_argument("--findings", type=Path, help="also write every finding as JSON lines here")
    parser.add_argument("--snapshot", type=Path,
                        help="also write each project's whole JSON output (fixes included) to DIR/<folder>.json, "
                             "to compare two commits with diff -r: a refactoring must leave it byte-identical")
    parser.add_argument("--rescore", type=Path, metavar="DIR",
                        help="lint nothing: score the outputs a --snapshot run wrote to DIR (with the commit that "
                             "linted them) against today's labels, as that run would have")
    parser.add_argument("--fix-audit", type=Path, default=HERE / "fix_audit.jsonl",
                        help="the verdicts of audited safe fixes (default: fix_audit.jsonl beside this script)")
    parser.add_argument("--results", type=Path,
                        help="also write the numbers per split, rule and kind to this result file (results.py; "
                             "the committed one is results.json beside this script); its recall is kept")
    args = parser.parse_args(argv)

    every_pin = (
        read_pins(HERE / "packages.txt") + read_repo_pins(HERE / "repos.txt")
        + read_repo_pins(TEST_PINS) + read_repo_pins(DEV_PINS)
    )
    pins = select_pins(every_pin, args.split, args.packages)
    if args.list:
        for pin in pins:
            print(f"{pin.split}\t{pin.name}\t{pin.version}{':' + pin.folder_in_repo if pin.folder_in_repo else ''}")
        return 0
    downloads = args.cache / "downloads"
    sources = args.cache / "src"
    config = args.cache / "pyproject.toml"
    args.cache.mkdir(parents=True, exist_ok=True)
    config.write_text("# every rule, no excludes beyond the defaults\n[tool.trllint]\n")
    preview = _preview_flag()

    findings: list[Key] = []
    by_key: dict[Key, dict] = {}
    kinds: dict[Key, str] = {}
    linted_at = results.checkout_state(REPO)
    if args.rescore:
        commit, dirty = json.loads((args.rescore / SNAPSHOT_COMMIT).read_text(encoding="utf-8"))
        linted_at = (commit, dirty)
    elif args.snapshot:
        args.snapshot.mkdir(parents=True, exist_ok=True)
        (args.snapshot / SNAPSHOT_COMMIT).write_text(json.dumps(list(linted_at)), encoding="utf-8")
    for pin in pins:
        if args.rescore:
            linted = json.loads((args.rescore / f"{pin.folder}.json").read_text(encoding="utf-8"))
        else:
            if pin.is_repo:
                root = materialise(pin, args.mirror, sources)
            else:
                root = unpack(pin, download(pin, downloads, args.downloads), sources)
            linted = lint(root, config, preview)
        if args.snapshot and not args.rescore:
            (args.snapshot / f"{pin.folder}.json").write_text(json.dumps(linted, indent=1, sort_keys=True), encoding="utf-8")
        for finding in linted:
            if finding["code"] == NOT_LINTED:
                print(f"not linted: {pin.folder}/{finding['path']}: {finding['message']}", file=sys.stderr)
                continue
            key = finding_key(pin, finding)
            findings.append(key)
            by_key[key] = finding
            kinds[key] = finding.get("kind") or ""
        print(f"linted {pin.name}=={pin.version} ({pin.split})", file=sys.stderr)

    labels = read_labels(args.labels)
    # A verdict on a fix counts against its kind while this run still calls that fix safe.
    safe = {key for key, finding in by_key.items() if (finding.get("fix") or {}).get("applicability") == "safe"}
    audits = {key: verdicts for key, verdicts in results.read_fix_audit(args.fix_audit).items() if key in safe}
    numbers = per_kind(findings, kinds, labels, audits, pins)
    report, comparison = split_report(findings, labels, pins, numbers)
    if args.results:
        projects = {split: sum(p.split == split for p in pins) for split in SPLITS}
        document = results.precision_document(linted_at=linted_at, projects=projects, splits=numbers,
                                              selection={"split": args.split, "packages": args.packages})
        results.write_results(args.results, document, keep=("recall",))
    if args.findings:
        with open(args.findings, "w", encoding="utf-8") as out:
            for key in sorted(by_key):
                out.write(json.dumps({**dict(zip(("package", "version", "path", "line", "code"), key)),
                                      "split": split_of(key[0]), "kind": kinds[key], "message": by_key[key]["message"]}) + "\n")
    print(report)
    if comparison.unlabelled:
        print(f"\n{len(comparison.unlabelled)} unlabelled findings:")
        for key in comparison.unlabelled:
            print(f"  {key[4]} {key[0]}=={key[1]} {key[2]}:{key[3]}  {by_key[key]['message']}")
    if comparison.stale:
        print(f"\n{len(comparison.stale)} stale labels (no finding matches them):")
        for key in comparison.stale:
            print(f"  {key[4]} {key[0]}=={key[1]} {key[2]}:{key[3]}  [{labels[key]['verdict']}]")
    return 1 if comparison.unlabelled else 0


if __name__ == "__main__":
    sys.exit(main())
