"""scripts/graduate.py: the graduation bar per finding kind, and the files it generates from the
benchmark's result file (a small fake one here; the committed one where it exists)."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from trllint.rule.registry import all_rules

REPO = Path(__file__).resolve().parent.parent
FAKE_RESULTS = Path(__file__).resolve().parent / "fixtures" / "graduation" / "results.json"

_spec = importlib.util.spec_from_file_location("graduate", REPO / "scripts" / "graduate.py")
assert _spec and _spec.loader
graduate = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = graduate  # dataclasses look their module up
_spec.loader.exec_module(graduate)

NO_RESULTS = "benchmarks/precision/results.json is not committed yet: the lead produces it from a full run"


def _kinds(*names: str, unproven: tuple[str, ...] = ()) -> tuple:
    return tuple(graduate.KindInfo(name, f"fake kind {name}", name in unproven) for name in names)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A checkout with two fake rules (TST001 has a runtime proof, TST002 none) and both READMEs."""
    for folder in ("tst001_fake", "tst002_fake"):
        (tmp_path / "rules" / folder).mkdir(parents=True)
    (tmp_path / "tests" / "runtime").mkdir(parents=True)
    (tmp_path / "tests" / "runtime" / "test_tst001_fake.py").write_text("# the runtime proof\n")
    (tmp_path / "benchmarks").mkdir()
    for readme in (tmp_path / "README.md", tmp_path / "benchmarks" / "README.md"):
        readme.write_text(f"# Title\n\n{graduate.START}\nold table\n{graduate.END}\n\nAfter.\n")
    return tmp_path


def _rules(root: Path) -> list:
    return [
        graduate.RuleInfo("TST001", "fake-one", root / "rules" / "tst001_fake",
                          _kinds("precise", "imprecise", "rare", "guessed", unproven=("guessed",))),
        graduate.RuleInfo("TST002", "fake-two", root / "rules" / "tst002_fake",
                          _kinds("broken-fix", "half-labelled", "silent")),
    ]


def _fake() -> dict:
    return json.loads(FAKE_RESULTS.read_text(encoding="utf-8"))


def _statuses(document: dict, root: Path) -> dict[tuple[str, str], bool]:
    return {key: decision.stable for key, decision in graduate.decisions(document, _rules(root), root).items()}


def test_each_branch_of_the_bar_on_a_fake_result_file(root: Path):
    assert _statuses(_fake(), root) == {
        ("TST001", "precise"): True,  # (a): 18 of 20 real, one wrong is allowed there
        ("TST001", "imprecise"): False,  # 17 of 20
        ("TST001", "rare"): True,  # (b): 3 findings on 300 test projects, none wrong, one debatable, a runtime proof
        ("TST001", "guessed"): False,  # unproven: never, whatever its numbers
        ("TST002", "broken-fix"): False,  # 25 of 25 real, but a safe fix labelled broken
        ("TST002", "half-labelled"): False,  # an unlabelled finding
        ("TST002", "silent"): False,  # no finding on 300 test projects, but TST002 has no runtime proof
    }


def test_fewer_than_300_test_projects_graduate_nothing_by_the_second_branch(root: Path):
    document = _fake()
    document["projects"]["test"] = 299
    statuses = _statuses(document, root)
    assert statuses[("TST001", "rare")] is False
    assert statuses[("TST001", "precise")] is True  # (a) does not ask for a number of projects
    reason = graduate.decisions(document, _rules(root), root)[("TST001", "rare")].why
    assert "299 test projects" in reason


@pytest.mark.parametrize(
    "selection, why", [({"split": "all", "packages": "trl"}, "--packages trl"), ({"split": "dev"}, "dev split only")]
)
def test_a_partial_run_graduates_nothing(root: Path, selection: dict, why: str):
    document = _fake()
    document["selection"] = selection
    chosen = graduate.decisions(document, _rules(root), root)
    assert not any(decision.stable for decision in chosen.values())
    assert why in chosen[("TST001", "precise")].why


@pytest.mark.parametrize(
    "numbers, projects, runtime_proof, stable, why",
    [
        ({"findings": 20, "real": 18, "debatable": 2}, 60, False, True, "(a)"),
        ({"findings": 30, "real": 27, "wrong": 3}, 60, False, True, "(a)"),  # exactly 90 %
        ({"findings": 20, "real": 17, "debatable": 3}, 400, True, False, "strict precision 85 %"),
        ({"findings": 200, "real": 179}, 400, True, False, "strict precision 89 % < 90 %"),  # never rounded up
        ({"findings": 19, "real": 19}, 300, True, True, "(b)"),
        ({"findings": 19, "real": 19}, 300, False, False, "no runtime proof"),
        ({"findings": 3, "real": 2, "wrong": 1}, 300, True, False, "1 wrong"),
        ({"findings": 3, "real": 1, "debatable": 2}, 300, True, False, "2 debatable"),
        ({"findings": 2, "real": 1, "debatable": 1}, 300, True, True, "(b)"),
        (None, 300, True, True, "(b)"),  # no finding at all on 300 projects: it never cried wolf
        (None, 300, False, False, "no runtime proof"),
        ({"findings": 5, "real": 5}, 299, True, False, "fewer than 20 findings on 299 test projects"),
        ({"findings": 40, "real": 40, "broken_safe_fixes": 1}, 300, True, False, "1 safe fix labelled broken"),
        ({"findings": 4, "real": 4, "broken_safe_fixes": 2}, 300, True, False, "2 safe fixes labelled broken"),
        ({"findings": 40, "real": 39, "unlabelled": 1}, 300, True, False, "1 unlabelled"),
        ({"findings": 4, "real": 3, "unlabelled": 1}, 300, True, False, "1 unlabelled"),
    ],
)
def test_the_bar(numbers, projects, runtime_proof, stable, why):
    decision = graduate.decide(numbers, projects=projects, unproven=False, runtime_proof=runtime_proof)
    assert (decision.stable, why in decision.why) == (stable, True), decision


def test_an_unproven_kind_never_graduates():
    perfect = {"findings": 50, "real": 50}
    assert graduate.decide(perfect, projects=500, unproven=False, runtime_proof=True).stable
    decision = graduate.decide(perfect, projects=500, unproven=True, runtime_proof=True)
    assert not decision.stable and "unproven" in decision.why


def test_generated_files_from_a_fake_result_file(root: Path):
    files = graduate.generated_files(_fake(), FAKE_RESULTS, root, _rules(root))
    toml = files[root / "rules" / "tst001_fake" / "graduation.toml"]
    assert toml.startswith("# Generated by scripts/graduate.py from results.json at 000000000000 (2000-01-01)")
    assert "do not edit" in toml.splitlines()[0] and "`" not in toml
    assert toml.endswith('stable = ["precise", "rare"]\n')
    assert files[root / "rules" / "tst002_fake" / "graduation.toml"].endswith("stable = []\n")

    readme = files[root / "README.md"]
    assert readme.startswith("# Title\n\n") and readme.endswith(f"{graduate.END}\n\nAfter.\n")
    assert "old table" not in readme
    assert "| TST001 | fake-one | `precise` | 20 | 18 | 90 % |" in readme  # the default selection only
    assert "`guessed`" not in readme
    assert "| TST002 | fake-two | none: preview only | | | |" in readme
    assert "300 projects" in readme and "`000000000000` (2000-01-01)" in readme

    benchmarks = files[root / "benchmarks" / "README.md"]
    assert ("| TST001 | `precise` | stable | 20 | 18 | 1 | 1 | 0 | 90 % | 0 | fake-labeller-a, fake-labeller-b "
            "| 4 / 4 | (a)") in benchmarks
    assert "| TST002 | `broken-fix` | preview | 25 | 25 | 0 | 0 | 0 | 100 % | 1 | fake-labeller-b | 0 / 0 | 1 safe fix" in benchmarks
    assert "| TST001 | 4 | 3 | 2 | 0 |" in benchmarks  # recall: pairs, with --preview, by default, not evaluated


def test_a_file_without_markers_is_refused(root: Path):
    (root / "README.md").write_text("# Title\n\nno markers\n")
    with pytest.raises(SystemExit, match="no <!-- rules-table:start -->"):
        graduate.generated_files(_fake(), FAKE_RESULTS, root, _rules(root))


def test_kinds_the_rules_do_not_declare_are_named(root: Path):
    document = copy.deepcopy(_fake())
    document["splits"]["test"]["TST002"]["renamed"] = {"findings": 1, "real": 1}
    assert graduate.undeclared(document, _rules(root)) == ["TST002/renamed"]


def test_every_shipped_rule_has_a_runtime_proof_where_graduate_looks():
    for rule in graduate.shipped_rules():
        assert graduate.has_runtime_proof(rule, REPO), rule.code


# --- the committed result file and what it generates ------------------------------------------------


@pytest.fixture
def committed() -> dict:
    if not graduate.RESULTS.is_file():
        pytest.skip(NO_RESULTS)
    return json.loads(graduate.RESULTS.read_text(encoding="utf-8"))


def test_generated_files_are_what_graduate_writes_from_the_committed_result_file(committed: dict):
    files = graduate.generated_files(committed, graduate.RESULTS, REPO, graduate.shipped_rules())
    stale = [str(path.relative_to(REPO)) for path, text in files.items()
             if not path.is_file() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"run `python scripts/graduate.py`: {stale} differ from {graduate.RESULTS.name}"


def _table_statuses() -> dict[str, dict[str, str]]:
    """benchmarks/README.md's generated table: status by rule and kind (README's shows the stable ones)."""
    readme = (REPO / "benchmarks" / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index(graduate.START):readme.index(graduate.END)]
    rows = re.findall(r"^\| (TRL\d{3}) \| `([a-z0-9-]+)` \| (stable|preview) \|", table, flags=re.M)
    statuses: dict[str, dict[str, str]] = {}
    for code, kind, status in rows:
        statuses.setdefault(code, {})[kind] = status
    return statuses


def _explained_kinds(cli, code: str) -> dict[str, str]:
    out = cli("--explain", code).out
    return {kind: status for kind, status in re.findall(r"^- `([a-z0-9-]+)` \((stable|preview)\b", out, flags=re.M)}


def test_list_rules_and_explain_agree_with_the_generated_table(committed: dict, cli):
    table = _table_statuses()
    rules = all_rules()
    assert set(table) == set(rules)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"^\| (TRL\d{3}) \| [a-z0-9-]+ \| `([a-z0-9-]+)` \|", readme, flags=re.M)
    assert sorted(shown) == sorted((code, kind) for code, kinds in table.items() for kind, status in kinds.items()
                                   if status == "stable")
    listing = {line.split()[0]: line.split()[2] for line in cli("--list-rules").out.splitlines()[1:]}
    for code, kinds in table.items():
        assert _explained_kinds(cli, code) == kinds, code
        stable = [kind for kind, status in kinds.items() if status == "stable"]
        preview = [kind for kind, status in kinds.items() if status == "preview"]
        expected = "preview" if not stable else "stable+preview" if preview else "stable"
        assert listing[code] == expected, code


def test_explain_lists_each_kind_with_the_status_the_rule_has(cli, monkeypatch):
    for code, info in all_rules().items():
        expected = {kind: "stable" if kind in info.rule.stable_kinds else "preview" for kind in info.rule.kinds}
        assert _explained_kinds(cli, code) == expected, code
    rule = all_rules()["TRL003"].rule
    monkeypatch.setattr(rule, "stable_kinds", frozenset({"may-be-none"}))
    monkeypatch.setattr(rule, "status", "stable")
    explained = cli("--explain", "TRL003").out
    assert "- `may-be-none` (stable): a model that is None" in explained
    assert "never stable" in cli("--explain", "TRL002").out  # its launch-unknown kind is unproven
