"""Precision on real code: lint pinned releases of real training code and compare with labels.

    python benchmarks/precision/run.py [--downloads DIR] [--cache DIR] [--packages trl,verl]

1. ``pip download --no-deps`` every pinned package of ``packages.txt`` into ``<cache>/downloads``
   (skipped for a package whose wheel or sdist is already there or in ``--downloads DIR``);
2. unpack each into ``<cache>/src/<name>-<version>/`` (a wheel as is; an sdist below its top
   ``name-version/`` folder) and make that folder its own git work tree, as a user's checkout is:
   the cache lies in this repository's ignored files, which the linter would otherwise skip;
3. lint each with this checkout's trllint, every rule selected (opt-in and preview ones too: the
   benchmark is what graduates them), JSON output, whose ``preview`` field marks preview findings;
4. match every finding to ``labels/<CODE>.jsonl`` by (package, version, path, line, code) and print
   findings and strict precision per rule (real / all; debatable and unlabelled count as not
   real), the unlabelled findings and the stale labels (labels no finding matches).

Exit 1 while any finding is unlabelled. Not in CI: it downloads.
"""

from __future__ import annotations

import argparse
import json
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


@dataclass(frozen=True)
class Pin:
    name: str
    version: str

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"


def read_pins(path: Path) -> list[Pin]:
    pins = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins.append(Pin(name.strip(), version.strip()))
    return pins


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
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(downloads),
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
    # Its own work tree: the linter honours .gitignore, and the cache is ignored by this repository.
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    marker.write_text(archive.name)
    return root


def lint(root: Path, config: Path) -> list[dict]:
    """Every finding of every rule in one unpacked package, paths relative to its root."""
    result = subprocess.run(
        [sys.executable, "-m", "trllint", "--select", "ALL", "--preview", "--format", "json", "--no-cache",
         "--exit-zero", "--config", str(config), "."],
        cwd=root, capture_output=True, text=True, env=_env(),
    )
    if result.returncode != 0:
        raise SystemExit(f"trllint failed on {root}:\n{result.stderr}")
    return json.loads(result.stdout)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--downloads", type=Path, help="a folder of wheels and sdists to read first")
    parser.add_argument("--cache", type=Path, default=HERE / "cache", help="git-ignored work folder")
    parser.add_argument("--packages", help="comma-separated names or name==version: only these pins")
    parser.add_argument("--labels", type=Path, default=HERE / "labels")
    parser.add_argument("--findings", type=Path, help="also write every finding as JSON lines here")
    parser.add_argument("--snapshot", type=Path,
                        help="also write each package's whole JSON output (fixes included) to DIR/<name>-<version>.json, "
                             "to compare two commits with diff -r: a refactoring must leave it byte-identical")
    args = parser.parse_args(argv)

    pins = read_pins(HERE / "packages.txt")
    if args.packages:
        wanted = {p.strip() for p in args.packages.split(",")}
        pins = [p for p in pins if p.name in wanted or f"{p.name}=={p.version}" in wanted]
    downloads = args.cache / "downloads"
    sources = args.cache / "src"
    config = args.cache / "pyproject.toml"
    args.cache.mkdir(parents=True, exist_ok=True)
    config.write_text("# every rule, no excludes beyond the defaults\n[tool.trllint]\n")

    findings: list[Key] = []
    by_key: dict[Key, dict] = {}
    for pin in pins:
        root = unpack(pin, download(pin, downloads, args.downloads), sources)
        linted = lint(root, config)
        if args.snapshot:
            args.snapshot.mkdir(parents=True, exist_ok=True)
            (args.snapshot / f"{pin.folder}.json").write_text(json.dumps(linted, indent=1, sort_keys=True), encoding="utf-8")
        for finding in linted:
            if finding["code"] == NOT_LINTED:
                print(f"not linted: {pin.folder}/{finding['path']}: {finding['message']}", file=sys.stderr)
                continue
            key = finding_key(pin, finding)
            findings.append(key)
            by_key[key] = finding
        print(f"linted {pin.name}=={pin.version}", file=sys.stderr)

    labels = read_labels(args.labels)
    comparison = compare(findings, labels, {(p.name, p.version) for p in pins})
    if args.findings:
        with open(args.findings, "w", encoding="utf-8") as out:
            for key in sorted(by_key):
                out.write(json.dumps({**dict(zip(("package", "version", "path", "line", "code"), key)),
                                      "message": by_key[key]["message"]}) + "\n")
    print(table(comparison))
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
