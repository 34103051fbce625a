"""Jupyter notebooks: the code cells linted as one program with the real rules, findings named by
cell and line, magics left alone, and fixes that touch nothing but the changed cells' sources."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from tests.test_rule_cases import CASES, _ruleset
from trllint.engine.inputs.notebook import Notebook, NotebookError
from trllint.engine.pipeline import Mode
from trllint.engine.pipeline import process_bytes as process_notebook
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

# The rules whose findings may need the code to run in several processes (a wrapper, other ranks).
MULTI_PROCESS_RULES = {"TRL001", "TRL002", "TRL004", "TRL006", "TRL007", "TRL008", "TRL009", "TRL010"}


@pytest.fixture
def cli(cli):
    """conftest's `cli` with preview on: TRL004, the per-rank metric these notebooks log, is a
    preview rule, and the notebook behaviours are checked with every rule."""
    return lambda *args, stdin=None: cli("--preview", *args, stdin=stdin)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def code(cell_id: str, source, *, outputs=None, metadata=None) -> dict:
    # Keys in an order json.dumps(sort_keys=True) would not give: the layout must survive as written.
    return {
        "cell_type": "code",
        "source": source,
        "id": cell_id,
        "metadata": metadata or {},
        "execution_count": None,
        "outputs": outputs or [],
    }


def training_notebook() -> dict:
    """Cell 3 defines the training function that prepares the model; cell 5 logs a per-rank
    accuracy (TRL004); cell 6 reads model.config (TRL001); cell 7 starts the training function in
    two processes with notebook_launcher (without it the notebook runs in one process, and
    neither finding holds)."""
    cells = [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Fine-tune on two GPUs — démo\n", "Ünïcode."]},
        code(
            "setup",
            ["%pip install accelerate\n", "!nvidia-smi\n", "import torch\n", "from accelerate import Accelerator\n",
             "from transformers import AutoModelForCausalLM\n"],
            outputs=[{"name": "stdout", "output_type": "stream", "text": ["Successfully installed\n"]}],
            metadata={"tags": ["setup"]},
        ),
        code(
            "prepare",
            ["def training_function():\n",
             '    accelerator = Accelerator(log_with="wandb")\n', '    model = AutoModelForCausalLM.from_pretrained("gpt2")\n',
             "    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\n",
             "    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)\n",
             "    train(accelerator, model, optimizer, dataloader)\n",
             "    report(accelerator, model)"],
        ),
        code("timing", "%%bash\nfor x in 1 2; do\n    echo $x\ndone\n"),
        code(
            "train",
            ["def train(accelerator, model, optimizer, dataloader):\n",
             "    for step, batch in enumerate(dataloader):\n", "        outputs = model(**batch)\n",
             '        acc = (outputs.logits.argmax(-1) == batch["labels"]).float().mean()\n',
             "        accelerator.backward(outputs.loss)\n", "        if step == 0:\n", "            !date\n", "        optimizer.step()\n",
             '        accelerator.log({"acc": acc.item()}, step=step)\n'],
            outputs=[{"data": {"image/png": "iVBORw0KGgo="}, "metadata": {}, "output_type": "display_data"}],
        ),
        code("report", 'def report(accelerator, model):\n    files = !ls\n    print("vocab", model.config.vocab_size)'),
        code("launch", "from accelerate import notebook_launcher\n\nnotebook_launcher(training_function, num_processes=2)\n"),
    ]
    metadata = {"language_info": {"name": "python"}, "kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}
    return {"metadata": metadata, "nbformat_minor": 5, "nbformat": 4, "cells": cells}


STYLES = {
    "nbformat": dict(indent=1, ensure_ascii=False, newline=True),
    "indent2-ascii": dict(indent=2, ensure_ascii=True, newline=True),
    "indent4-no-newline": dict(indent=4, ensure_ascii=False, newline=False),
}


def dump(document: dict, style: dict) -> str:
    return json.dumps(document, indent=style["indent"], ensure_ascii=style["ensure_ascii"]) + ("\n" if style["newline"] else "")


def write_notebook(path: Path, style: dict) -> str:
    text = dump(training_notebook(), style)
    path.write_text(text, encoding="utf-8")
    return text


def test_findings_across_cells_name_cell_and_line(cli, tmp_path):
    write_notebook(tmp_path / "nb.ipynb", STYLES["nbformat"])
    result = cli("--no-cache", "nb.ipynb")
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].startswith("nb.ipynb:cell 5:9:33: TRL004 ")
    assert lines[1].startswith("nb.ipynb:cell 6:3:20: TRL001 ")
    assert lines[2] == "Found 2 findings (2 fixable with --fix)."

    findings = json.loads(cli("--no-cache", "--format", "json", "nb.ipynb").out)
    assert [(f["code"], f["cell"], f["line"], f["column"], f["end_line"]) for f in findings] == [
        ("TRL004", 5, 9, 33, 9),
        ("TRL001", 6, 3, 20, 3),
    ]
    assert findings[0]["fix"]["edits"][0]["location"] == {"line": 9, "column": 33}

    sarif = json.loads(cli("--no-cache", "--format", "sarif", "nb.ipynb").out)
    results = sarif["runs"][0]["results"]
    region = results[1]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 3 and region["startColumn"] == 20
    assert results[1]["properties"] == {"cell": 6, "preview": True, "kind": "prepared"}  # a preview kind of TRL001
    assert results[1]["locations"][0]["logicalLocations"] == [{"name": "cell 6", "kind": "notebookCell"}]


@pytest.mark.parametrize("style_name", sorted(STYLES))
def test_fix_rewrites_only_the_changed_cells_sources(cli, tmp_path, style_name):
    style = STYLES[style_name]
    original_text = write_notebook(tmp_path / "nb.ipynb", style)
    result = cli("--no-cache", "--fix", "nb.ipynb")
    assert result.code == 0, result.out + result.err
    assert "2 fixed, 0 remaining" in result.out
    fixed_text = (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    before, after = json.loads(original_text), json.loads(fixed_text)

    # As JSON: everything but the sources of cells 5 and 6 is equal, and each source keeps its form.
    assert {k: v for k, v in before.items() if k != "cells"} == {k: v for k, v in after.items() if k != "cells"}
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [4, 5]
    for index in changed:
        old_cell, new_cell = before["cells"][index], after["cells"][index]
        assert {k: v for k, v in old_cell.items() if k != "source"} == {k: v for k, v in new_cell.items() if k != "source"}
        assert type(old_cell["source"]) is type(new_cell["source"])
    train = "".join(after["cells"][4]["source"])
    assert '        accelerator.log({"acc": accelerator.gather(acc).mean().item()}, step=step)\n' in train
    assert "            !date\n" in train  # the shell line inside the block came back as it was
    assert after["cells"][5]["source"] == (
        'def report(accelerator, model):\n    files = !ls\n    print("vocab", accelerator.unwrap_model(model).config.vocab_size)'
    )

    # As bytes: the file is what its own JSON style writes for the new content (indent, key order,
    # escapes, trailing newline), so nothing outside the two sources moved.
    assert fixed_text == dump(after, style)
    # And directly: the bytes that differ lie between cell 5's "source" key and cell 6's id.
    first = next(i for i, (a, b) in enumerate(zip(original_text, fixed_text)) if a != b)
    last = next(i for i in range(1, len(original_text)) if original_text[-i] != fixed_text[-i])
    cell5_source = original_text.index('"source"', original_text.index('"timing"'))
    cell6_id = original_text.index('"report"')
    assert cell5_source < first and len(original_text) - last < cell6_id

    again = cli("--no-cache", "--fix", "nb.ipynb")
    assert again.code == 0 and (tmp_path / "nb.ipynb").read_text(encoding="utf-8") == fixed_text


def test_magics_and_shell_lines_give_no_traceback_and_no_false_finding(cli, tmp_path):
    document = training_notebook()
    document["cells"] = document["cells"][:4] + [
        code("magics", ["%time x = 1\n", "out = !ls -la\n", "display?\n", "%matplotlib inline\n", "!pip install a \\\n", "    b\n"]),
        code("await", "await asyncio.sleep(0)\n"),
        code("empty", []),
    ]
    (tmp_path / "clean.ipynb").write_text(json.dumps(document, indent=1), encoding="utf-8")
    result = cli("--no-cache", "clean.ipynb")
    assert result.code == 0, result.out
    assert result.out == "All checks passed!\n"


def test_a_cell_that_is_not_python_is_trl000_in_its_cell(cli, tmp_path):
    document = training_notebook()
    document["cells"][2]["source"] = ["x = (\n"]
    (tmp_path / "nb.ipynb").write_text(json.dumps(document, indent=1), encoding="utf-8")
    findings = json.loads(cli("--no-cache", "--format", "json", "nb.ipynb").out)
    assert [(f["code"], f["cell"]) for f in findings][:1] == [("TRL000", 3)]


def test_invalid_json_is_one_line_of_error_and_other_files_are_linted(cli, tmp_path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    write_notebook(tmp_path / "nb.ipynb", STYLES["nbformat"])
    result = cli("--no-cache", "--fix", ".")
    assert result.code == 1
    broken = [line for line in result.out.splitlines() if line.startswith("broken.ipynb")]
    assert len(broken) == 1 and "TRL000 cannot read notebook: not valid JSON" in broken[0]
    assert "Traceback" not in result.err
    assert (tmp_path / "broken.ipynb").read_text(encoding="utf-8") == '{"cells": ['
    assert "accelerator.unwrap_model(model)" in (tmp_path / "nb.ipynb").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "text, reason",
    [('["not", "a", "notebook"]', "no top-level list of cells"), ('{"cells": [{"cell_type": "code", "source": 3}]}', "neither a string")],
)
def test_json_that_is_not_a_notebook_is_refused_with_a_reason(text, reason):
    with pytest.raises(NotebookError, match=reason):
        Notebook(text.encode())


def test_a_notebook_in_another_language_is_not_read(cli, tmp_path):
    document = training_notebook()
    document["metadata"] = {"kernelspec": {"language": "R", "name": "ir"}}
    document["cells"][5]["source"] = "print(model.config)"
    (tmp_path / "r.ipynb").write_text(json.dumps(document), encoding="utf-8")
    assert cli("--no-cache", "r.ipynb").code == 0


def test_notebook_on_standard_input(cli, tmp_path):
    text = write_notebook(tmp_path / "nb.ipynb", STYLES["nbformat"])
    result = cli("--stdin-filename", "nb.ipynb", "-", stdin=text.encode())
    assert "nb.ipynb:cell 6:3:20: TRL001" in result.out
    fixed = cli("--fix", "--stdin-filename", "nb.ipynb", stdin=text.encode())
    assert "accelerator.unwrap_model(model).config" in json.loads(fixed.out)["cells"][5]["source"]


def test_add_noqa_in_cells_then_nothing_more(cli, tmp_path):
    write_notebook(tmp_path / "nb.ipynb", STYLES["nbformat"])
    first = cli("--no-cache", "--add-noqa", "nb.ipynb")
    assert first.code == 0 and "Added 2 noqa directives." in first.err
    after = json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))
    assert after["cells"][5]["source"].endswith("model.config.vocab_size)  # noqa: TRL001")
    written = (tmp_path / "nb.ipynb").read_bytes()
    second = cli("--no-cache", "--add-noqa", "nb.ipynb")
    assert "Added 0 noqa directives." in second.err and (tmp_path / "nb.ipynb").read_bytes() == written
    assert cli("--no-cache", "nb.ipynb").out == "All checks passed!\n"


def test_a_folder_walk_finds_notebooks(cli, tmp_path):
    (tmp_path / "notebooks").mkdir()
    write_notebook(tmp_path / "notebooks" / "nb.ipynb", STYLES["nbformat"])
    result = cli("--no-cache", ".")
    assert "notebooks/nb.ipynb:cell 6:3:20: TRL001" in result.out


def test_a_fix_that_adds_lines_at_a_cells_start_stays_in_that_cell(cli, tmp_path):
    cells = [
        code("load", ["import deepspeed\n", "ref_model = None\n", "if use_ref:\n", "    ref_model = load()\n"]),
        code("engine", ["engine, *_ = deepspeed.initialize(model=ref_model, config=cfg)\n", "!echo done\n"]),
        code("after", ["print(1)"]),
    ]
    path = tmp_path / "ds.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
    assert "ds.ipynb:cell 2:1:14: TRL003" in cli("--no-cache", "ds.ipynb").out
    assert cli("--no-cache", "--fix", "--unsafe-fixes", "ds.ipynb").code == 0
    after = json.loads(path.read_text())["cells"]
    assert after[0]["source"] == cells[0]["source"] and after[2]["source"] == ["print(1)"]
    assert after[1]["source"] == [
        "if ref_model is not None:\n",
        "    engine, *_ = deepspeed.initialize(model=ref_model, config=cfg)\n",
        "!echo done\n",
    ]


def test_cached_results_keep_the_cell(cli, tmp_path):
    write_notebook(tmp_path / "nb.ipynb", STYLES["nbformat"])
    first = cli("--format", "json", "nb.ipynb").out
    second = cli("--format", "json", "nb.ipynb").out  # from the result cache
    assert (tmp_path / ".trllint_cache").exists() or any(tmp_path.glob(".*cache*"))
    assert json.loads(first) == json.loads(second)
    assert [f["cell"] for f in json.loads(second)] == [5, 6]


ODD_LAYOUT = (
    '{ "nbformat" : 4, "cells" : [\n'
    '  { "cell_type":"code", "source" : [ "import torch\\n" ,  "x = torch.ones(1)\\n" , "y = \\u00e9t\\u00e9\\n", "print(x)" ],\n'
    '    "outputs":[], "metadata":{}, "execution_count":null },\n'
    '  {"cell_type": "raw", "source": "print(model.config)"},\n'
    '  {"cell_type":"code","source":"%env A=1\\nz = 2","outputs":[],"metadata":{"k":[1,2]},"execution_count":3}\n'
    '], "metadata" : {}, "nbformat_minor" : 5 }'
)


def test_an_unchanged_program_gives_back_the_same_bytes_and_a_change_keeps_the_layout():
    data = ODD_LAYOUT.encode()
    notebook = Notebook(data)
    assert [c.number for c in notebook.cells] == [1, 3]  # the raw cell is not code
    assert notebook.program == 'import torch\nx = torch.ones(1)\ny = été\nprint(x)\npass  # trllint: IPython magic\nz = 2\n'
    assert notebook.with_program(notebook.program) == data
    changed = notebook.with_program(notebook.program.replace("print(x)", "print(x, y)"))
    assert changed.decode() == ODD_LAYOUT.replace('"print(x)" ]', '"print(x, y)" ]')  # spacing and \u00e9 escapes kept
    assert Notebook(changed).cells[1].source == "%env A=1\nz = 2"


def test_diff_shows_the_cell_change_and_writes_nothing(cli, tmp_path):
    text = write_notebook(tmp_path / "nb.ipynb", STYLES["nbformat"])
    result = cli("--no-cache", "--diff", "nb.ipynb")
    assert result.code == 1
    removed = [line for line in result.out.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in result.out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == len(added) == 2
    assert "accelerator.unwrap_model(model).config" in added[1]
    assert (tmp_path / "nb.ipynb").read_text(encoding="utf-8") == text


def test_the_body_of_a_time_cell_is_linted_and_its_magic_kept(cli, tmp_path):
    document = training_notebook()
    document["cells"][5]["source"] = ["%%time\n", "def report(accelerator, model):\n", "    !date\n", "    print(model.config.vocab_size)\n"]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    assert "nb.ipynb:cell 6:4:11: TRL001" in cli("--no-cache", "nb.ipynb").out
    cli("--no-cache", "--fix", "nb.ipynb")
    assert json.loads(path.read_text())["cells"][5]["source"] == [
        "%%time\n", "def report(accelerator, model):\n", "    !date\n", "    print(accelerator.unwrap_model(model).config.vocab_size)\n"
    ]


# ---- every Python rule case, cut into cells at its top-level statements ----------------------


def _python_cases():
    # A module of a project case needs its project (its neighbours); a notebook is one file alone.
    return [
        c for c in CASES
        if c.linted_as.endswith(".py") and c.linted_as != "setup.py" and c.path.is_file() and c.project is None
    ]


def as_notebook(text: str) -> bytes:
    """The file's lines cut before each top-level statement (decorators included): one cell each."""
    lines = text.splitlines(keepends=True)
    starts = sorted({min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1 for n in ast.parse(text).body} | {0})
    bounds = starts + [len(lines)]
    cells = [code(f"c{i}", lines[a:b]) for i, (a, b) in enumerate(zip(bounds, bounds[1:])) if b > a]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1).encode()


@pytest.mark.parametrize("case", _python_cases(), ids=str)
def test_a_rule_case_as_a_notebook_gives_the_same_findings_and_fix(case):
    text = case.path.read_text(encoding="utf-8")
    ruleset = _ruleset(case, text)
    data = as_notebook(text)
    notebook = Notebook(data)
    assert notebook.program == text + ("" if text.endswith("\n") or not text else "\n")

    result, _ = process_notebook(data, "case.ipynb", "case.ipynb", ruleset, Mode())
    first_line = {c.number: c.first_line for c in notebook.cells}
    lines_in_file = {(first_line[f.cell] + f.line - 1, f.code) for f in result.findings}
    as_script = lint_source(SourceFile(text, "case.py"), "case.py", ruleset)
    # A notebook no launcher starts runs in one process: the findings that need several (the
    # launch model) are not made there, and every other one lands on the same line.
    script_lines = {(f.line, f.code) for f in as_script}
    assert lines_in_file <= script_lines
    needs_processes = script_lines - lines_in_file
    assert {code for _, code in needs_processes} <= MULTI_PROCESS_RULES, needs_processes

    fixed, new_bytes = process_notebook(data, "case.ipynb", "case.ipynb", ruleset, Mode(fix=True, unsafe=True))
    assert not fixed.problems, fixed.problems
    if needs_processes:
        return  # the case's fix repairs findings the notebook does not have
    if case.fixed_path.exists():
        cells = json.loads(new_bytes)["cells"]
        assert "".join("".join(c["source"]) for c in cells) == case.fixed_path.read_text(encoding="utf-8")
    else:
        assert new_bytes is None


def test_unsafe_fix_applied_in_a_notebook_says_why_at_the_cells_line(cli, tmp_path):
    # Cell 2 gathers under a per-rank condition: only --unsafe-fixes writes it, and says why,
    # at the line within the cell, as it does for a .py file.
    cells = [
        code("setup", ["import torch\n", "from trl import GRPOTrainer\n"]),
        code(
            "trainer",
            ["class Distill(GRPOTrainer):\n", "    def _compute_loss(self, model, inputs):\n",
             '        advantages = inputs["advantages"]\n', '        valid = inputs["completion_mask"].bool()\n',
             "        if valid.any():\n",
             '            self._metrics["train"]["adv"].append(advantages.unsqueeze(1)[valid].mean().item())\n',
             "        return advantages.mean()\n"],
        ),
        code("launch", ["from accelerate import notebook_launcher\n", "def main():\n", "    Distill(model, args).train()\n",
                        "notebook_launcher(main, num_processes=2)\n"]),
    ]
    document = {"metadata": {"language_info": {"name": "python"}}, "nbformat_minor": 5, "nbformat": 4, "cells": cells}
    (tmp_path / "nb.ipynb").write_text(dump(document, STYLES["nbformat"]), encoding="utf-8")
    result = cli("--no-cache", "--select", "TRL004", "--fix", "--unsafe-fixes", "nb.ipynb")
    assert "nb.ipynb:6:" in result.err and "unsafe fix applied: the gather may hang" in result.err, result.err
    fixed = json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))
    assert "gather(" in "".join(fixed["cells"][1]["source"])


# ---- cells as the kernel reads them --------------------------------------------------


@pytest.fixture(params=["own rules", "IPython"])
def reading(request):
    """Each test below twice: with the rules used where IPython is not installed, and with
    IPython's own transformer (skipped where it is not installed)."""
    from trllint.engine.inputs import ipython_syntax

    if request.param == "IPython":
        pytest.importorskip("IPython.core.inputtransformer2", reason="IPython is not installed")
        ipython_syntax.use_ipython(True)
    else:
        ipython_syntax.use_ipython(False)
    yield request.param
    ipython_syntax.use_ipython(True)


def test_a_broken_cell_between_two_cells_with_findings_is_one_trl000_in_it(cli, tmp_path, reading):
    # Cell 6 does not parse; before it cell 5 has a TRL004, after it cell 7 a TRL001: all three are
    # reported, the TRL000 in its own cell at its own line, and --fix writes the other cells only.
    document = training_notebook()
    broken = code("broken", ["import os\n", 'print("unterminated\n', "x = 1\n"])
    document["cells"] = document["cells"][:5] + [broken] + document["cells"][5:]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    findings = json.loads(cli("--no-cache", "--format", "json", "nb.ipynb").out)
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("TRL004", 5, 9), ("TRL000", 6, 2), ("TRL001", 7, 3)]
    assert findings[1]["column"] == 7 and "unterminated string literal" in findings[1]["message"]
    assert findings[1]["fix"] is None

    result = cli("--no-cache", "--fix", "nb.ipynb")
    assert result.code == 1 and "2 fixed, 1 remaining" in result.out
    after = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert after[5]["source"] == broken["source"]
    assert "accelerator.unwrap_model(model).config" in after[6]["source"]


def test_automagic_one_line_cells_run_as_jupyter_runs_them(cli, tmp_path, reading):
    # IPython's automagic runs a one-line `pip install x` or `cd ..`; a second line, or a name the
    # notebook binds, makes them Python, which Jupyter rejects: TRL000 there, as in Jupyter.
    cells = [
        code("pip", "pip install accelerate transformers"),
        code("cd", ["cd ..\n"]),
        code("ls", "ls -la"),
        code("conda", "  conda install -y pytorch"),
        code("assign", "pip_version = 3\nenv = {}\n"),  # binds `env`: the `env` cell below is Python
        code("env", "env"),
        code("two_lines", "# dependencies\npip install trl\n"),
        code("shadowed", "cd = 1\n"),
        code("cd_again", "cd ..\n"),
    ]
    path = tmp_path / "magic.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    findings = json.loads(cli("--no-cache", "--format", "json", "magic.ipynb").out)
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("TRL000", 7, 2), ("TRL000", 9, 1)]


def test_prefixed_magics_help_and_cell_magics_give_no_finding_and_keep_their_lines(cli, tmp_path, reading):
    cells = [
        code("line", ["%load_ext autoreload\n", "%autoreload 2\n", "import torch\n"]),
        code("shell", ["!pip install -q accelerate \\\n", "    deepspeed\n", "files = !ls\n", "t = %timeit -o torch.ones(1)\n"]),
        code("help", ["torch.ones?\n", "??torch\n"]),
        code("bash", ["%%bash\n", "for x in 1 2; do\n", "  echo $x\n", "done\n"]),
        code("time", ["%%time\n", "pip install x\n"]),  # the body is a one-line cell: automagic
    ]
    path = tmp_path / "magics.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    assert cli("--no-cache", "magics.ipynb").out == "All checks passed!\n"
    program = Notebook(path.read_bytes()).program
    assert program.count("\n") == sum(len(c["source"]) for c in cells)  # a line for each line
    assert "import torch\n" in program and "!pip" not in program and "%%bash" not in program


def test_a_cell_with_prompts_or_indentation_reports_and_fixes_at_its_own_columns(cli, tmp_path, reading):
    # IPython cuts `>>> ` and a common indentation: findings and fixes stand where the text is.
    document = training_notebook()
    document["cells"][5]["source"] = [
        ">>> def report(accelerator, model):\n", "...     files = !ls\n",
        '...     print("vocab", model.config.vocab_size)\n', "...     extra(model)\n",
    ]
    document["cells"].insert(6, code("indented", ["    def extra(model):\n", "        print(model.config)\n"]))
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    findings = json.loads(cli("--no-cache", "--format", "json", "--select", "TRL001", "nb.ipynb").out)
    assert [(f["cell"], f["line"], f["column"]) for f in findings] == [(6, 3, 24), (7, 2, 15)]
    cli("--no-cache", "--fix", "--select", "TRL001", "nb.ipynb")
    after = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert after[5]["source"][2] == '...     print("vocab", accelerator.unwrap_model(model).config.vocab_size)\n'
    assert after[6]["source"] == ["    def extra(model):\n", "        print(model.config)\n"]  # no accelerator in scope: no fix


def test_newer_syntax_in_a_cell_is_trl000_for_the_project_target_and_the_rest_is_linted(cli, tmp_path, reading):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.10"\n')
    document = training_notebook()
    document["cells"][3]["source"] = ['names = {"k": 1}\n', 'print(f"{names["k"]}")\n']  # PEP 701: 3.12
    (tmp_path / "nb.ipynb").write_text(json.dumps(document, indent=1), encoding="utf-8")
    findings = json.loads(cli("--no-cache", "--format", "json", "nb.ipynb").out)
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("TRL000", 4, 2), ("TRL004", 5, 9), ("TRL001", 6, 3)]
    assert "needs Python 3.12" in findings[0]["message"] and 'requires-python = ">=3.10"' in findings[0]["message"]


def test_a_fix_is_never_written_inside_a_magic_line_or_a_cell_left_out(reading):
    cells = [
        code("magic", ["import torch\n", "!nvidia-smi\n", "x = 1\n"]),
        code("broken", ["def f(:\n", "    pass\n"]),
        code("bash", ["%%bash\n", "ls\n"]),
        code("prompt", [">>> y = 2\n", ">>> z = 3\n"]),
    ]
    notebook = Notebook(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode())
    program = notebook.program
    assert program.splitlines()[1] == "pass  # trllint: IPython magic"
    assert notebook.with_program(program.replace("x = 1", "x = 2")) != notebook.with_program(program)
    for changed in (
        program.replace("pass  # trllint: IPython magic", "pass  # edited"),  # inside the magic's placeholder
        program.replace("pass  # trllint: IPython magic\n", ""),  # the magic line removed
        program.replace("# trllint: cell not linted, it does not parse (TRL000)\n", "", 1),  # the broken cell
        program.replace("# trllint: IPython cell magic\n", "x = 0\n", 1),  # the %%bash cell
        program.replace("y = 2\n", "y = 2\nw = 4\n"),  # a line added where a prompt was cut
    ):
        with pytest.raises(NotebookError, match="not written"):
            notebook.with_program(changed)
    # A guard that indents the magic's block indents the magic with it.
    guarded = program.replace("pass  # trllint: IPython magic\nx = 1\n", "if ok:\n    pass  # trllint: IPython magic\n    x = 1\n")
    assert json.loads(notebook.with_program(guarded))["cells"][0]["source"] == [
        "import torch\n", "if ok:\n", "    !nvidia-smi\n", "    x = 1\n"
    ]


def test_a_notebook_that_ran_on_a_newer_python_may_use_its_syntax_unless_the_project_says_otherwise(cli, tmp_path):
    # With no target configured, the running Python stands in; the Python the notebook last ran on
    # (Colab's 3.12, recorded by Jupyter) raises it, never lowers it. A project's target wins.
    def notebook(version: str) -> str:
        cells = [code("f", ['row = {"name": 1}\n', 'print(f"{row["name"]}")\n']), code("m", "match 1:\n    case _:\n        pass\n")]
        metadata = {"language_info": {"name": "python", "version": version}}
        return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5})

    (tmp_path / "colab.ipynb").write_text(notebook("3.12.11"))
    (tmp_path / "old.ipynb").write_text(notebook("3.8.5"))
    findings = json.loads(cli("--no-cache", "--format", "json", ".").out)
    # old.ipynb ran on 3.8, but its target stays the running Python: the PEP 701 f-string is new
    # only there (before 3.12), `match` never (3.10 is older than any Python trllint runs on).
    expected = [] if sys.version_info >= (3, 12) else [("old.ipynb", 1, 2)]
    assert [(f["path"], f["cell"], f["line"]) for f in findings] == expected
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.9"\n')
    findings = json.loads(cli("--no-cache", "--format", "json", ".").out)
    assert [(f["path"], f["cell"], f["line"]) for f in findings] == [("colab.ipynb", 1, 2), ("old.ipynb", 1, 2)]
    assert 'the target is Python 3.9 (requires-python = ">=3.9")' in findings[0]["message"]
