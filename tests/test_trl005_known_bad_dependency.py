"""TRL005 beyond its cases: the resolver check on every fixed output, the data table, the reading of
each file kind, suppression and the command line on real files."""

from __future__ import annotations

import ast
import importlib
import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from trllint.app import cli
from trllint.rules.trl005_known_bad_dependency.dependencies import TomlStrings, in_pyproject, in_requirements_file, in_setup_cfg
from trllint.rules.trl005_known_bad_dependency.specifiers import admits_any, raise_lower_bound
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

INFO = all_rules()["TRL005"]
RULE = INFO.rule
CASES = INFO.folder / "cases"
TABLE = importlib.import_module(RULE.__module__.rsplit(".", 1)[0] + ".releases").known_bad()


def version_grid(first_good: Version) -> list[Version]:
    """Every a.b.c (and a.b.c.post1) from 0.0.0 up past ``first_good``: each release a range can name."""
    top = first_good.release[0] + 2
    grid = []
    for major in range(top):
        for minor in range(13):
            for micro in range(11):
                grid += [Version(f"{major}.{minor}.{micro}"), Version(f"{major}.{minor}.{micro}.post1")]
    return grid


def declared_requirements(path: Path, text: str) -> list[tuple[int, str]]:
    """(line, requirement string) of every requirement in a case file, by the kind it is linted as."""
    linted_as = path.name.split("__", 1)[1].replace(".fixed", "")
    if linted_as.endswith(".py"):
        return [  # the string elements of lists: setup()'s requirement lists, not dict keys or names
            (element.lineno, element.value)
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.List, ast.Tuple))
            for element in node.elts
            if isinstance(element, ast.Constant) and isinstance(element.value, str)
        ]
    reader = {"pyproject.toml": in_pyproject, "setup.cfg": in_setup_cfg}.get(linted_as, in_requirements_file)
    return [(text.count("\n", 0, item.start) + 1, item.text) for item in reader(text)]


def _parses(text: str) -> bool:
    try:
        Requirement(text)
    except Exception:
        return False
    return True


FIXED = sorted(CASES.glob("bad_*.fixed.*"))


def test_every_file_kind_has_bad_good_and_fixed_cases():
    kinds = ("pyproject.toml", "setup.cfg", "setup.py", "requirements")
    for kind in kinds:
        assert any(kind in p.name for p in CASES.glob("bad_*") if ".fixed." not in p.name), kind
        assert any(kind in p.name for p in CASES.glob("good_*")), kind
        assert any(kind in p.name.replace(".fixed", "") for p in FIXED), kind


@pytest.mark.parametrize("fixed_path", FIXED, ids=lambda p: p.name)
def test_fixed_specifiers_exclude_every_bad_version_and_admit_the_first_good(fixed_path: Path):
    """The resolver check: what the fix wrote, matched with packaging against every release."""
    original = fixed_path.with_name(fixed_path.name.replace(".fixed", ""))
    before = declared_requirements(original, original.read_text())
    fixed_text = fixed_path.read_text()
    after = declared_requirements(fixed_path, fixed_text)
    assert [line for line, _ in before] == [line for line, _ in after]
    lines = fixed_text.splitlines()
    checked = 0
    for (line, text), (_, written) in zip(after, before):
        if "noqa" in lines[line - 1] or not _parses(text):
            continue  # suppressed on purpose, or malformed (reported, never fixed)
        requirement = Requirement(text)
        for row in TABLE:
            if canonicalize_name(requirement.name) != row.package:
                continue
            bad_versions = [v for v in version_grid(row.first_good) if row.bad.contains(v, prereleases=True)]
            admitted_bad = [str(v) for v in bad_versions if requirement.specifier.contains(v)]
            assert not admitted_bad, f"line {line}: {text!r} still admits {admitted_bad[:5]}"
            assert requirement.specifier.contains(row.first_good), f"line {line}: {text!r} shuts out {row.first_good}"
            checked += 1
            if written != text:  # a requirement the fix changed admitted a bad release before it
                was = Requirement(written).specifier
                assert any(was.contains(v) for v in bad_versions), f"line {line}: {written!r}"
    assert checked, "the fixed case names no package of the table"


def test_table_rows_are_consistent():
    raw = tomllib.loads((INFO.folder / "known_bad.toml").read_text())["known-bad"]
    assert raw[0]["package"] == "vllm" and raw[0]["bad"] == "<0.7.2" and raw[0]["first-good"] == "0.7.2"
    assert "cuda:1 and cuda:0" in raw[0]["symptom"]
    for row in TABLE:
        assert not row.bad.contains(row.first_good, prereleases=True), row
        assert admits_any(SpecifierSet(""), row.bad), f"{row.package}{row.bad} matches no release"
        assert row.reference.startswith("https://"), row


# ---- the range logic -------------------------------------------------------------------------

BAD, GOOD = SpecifierSet("<0.7.2"), Version("0.7.2")
GRID = version_grid(GOOD)
OPERATORS = ("==", "!=", "<", "<=", ">", ">=", "~=")
VERSIONS = ("0.6", "0.6.6", "0.7", "0.7.0", "0.7.1", "0.7.2", "0.7.3", "0.8", "0.8.0", "1.0")


@st.composite
def specifier_sets(draw) -> str:
    pieces = draw(st.lists(st.tuples(st.sampled_from(OPERATORS), st.sampled_from(VERSIONS)), max_size=3))
    return ",".join(op + v for op, v in pieces if not (op == "~=" and "." not in v))


@settings(max_examples=200, deadline=None)
@given(specifier_sets())
def test_admission_finds_every_bad_release_the_grid_has(spec: str):
    requested = SpecifierSet(spec)
    on_grid = any(requested.contains(v) and BAD.contains(v) for v in GRID)
    if on_grid:
        assert admits_any(requested, BAD)


@settings(max_examples=200, deadline=None)
@given(specifier_sets())
def test_raised_range_admits_no_bad_release_and_safe_raises_only_narrow(spec: str):
    requirement = f"vllm{spec} ; python_version >= '3.9'"
    if not admits_any(SpecifierSet(spec), BAD):
        return
    edit = raise_lower_bound(requirement, GOOD)
    if edit is None:
        return
    fixed_text = requirement[: edit.start] + edit.content + requirement[edit.end :]
    fixed = Requirement(fixed_text)
    assert str(fixed.marker) == "python_version >= \"3.9\"", fixed_text
    assert fixed.specifier.contains(GOOD), fixed_text
    assert not [v for v in GRID if fixed.specifier.contains(v) and BAD.contains(v)], fixed_text
    if not edit.unsafe:  # a safe fix only moves the floor up: it admits nothing the original did not
        original = SpecifierSet(spec)
        assert all(original.contains(v) for v in GRID if fixed.specifier.contains(v)), fixed_text


@pytest.mark.parametrize(
    ("written", "fixed", "unsafe"),
    [
        ("vllm>=0.7.1; sys_platform != 'win32'", "vllm>=0.7.2; sys_platform != 'win32'", False),
        ("vllm==0.7.0", "vllm>=0.7.2", True),
        ("vllm", "vllm>=0.7.2", False),
        ("vllm ; python_version > '3.8'", "vllm>=0.7.2 ; python_version > '3.8'", False),
        ("vllm[audio] >= 0.6, < 0.9", "vllm[audio] >= 0.7.2, < 0.9", False),
        ("vllm<0.9", "vllm>=0.7.2,<0.9", False),
        ("vllm~=0.7.0", "vllm~=0.7.2", False),
        ("vllm==0.7.*", "vllm>=0.7.2,==0.7.*", False),
        ("vllm (>=0.7.1)", "vllm (>=0.7.2)", False),
        ("vllm>=0.7,<=0.7.1", "vllm>=0.7.2", True),
        ("vllm>=0.6,!=0.7.0", "vllm>=0.7.2,!=0.7.0", False),
    ],
)
def test_raise_lower_bound_keeps_the_rest_of_the_line(written, fixed, unsafe):
    edit = raise_lower_bound(written, GOOD)
    assert edit is not None
    assert written[: edit.start] + edit.content + written[edit.end :] == fixed
    assert edit.unsafe is unsafe


# ---- reading the files -----------------------------------------------------------------------

TRICKY_TOML = r'''
# a comment with "quotes" and [brackets]
"quoted.key" = 'x'
[project]
name = "demo"
authors = [{name = "A, B", email = "a@b.c"}]
dependencies = [  # trailing comment ]
    "vllm>=0.7.1",   # why, with a ] and a "
    'trl>=0.14',
    """accelerate""",
    "tab\tescaped",
    """
multi""",
]
[project . "optional-dependencies"]
gpu = ["vllm==0.7.0"]
[dependency-groups]
dev = [{include-group = "gpu"}, "pytest"]
[[tool.matrix]]
when = 1979-05-27 07:32:00
versions = [1, 2.5, true]
'''


def test_toml_scan_agrees_with_tomllib_and_locates_each_string():
    items = list(in_pyproject(TRICKY_TOML))
    assert [i.text for i in items] == [
        "vllm>=0.7.1",
        "trl>=0.14",
        "accelerate",
        "tab\tescaped",
        "multi",
        "vllm==0.7.0",
        "pytest",
    ]
    for item in items:
        if item.text_offset is not None:
            assert TRICKY_TOML[item.text_offset : item.text_offset + len(item.text)] == item.text
        assert TRICKY_TOML[item.start] in "\"'"
    # Escapes and a multi-line string's leading newline: not verbatim, so never edited.
    assert [i.text_offset is None for i in items] == [False, False, False, True, True, False, False]
    paths = {s.path for s in TomlStrings(TRICKY_TOML).scan()}
    assert ("project", "optional-dependencies", "gpu") in paths


def test_requirements_file_reads_requirements_and_skips_options():
    text = (
        "# comment\n-r base.txt\n-c constraints.txt\n--index-url https://x/simple\n-e .\n./local\n"
        "vllm>=0.7.1 ; python_version > '3.8'  # noqa: TRL005\n"
        "vllm==0.7.1 \\\n    --hash=sha256:00\n"
        "# a comment ending in a backslash \\\nvllm\n"
    )
    items = list(in_requirements_file(text))
    assert [i.text for i in items] == ["vllm>=0.7.1 ; python_version > '3.8'", "vllm==0.7.1", "vllm"]
    assert items[1].text_offset is None  # hash-pinned: a new version would not match the hashes


def test_setup_cfg_reads_one_line_values_as_setuptools_does():
    text = (
        "[options]\ninstall_requires = vllm>=0.7.1; trl\n[options.extras_require]\nx =\n"
        "    vllm  # noqa: TRL005\n    # c\n    trl\n"
    )
    assert [i.text for i in in_setup_cfg(text)] == ["vllm>=0.7.1", "trl", "vllm", "trl"]
    # Preview on: a text with no project leaves the vLLM row's need unknown, a preview finding.
    findings = lint_source(SourceFile(text, "setup.cfg", is_python=False), "setup.cfg", RuleSet([RULE], preview=True))
    assert [f.line for f in findings] == [2]  # line 5 carries a noqa


def test_broken_toml_is_a_preview_finding_on_its_line_not_a_crash():
    text = '[project]\nname = "x"\ndependencies = ["vllm>=0.7.1",\n  = 3\n]\n'
    source = SourceFile(text, "pyproject.toml", is_python=False)
    findings = lint_source(source, "pyproject.toml", RuleSet([RULE], preview=True))
    assert [(f.code, f.line, f.preview) for f in findings] == [("TRL005", 4, True)]
    assert "invalid TOML" in findings[0].message and findings[0].fix is None
    assert lint_source(source, "pyproject.toml", RuleSet([RULE])) == []  # preview: not in the default run


# ---- suppression and the command line --------------------------------------------------------

PYPROJECT = '[project]\nname = "x"\nversion = "1"\ndependencies = [\n    "vllm>=0.7.1",\n]\n'


def test_per_file_ignores_switch_the_rule_off_for_pyproject(tmp_path):
    path = tmp_path / "pyproject.toml"
    source = SourceFile(PYPROJECT, str(path), is_python=False)
    # Preview on: with no project the vLLM row's need is unknown, a preview finding.
    assert [f.line for f in lint_source(source, path.name, RuleSet([RULE], root=tmp_path, preview=True))] == [5]
    ignoring = RuleSet(
        [RULE], root=tmp_path, per_file_ignores=[("pyproject.toml", frozenset({"TRL005"}))], preview=True
    )
    assert lint_source(source, path.name, ignoring) == []


def test_noqa_on_the_line_suppresses_in_requirements_and_setup_py():
    text = "vllm>=0.7.1  # noqa: TRL005\nvllm==0.7.0\n"
    requirements = SourceFile(text, "requirements.txt", is_python=False)
    ruleset = RuleSet([RULE], preview=True)  # no project: the vLLM row's findings are preview ones
    assert [f.line for f in lint_source(requirements, "requirements.txt", ruleset)] == [2]
    setup = 'from setuptools import setup\nsetup(install_requires=[\n    "vllm",  # noqa: TRL005\n    "vllm<0.9",\n])\n'
    assert [f.line for f in lint_source(SourceFile(setup, "setup.py"), "setup.py", ruleset)] == [4]


def test_command_line_finds_reports_and_fixes_dependency_files(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT + "\n[tool.other]\nkeep = 'this  spacing'\n")
    (tmp_path / "requirements-dev.txt").write_text("-r requirements.txt\nvllm==0.7.0\n")
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    vllm~=0.7.0\n")
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["vllm"])\n')
    (tmp_path / "train.py").write_text(
        'from trl import GRPOConfig, GRPOTrainer\n\nREQUIRES = ["vllm==0.7.0"]  # not a dependency declaration\n'
    )
    (tmp_path / "grpo.yaml").write_text("use_vllm: true\n")  # a recipe of TRL's GRPO: the project runs its vLLM generation
    monkeypatch.chdir(tmp_path)

    # --preview: TRL005 is a preview rule.
    assert cli.main(["--no-cache", "--preview", "--select", "TRL005", "--format", "json", "."]) == 1
    findings = json.loads(capsys.readouterr().out)
    found = {(f["path"], f["line"], f["fix"]["applicability"] if f["fix"] else None) for f in findings}
    assert found == {
        ("pyproject.toml", 5, "safe"),
        ("requirements-dev.txt", 2, "unsafe"),
        ("setup.cfg", 3, "safe"),
        ("setup.py", 2, "safe"),
    }

    assert cli.main(["--no-cache", "--preview", "--select", "TRL005", "--fix", "."]) == 1  # the pin needs --unsafe-fixes
    capsys.readouterr()
    assert cli.main(["--no-cache", "--preview", "--select", "TRL005", "--fix", "--unsafe-fixes", "."]) == 0
    assert (tmp_path / "pyproject.toml").read_text() == (
        PYPROJECT.replace("0.7.1", "0.7.2") + "\n[tool.other]\nkeep = 'this  spacing'\n"
    )
    assert (tmp_path / "requirements-dev.txt").read_text() == "-r requirements.txt\nvllm>=0.7.2\n"
    assert (tmp_path / "setup.cfg").read_text() == "[options]\ninstall_requires =\n    vllm~=0.7.2\n"
    fixed_setup = 'from setuptools import setup\nsetup(install_requires=["vllm>=0.7.2"])\n'
    assert (tmp_path / "setup.py").read_text() == fixed_setup


# ---- frozen environments and local paths ---------------------------------------------------------

# What `pip freeze` writes of an inference benchmark's environment: exact pins, dependencies included.
FROZEN_INFERENCE = "".join(f"{name}==1.0.{i}\n" for i, name in enumerate(
    ("aiohttp", "anyio", "certifi", "charset-normalizer", "fastapi", "filelock", "fsspec", "huggingface-hub", "idna",
     "Jinja2", "numpy", "packaging", "pydantic", "PyYAML", "requests", "safetensors", "tokenizers", "torch",
     "transformers", "urllib3")
)) + "vllm==0.6.3\n"


def test_a_frozen_environment_without_trl_cannot_run_trl_vllm_generation(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')
    (tmp_path / "grpo.yaml").write_text("use_vllm: true\n")  # the project runs TRL's vLLM generation elsewhere
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "requirements.txt").write_text(FROZEN_INFERENCE)
    (tmp_path / "requirements.txt").write_text("trl>=0.15\nvllm>=0.6\n")  # the trainer's own ranges
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "--preview", "--select", "TRL005", "--format", "json", "."]) == 1
    assert {(f["path"], f["line"]) for f in json.loads(capsys.readouterr().out)} == {("requirements.txt", 2)}

    # The same freeze with trl in it is an environment that runs it: the pin is reported.
    (tmp_path / "benchmarks" / "requirements.txt").write_text(FROZEN_INFERENCE + "trl==0.14.0\n")
    assert cli.main(["--no-cache", "--preview", "--select", "TRL005", "--format", "json", "."]) == 1
    assert {(f["path"], f["line"]) for f in json.loads(capsys.readouterr().out)} == {
        ("requirements.txt", 2), (str(Path("benchmarks", "requirements.txt")), 21)
    }


def test_a_short_file_of_exact_pins_is_no_frozen_environment():
    from trllint.rules.trl005_known_bad_dependency.dependencies import LOCK_MINIMUM_PINS, frozen_environment

    pins = [f"package{i}==1.{i}" for i in range(LOCK_MINIMUM_PINS)]
    assert frozen_environment(list(in_requirements_file("\n".join(pins)))) is not None
    assert frozen_environment(list(in_requirements_file("\n".join(pins[1:])))) is None
    ranged = [*pins, "vllm>=0.6"]  # one range: a declaration, not a record of one environment
    assert frozen_environment(list(in_requirements_file("\n".join(ranged)))) is None


@pytest.mark.parametrize("line", ["packages/foo", "foo/bar[extra]", "src\\tools", "file:../shared/utils", "./local", "-e ."])
def test_local_paths_are_not_requirements(line):
    assert list(in_requirements_file(f"{line}\nvllm>=0.7.2\n"))[0].text == "vllm>=0.7.2"


# ---- where the project runs TRL's vLLM generation (the fact TRL005's vLLM row asks) ----------------


def _generation_in(root: Path, files: dict[str, str]) -> str | None:
    from trllint.facts.launch.project import forget_launch_files, trl_vllm_generation

    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    forget_launch_files()
    evidence = trl_vllm_generation(root)
    return None if evidence is None else f"{Path(evidence.path).name}:{evidence.line}"


@pytest.mark.parametrize(
    "files, where",
    [
        # TRL's trainer configured in code, in a recipe of a project that imports TRL, through its CLI.
        ({"grpo.py": "from trl import GRPOConfig\nargs = GRPOConfig(use_vllm=True)\n"}, "grpo.py:2"),
        ({"train.py": "import trl\n", "recipes/grpo.yaml": "model: m\nuse_vllm: true\n"}, "grpo.yaml:2"),
        ({"requirements.txt": "trl[vllm]>=0.17\n", "run.sh": "accelerate launch trl_recipe.sh --use_vllm\n"}, "run.sh:1"),
        ({"grpo.py": "from trl import GRPOTrainer\n", "run.sh": "accelerate launch grpo.py \\\n  --use_vllm\n"}, "run.sh:2"),
        # The flag of a program that does not import TRL, though the project uses TRL elsewhere.
        (
            {"dpo.py": "from trl import DPOTrainer\n", "infer.py": "import vllm\n", "run.sh": "python infer.py \\\n  --use_vllm True\n"},
            None,
        ),
        ({"run.sh": "trl grpo --config recipe.yaml --use_vllm\n"}, "run.sh:1"),
        # A project's own `--use_vllm` (an evaluation script's option, an inferencer's parameter):
        # vLLM for inference, no TRL in the project (a verl fork, an evaluation harness).
        ({"eval.py": 'parser.add_argument("--use_vllm", action="store_true")\n'}, None),
        ({"infer.py": "def run(use_vllm=True):\n    pass\n", "eval.sh": "python eval.py --use_vllm\n"}, None),
        # TRL elsewhere in the project, but the flag in a file that does not import it.
        ({"dpo.py": "from trl import DPOTrainer\n", "infer.py": "Inferencer(use_vllm=True)\n"}, None),
        # A recipe is whose commands name it: TRL's GRPO script, or the project's own inference.
        (
            {
                "src/grpo.py": "from trl import GRPOConfig, GRPOTrainer\n",
                "recipes/grpo.yaml": "use_vllm: true\n",
                "README.md": "accelerate launch src/grpo.py --config recipes/grpo.yaml\n",
            },
            "grpo.yaml:1",
        ),
        (
            {
                "dpo.py": "from trl import DPOTrainer\n",
                "iterate.py": "from mylib import Inferencer\n",
                "configs/iterate.yaml": "use_vllm: True\n",
                "run.sh": "python iterate.py configs/iterate.yaml\n",
            },
            None,
        ),
        # A package named like it is not TRL.
        ({"requirements.txt": "trlx>=0.7\n", "run.sh": "python train.py --use_vllm\n"}, None),
    ],
)
def test_trl_vllm_generation_needs_trl(tmp_path, files, where):
    assert _generation_in(tmp_path, files) == where
