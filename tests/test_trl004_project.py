"""TRL004 across modules: helpers and base classes in other modules of the linted file's project.

A function imported from the project is read from its module's summary: one that reduces across
ranks gives a global value, one whose result comes from calls the linter cannot see stays unknown,
any other is read through its arguments (like a function of the linted file). The same holds for
``self.m()`` where ``m`` comes from a base class in another module. Outside the project (an
installed library, a module that is not there) a call stays unknown, and unknown is silent.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst

from trllint.facts.rank_flow import rank_flows
from trllint.facts.rank_lattice import Rank
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile
from trllint.semantic.model import SemanticModel

DIST = """
import torch
import torch.distributed as dist
from fairscale.utils import compute_elsewhere


def get_all_reduce_mean(tensor):
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    tensor = tensor / dist.get_world_size()
    return tensor


def reduce_value(value, average=True):
    world_size = dist.get_world_size() if dist.is_initialized() else 1
    if world_size < 2:
        return value
    dist.all_reduce(value)
    if average:
        value /= world_size
    return value


def local_mean(values):
    return values.float().mean()


def from_elsewhere(values):
    return compute_elsewhere(values)
"""

BASES = """
import torch
import torch.distributed as dist
from transformers import Trainer

from .helpers import compute_elsewhere


class ProjectTrainer(Trainer):
    def _local_accuracy(self, logits, labels):
        return (logits.argmax(-1) == labels).float().mean()

    def _reduced_accuracy(self, logits, labels):
        accuracy = (logits.argmax(-1) == labels).float().mean()
        dist.all_reduce(accuracy)
        return accuracy / dist.get_world_size()

    def _opaque(self, logits):
        return compute_elsewhere(logits)


class PlainLogTrainer(Trainer):
    def log(self, logs, start_time=None):
        for key, metrics in self._stored_metrics["train"].items():
            logs[key] = sum(metrics) / len(metrics)
        return super().log(logs, start_time)


class ReducingLogTrainer(Trainer):
    def log(self, logs, start_time=None):
        keys, metric_list = [], []
        for key, metrics in self._stored_metrics["train"].items():
            keys.append(key)
            metric_list.append(sum(metrics) / len(metrics))
        metric_list = self.accelerator.reduce(torch.tensor(metric_list), "mean").tolist()
        logs.update(zip(keys, metric_list))
        return super().log(logs, start_time)
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _source(path: Path, *, in_project: bool = True) -> SourceFile:
    return SourceFile(text=path.read_text(encoding="utf-8"), display_path=path.name, path=path if in_project else None)


def _state_of(source: SourceFile, assigned: str) -> Rank:
    """The state of the value assigned to ``assigned`` (``x = f(...)``) in its function."""
    found: list[tuple[cst.FunctionDef, cst.Assign]] = []

    class Find(cst.CSTVisitor):
        def __init__(self) -> None:
            self.function: list[cst.FunctionDef] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.function.append(node)

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.function.pop()

        def visit_Assign(self, node: cst.Assign) -> None:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and target.value == assigned:
                found.append((self.function[-1], node))

    source.module.visit(Find())
    (function, assign), = found
    flow = rank_flows(SemanticModel.of(source)).flow(function)
    line = next(line for small, line in flow.statements if small is assign)
    return flow.state(assign.value, line)


def _findings(source: SourceFile) -> list[tuple[int, str]]:
    ruleset = RuleSet([all_rules()["TRL004"].rule], {}, preview=True)
    return [(f.line, f.code) for f in lint_source(source, source.display_path, ruleset)]


LOOP = """
from accelerate import Accelerator
{imports}


def train(model, train_dataloader):
    accelerator = Accelerator(log_with="wandb")
    model, train_dataloader = accelerator.prepare(model, train_dataloader)
    for batch in train_dataloader:
        logits = model(**batch).logits
        correct = (logits.argmax(-1) == batch["labels"]).float()
        value = {call}
        accelerator.log({{"accuracy": value.item()}})
"""


def _loop(tmp_path: Path, imports: str, call: str, extra: dict[str, str] | None = None) -> SourceFile:
    files = {"utils/__init__.py": "", "utils/dist.py": DIST, **(extra or {})}
    files["train.py"] = LOOP.format(imports=imports, call=call)
    root = _project(tmp_path, files)
    return _source(root / "train.py")


def test_a_reducing_project_helper_is_global_not_merely_unknown(tmp_path):
    source = _loop(tmp_path, "from utils.dist import get_all_reduce_mean", "get_all_reduce_mean(correct.mean())")
    assert _state_of(source, "value") == Rank.GLOBAL
    assert _findings(source) == []


def test_a_project_helper_that_computes_locally_is_read_through_its_arguments(tmp_path):
    source = _loop(tmp_path, "from utils.dist import local_mean", "local_mean(correct)")
    assert _state_of(source, "value") == Rank.PER_RANK
    assert _findings(source) == [(13, "TRL004")]


def test_a_module_imported_under_an_alias(tmp_path):
    source = _loop(tmp_path, "import utils.dist as du", "du.local_mean(correct)")
    assert _state_of(source, "value") == Rank.PER_RANK
    source = _loop(tmp_path, "import utils.dist as du", "du.get_all_reduce_mean(correct.mean())")
    assert _state_of(source, "value") == Rank.GLOBAL


def test_a_helper_whose_result_comes_from_elsewhere_stays_unknown(tmp_path):
    source = _loop(tmp_path, "from utils.dist import from_elsewhere", "from_elsewhere(correct)")
    assert _state_of(source, "value") == Rank.NO_DATA
    assert _findings(source) == []


def test_a_helper_that_reduces_on_some_returns_only_is_unknown(tmp_path):
    # `if world_size < 2: return value` before the all-reduce: not read through its arguments.
    source = _loop(tmp_path, "from utils.dist import reduce_value", "reduce_value(correct.mean())")
    assert _state_of(source, "value") == Rank.NO_DATA
    assert _findings(source) == []


def test_the_single_process_shortcut_in_the_same_file_is_unknown_too(tmp_path):
    code = DIST + LOOP.format(imports="", call="reduce_value(correct.mean())")
    source = SourceFile(text=textwrap.dedent(code), display_path="t.py")
    assert _state_of(source, "value") == Rank.NO_DATA
    assert _findings(source) == []


def test_a_missing_module_and_an_installed_library_stay_unknown(tmp_path):
    source = _loop(tmp_path, "from utils.metrics import local_mean", "local_mean(correct)")
    assert _state_of(source, "value") == Rank.NO_DATA
    source = _loop(tmp_path, "from torchmetrics.functional import local_mean", "local_mean(correct)")
    assert _state_of(source, "value") == Rank.NO_DATA


def test_without_a_project_an_imported_helper_stays_unknown(tmp_path):
    source = _loop(tmp_path, "from utils.dist import local_mean", "local_mean(correct)")
    alone = _source(tmp_path / "train.py", in_project=False)
    assert _state_of(alone, "value") == Rank.NO_DATA
    assert _findings(alone) == []
    assert _state_of(source, "value") == Rank.PER_RANK


def test_a_relative_import_reads_the_sibling_module(tmp_path):
    root = _project(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/dist.py": DIST,
            "pkg/train.py": LOOP.format(imports="from .dist import local_mean, get_all_reduce_mean", call="local_mean(correct)"),
        },
    )
    assert _state_of(_source(root / "pkg" / "train.py"), "value") == Rank.PER_RANK


TRAINER = """
from .bases import ProjectTrainer


class Middle(ProjectTrainer):
    pass


class MyTrainer(Middle):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        value = {call}
        self.log({{"accuracy": value.item()}})
        return outputs.loss
"""


def _trainer(tmp_path: Path, call: str, own: str = "") -> SourceFile:
    root = _project(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/helpers.py": "def compute_elsewhere(x):\n    return x\n",
            "pkg/bases.py": BASES,
            "pkg/trainer.py": TRAINER.format(call=call) + own,
        },
    )
    return _source(root / "pkg" / "trainer.py")


def test_a_method_of_a_project_base_through_a_base_in_this_file(tmp_path):
    local = _trainer(tmp_path, 'self._local_accuracy(outputs.logits, inputs["labels"])')
    assert _state_of(local, "value") == Rank.PER_RANK
    assert _findings(local) == [(13, "TRL004")]
    reduced = _trainer(tmp_path, 'self._reduced_accuracy(outputs.logits, inputs["labels"])')
    assert _state_of(reduced, "value") == Rank.GLOBAL
    assert _findings(reduced) == []
    opaque = _trainer(tmp_path, "self._opaque(outputs.logits)")
    assert _state_of(opaque, "value") == Rank.NO_DATA


def test_a_method_this_file_defines_wins_over_the_base(tmp_path):
    own = "\n    def _reduced_accuracy(self, logits, labels):\n        return (logits.argmax(-1) == labels).float().mean()\n"
    source = _trainer(tmp_path, 'self._reduced_accuracy(outputs.logits, inputs["labels"])', own)
    assert _state_of(source, "value") == Rank.PER_RANK


STORING = """
from .bases import {base}


class RewardTrainer({base}):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        chosen = model(inputs["chosen_input_ids"]).logits
        rejected = model(inputs["rejected_input_ids"]).logits
        accuracy = (chosen > rejected).float().mean()
        self._stored_metrics["train"]["accuracy"].append(accuracy.item())
        return -(chosen - rejected).sigmoid().log().mean()
"""


def _storing(tmp_path: Path, base: str) -> SourceFile:
    root = _project(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/helpers.py": "def compute_elsewhere(x):\n    return x\n",
            "pkg/bases.py": BASES,
            "pkg/trainer.py": STORING.format(base=base),
        },
    )
    return _source(root / "pkg" / "trainer.py")


def test_stored_values_under_a_base_whose_log_reduces_the_buffer_are_silent(tmp_path):
    assert _findings(_storing(tmp_path, "ReducingLogTrainer")) == []


def test_stored_values_under_a_base_whose_log_does_not_reduce_are_reported(tmp_path):
    assert _findings(_storing(tmp_path, "PlainLogTrainer")) == [(10, "TRL004")]


def test_stored_values_under_an_unreadable_base_are_reported_as_before(tmp_path):
    # A base the linter cannot read says nothing either way: the rule reports stored values as it
    # does for a library trainer's subclass (TRL's trainers log the buffer without reducing it).
    assert _findings(_storing(tmp_path, "MissingTrainer")) == [(10, "TRL004")]


def test_a_project_helper_is_not_read_through_a_parameter_named_like_data(tmp_path):
    """ms-swift's GRPO: ``_compute_advantages(samples, rewards_per_func)`` gets the gathered
    rewards from another method; a project helper fed that parameter is not proven per-rank. Fed
    this function's own model output, it is."""
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": DIST,
        "pkg/trainer.py": """\
            from .helpers import local_mean


            class Trainer:
                def _compute_advantages(self, samples, rewards_per_func):
                    from_parameter = local_mean(rewards_per_func)
                    return from_parameter

                def step(self, model, inputs):
                    outputs = model(**inputs)
                    from_output = local_mean(outputs.logits)
                    return from_output
            """,
    })
    source = _source(root / "pkg/trainer.py")
    assert _state_of(source, "from_parameter") == Rank.NO_DATA
    assert _state_of(source, "from_output") == Rank.PER_RANK


def test_a_parameter_every_call_of_the_file_fills_with_a_gathered_value_is_global(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/trainer.py": """\
            class Trainer:
                def _advantages(self, rewards_per_func):
                    reward_mean = rewards_per_func.mean()
                    return reward_mean

                def _score(self, inputs):
                    rewards = self.accelerator.gather(self.reward_model(**inputs))
                    return self._advantages(rewards)

                def _score_locally(self, inputs):
                    local_rewards = self.reward_model(**inputs)
                    return self._plain(local_rewards)

                def _plain(self, rewards_local):
                    local_mean = rewards_local.mean()
                    return local_mean
            """,
    })
    source = _source(root / "pkg/trainer.py")
    assert _state_of(source, "reward_mean") == Rank.GLOBAL
    assert _state_of(source, "local_mean") == Rank.PER_RANK


STATS_CASE = Path(__file__).parent.parent / "rules/trl004_ungathered_metric/cases/bad_stats_buffer_reaches_log.py"


def test_flows_are_built_only_where_a_value_can_reach_a_sink(flows_built):
    # The stats-buffer case, with forty more methods that neither log, write a buffer the sinks
    # read, nor return to a metrics helper's caller: they are not followed (their flows cannot put
    # a value in front of a sink), and the buffer written in `training_step` is still found.
    case = STATS_CASE.read_text(encoding="utf-8")
    helpers = "".join(
        f"\n    def helper_{i}(self, batch):\n        total = batch.sum() + {i}\n        dist.all_reduce(total)\n        return total\n"
        for i in range(40)
    )
    source = SourceFile(text="import torch.distributed as dist\n" + case + helpers, display_path="train.py")
    appended = 1 + next(i for i, line in enumerate(case.splitlines(), 1) if ".append(" in line)
    assert _findings(source) == [(appended, "TRL004")]
    # `__init__` binds the buffer, so it may write one; no helper is followed.
    assert set(flows_built) == {"<module>", "__init__", "log", "training_step"}


CONFIG_MODULE = """
from dataclasses import dataclass


@dataclass
class TrainConfig:
    lr: float = 1e-4

    def describe(self, logger):
        logger.info("lr %s", self.lr)
"""

LOGGER_MODULE = """
import wandb


class RunLogger:
    def __init__(self, project):
        self._run = wandb.init(project=project)

    def scalars(self, values, step):
        self._run.log(values, step=step)
"""

CONSTRUCTING_LOOP = """
from accelerate import Accelerator
from utils.config import TrainConfig
from utils.run_logger import RunLogger


def train(model, train_dataloader):
    accelerator = Accelerator()
    config = TrainConfig()
    run_logger = RunLogger("demo")
    model, train_dataloader = accelerator.prepare(model, train_dataloader)
    for step, batch in enumerate(train_dataloader):
        logits = model(**batch).logits
        accuracy = (logits.argmax(-1) == batch["labels"]).float().mean()
        run_logger.scalars({"accuracy": accuracy.item()}, step)
"""


def test_a_constructed_class_is_read_as_a_logger_only_where_its_module_spells_a_sink(tmp_path, monkeypatch):
    from trllint.semantic.project import modules as modules_module

    root = _project(tmp_path, {
        "utils/__init__.py": "",
        "utils/config.py": CONFIG_MODULE,
        "utils/run_logger.py": LOGGER_MODULE,
        "train.py": CONSTRUCTING_LOOP,
    })
    parsed: list[Path] = []
    real = modules_module._parse
    monkeypatch.setattr(modules_module, "_parse", lambda path, data: parsed.append(path) or real(path, data))
    findings = _findings(_source(root / "train.py"))
    # This rank's accuracy goes to wandb through the project's logger, and is found there.
    assert findings == [(15, "TRL004")]
    # The config's module logs nothing (`logger.info` is no metric sink): its text says so, unparsed.
    assert [path.name for path in parsed] == ["run_logger.py"]
