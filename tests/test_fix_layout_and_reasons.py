"""Fixed lines fit the project's line length; unsafe fixes say why (text and JSON)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from trllint.app.config import load_config

TRAINER = textwrap.dedent(
    """\
    from trl import DPOTrainer


    class MarginDPOTrainer(DPOTrainer):
        def get_batch_loss_metrics(self, model, batch, train_eval="train"):
            model_output = self.concatenated_forward(model, batch)
            chosen_rewards, rejected_rewards = model_output["chosen_rewards"], model_output["rejected_rewards"]
            metrics = {}
            metrics["rewards/margins"] = (chosen_rewards - rejected_rewards).mean().cpu()
            if chosen_rewards.numel() > 0:
                metrics["rewards/chosen"] = chosen_rewards.mean().cpu()
            return model_output["loss"], metrics
    """
)
PREPARE = textwrap.dedent(
    """\
    from accelerate import Accelerator

    accelerator = Accelerator()
    reference_model_for_kl = accelerator.prepare_model(reference_model, evaluation_mode=True)
    """
)


def _project(tmp_path: Path, tools: str) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.trllint]\nselect = ["TRL002", "TRL004"]\n' + tools)
    (tmp_path / "train.py").write_text(TRAINER)
    (tmp_path / "prepare.py").write_text(PREPARE)
    return tmp_path


@pytest.mark.parametrize(
    ("tools", "limit"),
    [
        ("", 88),
        ("[tool.black]\nline-length = 100\n", 100),
        ("[tool.ruff]\nline-length = 96\n[tool.black]\nline-length = 100\n", 96),
    ],
)
def test_fixed_lines_fit_the_line_length_of_trllint_ruff_or_black(cli, tmp_path, tools, limit):
    project = _project(tmp_path, tools)
    assert load_config(project / "pyproject.toml").rule_settings.get("line-length", 88) == limit
    before = {name: (project / name).read_text() for name in ("train.py", "prepare.py")}
    # --preview: no launch of the project shows FSDP, so TRL002's finding in prepare.py is a preview one.
    cli("--no-cache", "--preview", "--fix", "--unsafe-fixes", str(project))
    for name, text in before.items():
        fixed = (project / name).read_text()
        assert fixed != text
        cst.parse_module(fixed)
        added = set(fixed.splitlines()) - set(text.splitlines())
        assert added and all(len(line) <= limit for line in added), added


def test_trllint_line_length_wins_over_ruff(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.trllint]\nline-length = 120\n[tool.ruff]\nline-length = 80\n")
    assert load_config(tmp_path / "pyproject.toml").rule_settings["line-length"] == 120


def test_an_unsafe_fix_states_its_reason_in_text_and_json(cli, tmp_path):
    project = _project(tmp_path, "[tool.trllint.per-file-ignores]\n\"prepare.py\" = [\"TRL002\"]\n")
    # --preview: TRL004, whose fixes these are, is a preview rule.
    findings = json.loads(cli("--no-cache", "--preview", "--format", "json", str(project)).out)
    fixes = {f["line"]: f["fix"] for f in findings}
    assert fixes[9]["applicability"] == "safe" and fixes[9]["reason"] is None
    assert fixes[11]["applicability"] == "unsafe"
    assert "chosen_rewards.numel() > 0" in fixes[11]["reason"]
    text = cli("--no-cache", "--preview", str(project)).out
    assert "[unsafe fix: the gather may hang: it runs only on ranks where `chosen_rewards.numel() > 0` holds]" in text


def test_a_gather_under_a_rank_test_read_from_the_environment_is_unsafe(cli):
    """Only rank 0 enters `if os.environ["LOCAL_RANK"] == "0":`, as it enters `if
    accelerator.is_main_process:`: a gather there hangs the job, so the fix is never safe."""
    case = Path(__file__).parents[1] / "rules/trl004_ungathered_metric/cases/bad_rank_test_read_from_environment.py"
    findings = json.loads(cli("--no-cache", "--preview", "--select", "TRL004", "--format", "json", str(case)).out)
    fixes = {f["line"]: (f["fix"]["applicability"], f["fix"]["reason"]) for f in findings}
    assert fixes == {
        23: ("unsafe", 'the gather may hang: it runs only on ranks where `os.environ["LOCAL_RANK"] == "0"` holds'),
        27: ("unsafe", 'the gather may hang: it runs only on ranks where `int(os.environ.get("RANK", 0)) == 0` holds'),
        31: ("safe", None),  # `ddp`: every rank agrees, every rank gathers
    }
