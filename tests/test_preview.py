"""The preview tier, as in Ruff: preview rules (TRL006) and preview findings of stable
rules (TRL005's lines it cannot read) run only when preview is on, by --preview or ``preview =
true``, on every path a run takes: the CLI, the configuration, the worker pool, the result cache,
standard input, --fix and --add-noqa.

These tests are of the tier, not of which kinds graduated (tests/test_graduation.py holds that):
every rule is made preview for them (``every_rule_preview``), and a test that needs a stable rule
to contrast with marks TRL005's "known-bad-range" kind stable (``trl005_stable``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import libcst as cst
import pytest

from trllint.core.source import SourceFile
from trllint.engine.fix_loop import fix_source
from trllint.engine.lint import lint_source
from trllint.engine.pipeline import add_noqa_bytes
from trllint.rule.base import AnyOf, Rule
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet

REPO = Path(__file__).resolve().parents[1]

# TRL006 (a preview rule): a collective only rank 0 enters.
COLLECTIVE_ON_RANK_ZERO = '''\
from accelerate import Accelerator

accelerator = Accelerator()


def evaluate(batch):
    if accelerator.is_main_process:
        total = accelerator.reduce(batch, reduction="sum")
        print(total)
'''
# TRL005: line 1 is the stable GRPO / vLLM range (the project runs TRL's vLLM generation, below);
# line 2 a line it calls malformed (preview).
REQUIREMENTS = "vllm>=0.6\ntorch=2.5.1\n"
GRPO_WITH_VLLM = "from trl import GRPOConfig\n\nconfig = GRPOConfig(output_dir='out', use_vllm=True)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "train.py").write_text(COLLECTIVE_ON_RANK_ZERO)
    (tmp_path / "requirements.txt").write_text(REQUIREMENTS)
    (tmp_path / "grpo.py").write_text(GRPO_WITH_VLLM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(autouse=True)
def every_rule_preview(monkeypatch) -> None:
    """No kind graduated: what graduation.toml files would say before the benchmark graduates any."""
    for info in all_rules().values():
        rule = info.rule
        monkeypatch.setattr(rule, "stable_kinds", frozenset())
        monkeypatch.setattr(rule, "status", "preview")
        unproven = "; ".join(kind.description for kind in rule.kinds.values() if kind.unproven)
        monkeypatch.setattr(rule, "preview_findings", unproven)


@pytest.fixture
def trl005_stable(monkeypatch, every_rule_preview) -> None:
    """TRL005 marked stable for the test: a stable rule with preview findings, as TRL005 will be
    once it graduates. The selection, the reports and the rule catalog a run writes to its cache
    folder all read the class attribute; the `cli` fixture runs in this process and the pool's
    workers fork from it, so every path sees the patch (and the catalog is the test's own). Its
    "known-bad-range" kind graduates, as graduation.toml would list it; the others stay preview."""
    rule = all_rules()["TRL005"].rule
    monkeypatch.setattr(rule, "stable_kinds", frozenset({"known-bad-range"}))
    monkeypatch.setattr(rule, "status", "stable")
    monkeypatch.setattr(
        rule, "preview_findings", "; ".join(k.description for name, k in rule.kinds.items() if name != "known-bad-range")
    )


def found(result) -> set[tuple[str, str, int]]:
    return {(f["path"], f["code"], f["line"]) for f in json.loads(result.out)}


STABLE = {("requirements.txt", "TRL005", 1)}
PREVIEW = {("requirements.txt", "TRL005", 2), ("train.py", "TRL006", 8)}


# ---- turning it on and off ---------------------------------------------------------------------


def test_default_run_reports_neither_preview_rules_nor_preview_findings(cli, project, trl005_stable):
    result = cli("--no-cache", "--format", "json", ".")
    assert result.code == 1 and found(result) == STABLE
    assert result.err == ""  # nothing was selected by name: no warning


def test_preview_flag_reports_both_and_marks_them(cli, project, trl005_stable):
    result = cli("--no-cache", "--preview", "--format", "json", ".")
    assert found(result) == STABLE | PREVIEW
    marked = {(f["path"], f["code"], f["line"]): f["preview"] for f in json.loads(result.out)}
    assert marked == {("requirements.txt", "TRL005", 1): False, **{key: True for key in PREVIEW}}


@pytest.mark.parametrize(
    ("name", "text"),
    [("pyproject.toml", "[tool.trllint]\npreview = true\n"), ("trllint.toml", "preview = true\n")],
)
def test_configuration_turns_preview_on_and_no_preview_overrides_it(cli, project, name, text, trl005_stable):
    (project / name).write_text(text)
    assert found(cli("--no-cache", "--format", "json", ".")) == STABLE | PREVIEW
    assert found(cli("--no-cache", "--no-preview", "--format", "json", ".")) == STABLE
    # The last of the two flags wins, as in Ruff.
    assert found(cli("--no-cache", "--no-preview", "--preview", "--format", "json", ".")) == STABLE | PREVIEW


def test_preview_in_the_configuration_must_be_a_boolean(cli, project):
    (project / "pyproject.toml").write_text('[tool.trllint]\npreview = "yes"\n')
    result = cli("--no-cache", ".")
    assert result.code == 2
    assert "'preview' must be true or false, got 'yes'" in result.err and "Traceback" not in result.err


# ---- no rule is stable yet -----------------------------------------------------------

NO_STABLE_RULE = (
    "trllint: error: no rule is selected: no rule is stable yet, each is preview until it meets the graduation "
    "bar (README: Rules, Stable and preview); run with --preview, or set preview = true\n"
)


def selected(cli, *args: str) -> list[str]:
    """The rules a run with these arguments selects, as --show-settings lists them."""
    result = cli(*args, "--show-settings", ".")
    assert result.code == 0, result.err
    (line,) = [line for line in result.out.splitlines() if line.startswith("select (resolved) = ")]
    return json.loads(line.partition(" = ")[2])


def test_the_default_run_selects_no_rule_and_says_why_without_a_clean_result(cli, project):
    assert not [code for code, info in all_rules().items() if info.rule.status == "stable"], (
        "a rule graduated: the default selection is no longer empty, and this test's premise is gone"
    )
    for args in ((), ("--format", "json"), ("--format", "sarif"), ("--statistics",)):
        result = cli("--no-cache", *args, ".")
        assert (result.code, result.out, result.err) == (2, "", NO_STABLE_RULE), args
    # Served from a cache written with preview, it is the same error.
    assert cli("--preview", ".").code == 1
    warm = cli(".")
    assert (warm.code, warm.out, warm.err) == (2, "", NO_STABLE_RULE)
    # --no-preview over a configuration that turns it on, likewise.
    (project / "pyproject.toml").write_text("[tool.trllint]\npreview = true\n")
    assert cli("--no-cache", "--no-preview", ".").err == NO_STABLE_RULE


def test_preview_runs_every_rule(cli, project):
    assert selected(cli, "--preview") == sorted(all_rules())
    result = cli("--no-cache", "--preview", "--format", "json", ".")
    assert result.code == 1 and result.err == ""
    assert {code for _, code, _ in found(result)} == {"TRL005", "TRL006"}


@pytest.mark.parametrize(
    ("name", "text"),
    [("pyproject.toml", "[tool.trllint]\npreview = true\n"), ("trllint.toml", "preview = true\n")],
)
def test_preview_in_the_configuration_runs_every_rule(cli, project, name, text):
    (project / name).write_text(text)
    assert selected(cli) == sorted(all_rules())
    result = cli("--no-cache", "--format", "json", ".")
    assert result.code == 1 and found(result) == STABLE | PREVIEW and result.err == ""


def test_the_syntax_check_alone_runs_without_preview(cli, project):
    (project / "broken.py").write_text("def train(:\n    pass\n")
    result = cli("--no-cache", "--select", "TRL000", "--format", "json", ".")
    assert result.code == 1 and result.err == ""
    assert found(result) == {("broken.py", "TRL000", 1)}
    clean = cli("--no-cache", "--select", "TRL000", "train.py")
    assert (clean.code, clean.out) == (0, "All checks passed!\n")


# ---- selecting a preview rule (Ruff's behaviour) -----------------------------------------------


def test_preview_rule_selected_by_code_without_preview_warns_and_is_not_run(cli, project, trl005_stable):
    result = cli("--no-cache", "--format", "json", "--select", "TRL006,TRL005", ".")
    assert found(result) == STABLE
    assert result.err.count("warning:") == 1
    assert "selecting TRL006 has no effect because preview is not enabled" in result.err
    # Named alone, nothing is left to run: a usage error that says why, never "All checks passed!".
    alone = cli("--no-cache", "--select", "collective-under-rank-guard", ".")
    assert alone.code == 2 and "no rule is selected: TRL006 needs --preview" in alone.err
    extended = cli("--no-cache", "--format", "json", "--select", "TRL005", "--extend-select", "TRL006", ".")
    assert found(extended) == STABLE and "selecting TRL006" in extended.err


def test_preview_rule_named_in_the_configuration_warns_too(cli, project, trl005_stable):
    (project / "pyproject.toml").write_text('[tool.trllint]\nextend-select = ["TRL006"]\n')
    result = cli("--no-cache", "--format", "json", ".")
    assert found(result) == STABLE and "selecting TRL006 has no effect" in result.err


def test_prefixes_and_all_leave_preview_rules_out_silently(cli, project, trl005_stable):
    for selector in ("ALL", "TRL", "TRL00"):
        result = cli("--no-cache", "--format", "json", "--select", selector, ".")
        assert found(result) == STABLE and result.err == "", selector
        on = cli("--no-cache", "--preview", "--format", "json", "--select", selector, ".")
        assert found(on) == STABLE | PREVIEW, selector


def test_with_preview_a_preview_rule_is_selected_by_code_and_ignored_as_any_other(cli, project):
    assert found(cli("--no-cache", "--preview", "--format", "json", "--select", "TRL006", ".")) == {
        ("train.py", "TRL006", 8)
    }
    ignored = cli("--no-cache", "--preview", "--format", "json", "--ignore", "TRL006", ".")
    assert found(ignored) == STABLE | {("requirements.txt", "TRL005", 2)} and ignored.err == ""


# ---- every path a run takes --------------------------------------------------------------------


def test_result_cache_keeps_preview_runs_apart(cli, project, trl005_stable):
    assert found(cli("--format", "json", ".")) == STABLE  # writes the cache without preview
    with_preview = cli("--preview", "--format", "json", ".")
    assert found(with_preview) == STABLE | PREVIEW
    assert found(cli("--format", "json", ".")) == STABLE
    # A second preview run is served from the cache, preview marks included.
    again = cli("--preview", "--format", "json", ".")
    assert json.loads(again.out) == json.loads(with_preview.out)
    assert len(list((project / ".trllint_cache").glob("results-*.json"))) == 2
    # The same rules either way (TRL005 alone): only preview tells the two apart.
    only_trl005 = ("--select", "TRL005", "--format", "json", "requirements.txt")
    assert found(cli(*only_trl005)) == STABLE
    assert found(cli("--preview", *only_trl005)) == STABLE | {("requirements.txt", "TRL005", 2)}
    assert found(cli(*only_trl005)) == STABLE


def test_worker_pool_gets_the_preview_flag(cli, project, trl005_stable):
    for index in range(10):  # more than the 8 files below which no pool is started
        (project / f"train_{index}.py").write_text(COLLECTIVE_ON_RANK_ZERO)
    one = cli("--no-cache", "--preview", "--jobs", "1", "--format", "json", ".")
    two = cli("--no-cache", "--preview", "--jobs", "2", "--format", "json", ".")
    assert json.loads(one.out) == json.loads(two.out)
    assert sum(f["code"] == "TRL006" for f in json.loads(two.out)) == 11
    assert not any(f["code"] == "TRL006" for f in json.loads(cli("--no-cache", "--jobs", "2", "--format", "json", ".").out))


def test_standard_input(cli, project, trl005_stable):
    def codes(*args: str) -> set[str]:
        result = cli("--no-cache", "--format", "json", *args, stdin=COLLECTIVE_ON_RANK_ZERO.encode())
        return {f["code"] for f in json.loads(result.out)}

    assert codes("-") == set()
    assert codes("--preview", "-") == {"TRL006"}
    assert codes("--preview", "--stdin-filename", "train.py") == {"TRL006"}


def test_fix_applies_a_preview_rules_fix_only_with_preview(cli, project, trl005_stable):
    before = (project / "train.py").read_text()
    assert cli("--no-cache", "--fix", "train.py").code == 0  # TRL006 does not run: nothing to fix
    assert (project / "train.py").read_text() == before
    assert cli("--no-cache", "--preview", "--fix", "train.py").code == 0
    fixed = (project / "train.py").read_text()
    assert fixed.index("accelerator.reduce") < fixed.index("if accelerator.is_main_process:")


def test_sarif_carries_the_status_of_rules_and_the_preview_of_results(cli, project, trl005_stable):
    sarif = json.loads(cli("--no-cache", "--preview", "--format", "sarif", ".").out)
    run = sarif["runs"][0]
    status = {rule["id"]: rule["properties"]["status"] for rule in run["tool"]["driver"]["rules"]}
    assert status["TRL006"] == "preview" and status["TRL005"] == "stable"
    preview = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r.get("properties", {}).get("preview")
        for r in run["results"]
    }
    assert preview == {("TRL005", 1): None, ("TRL005", 2): True, ("TRL006", 8): True}


# ---- what a rule says of itself ----------------------------------------------------------------


def _listed_status(cli) -> dict[str, str]:
    listing = cli("--list-rules").out.splitlines()
    assert listing[0].split() == ["CODE", "NAME", "STATUS", "FIX"]
    return {line.split()[0]: line.split()[2] for line in listing[1:]}


def test_list_rules_and_explain_show_the_status(cli):
    status = _listed_status(cli)
    assert status["TRL006"] == "preview"
    assert status["TRL004"] == "preview"
    # Preview rules with preview findings of their own (which stay preview once the rule graduates):
    # preview, not "preview+preview".
    assert status["TRL002"] == status["TRL005"] == "preview"
    assert status["TRL001"] == "preview"
    explained = cli("--explain", "TRL006").out
    readme = (REPO / "rules" / "trl006_collective_under_rank_guard" / "README.md").read_text(encoding="utf-8")
    title, _, rest = readme.partition("\n")
    assert explained.startswith(f"{title}\n\nStatus: preview")
    assert explained.endswith(rest.lstrip("\n"))
    assert cli("--explain", "TRL004").out.startswith("# TRL004 ungathered-metric\n\nStatus: preview")
    trl002 = cli("--explain", "TRL002").out
    assert trl002.startswith("# TRL002 ")
    status_line = trl002.split("\n\n")[1]
    assert status_line.startswith("Status: preview") and "in the default selection" not in status_line
    assert "Once stable, these findings stay preview: a call in code whose launch does not show FSDP." in status_line
    # An unproven kind (resting on a launch the code does not show) is named as staying preview.
    trl006_status = cli("--explain", "TRL006").out.splitlines()[2]
    assert "Once stable, these findings stay preview: " in trl006_status
    assert "a call that is a collective only under backends no launch" in trl006_status
    assert "Once stable, these findings stay preview" not in cli("--explain", "TRL003").out  # no unproven kind


def test_a_stable_rule_is_listed_and_explained_as_stable(cli, trl005_stable):
    status = _listed_status(cli)
    assert status["TRL005"] == "stable+preview"  # stable, with preview findings
    assert status["TRL002"] == "preview"
    explained = cli("--explain", "TRL005").out
    assert "Status: stable, in the default selection." in explained
    assert "In preview (shown only with `--preview`): unreadable files" in explained
    assert "Once stable" not in explained


def test_readme_rule_list_names_every_rule():
    # Status and numbers are in the generated table (tests/test_graduation.py); this list says what each finds.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(TRL\d{3})\]\([^)]*\) \| [a-z0-9-]+ \| ([^|]+) \|", readme, flags=re.M)
    assert {code for code, _ in rows} == set(all_rules())


def test_a_rules_own_page_states_no_status():
    # --explain prints the status above the page; the generated README table holds it otherwise.
    for code, info in all_rules().items():
        page = info.readme.read_text(encoding="utf-8")
        assert "A **preview** rule" not in page and "A **stable** rule" not in page, code


def test_a_rule_status_is_stable_or_preview():
    with pytest.raises(TypeError, match='status is .beta.: "stable" or "preview"'):

        class Beta(Rule):  # noqa: F841 (defining it is the test)
            code = "TST990"
            name = "beta"
            message = "m"
            status = "beta"  # type: ignore[assignment]


# ---- the engine: report(..., preview=True) -------------------------------------------------------


class PreviewPrint(Rule):
    """``print(...)``: a stable finding; ``print(..., file=...)`` a preview one, with a fix."""

    code = "TST991"
    name = "preview-print"
    message = "print() call"
    fixable = "sometimes"
    prefilter = AnyOf("print")

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "print"):
            return
        if any(arg.keyword is not None and arg.keyword.value == "file" for arg in node.args):
            self.report(node, "print() to a file", fix=self.fix(self.replace(node.func, cst.Name("log"))), preview=True)
        else:
            self.report(node)


TEXT = "print(1)\nprint(2, file=out)\n"


def test_preview_findings_are_dropped_unless_the_ruleset_has_preview():
    source = SourceFile(TEXT, "a.py")
    stable = lint_source(source, "a.py", RuleSet([PreviewPrint]))
    assert [(f.line, f.preview) for f in stable] == [(1, False)]
    both = lint_source(source, "a.py", RuleSet([PreviewPrint], preview=True))
    assert [(f.line, f.preview) for f in both] == [(1, False), (2, True)]


def test_a_preview_findings_fix_and_noqa_need_preview():
    source = SourceFile(TEXT, "a.py")
    off = fix_source(source, "a.py", RuleSet([PreviewPrint]), unsafe=True)
    assert not off.changed
    on = fix_source(source, "a.py", RuleSet([PreviewPrint], preview=True), unsafe=True)
    assert on.text == "print(1)\nlog(2, file=out)\n"
    _, new_bytes = add_noqa_bytes(TEXT.encode(), "a.py", "a.py", RuleSet([PreviewPrint]))
    assert new_bytes == b"print(1)  # noqa: TST991\nprint(2, file=out)\n"
    _, with_preview = add_noqa_bytes(TEXT.encode(), "a.py", "a.py", RuleSet([PreviewPrint], preview=True))
    assert with_preview == b"print(1)  # noqa: TST991\nprint(2, file=out)  # noqa: TST991\n"


# ---- TRL005: a known-bad row marked preview -------------------------------------------------------


def test_a_known_bad_row_marked_preview_gives_preview_findings(tmp_path, monkeypatch, trl005_stable):
    from trllint.rules.trl005_known_bad_dependency import releases

    table = tmp_path / "known_bad.toml"
    row = 'bad = "<0.10"\nfirst-good = "0.10.0"\nsymptom = "a made-up symptom"\nreference = "https://example.invalid"\n'
    table.write_text(
        f'[[known-bad]]\npackage = "peft"\n{row}\n[[known-bad]]\npackage = "deepspeed"\n{row}preview = true\n'
    )
    monkeypatch.setattr(releases, "TABLE", table)
    releases.known_bad.cache_clear()
    try:
        rule = all_rules()["TRL005"].rule
        source = SourceFile("peft>=0.9\ndeepspeed>=0.9\n", "requirements.txt", is_python=False)
        assert [f.line for f in lint_source(source, "requirements.txt", RuleSet([rule]))] == [1]
        both = lint_source(source, "requirements.txt", RuleSet([rule], preview=True))
        assert [(f.line, f.preview) for f in both] == [(1, False), (2, True)]
        table.write_text(table.read_text().replace("preview = true", 'preview = "yes"'))
        releases.known_bad.cache_clear()
        with pytest.raises(ValueError, match="'preview' must be true or false"):
            releases.known_bad()
    finally:
        monkeypatch.undo()
        releases.known_bad.cache_clear()
