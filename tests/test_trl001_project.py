"""TRL001 across modules: a self attribute wrapped by a base class in another module of the project.

The project cases (rules/trl001_wrapped_model_attribute/cases/*_base_*/) hold the common shapes;
these tests hold what a case folder cannot: a base module that does not parse, a chain of bases
where a nearer one rebinds the attribute, and a summary that stays about its own module.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from trllint.semantic.project import index as project_module
from trllint.facts.accelerators import ACCELERATOR_ATTRIBUTES
from trllint.rules.trl001_wrapped_model_attribute.wrapped_models import HANDED_TO_METHODS, SELF_ATTRIBUTES
from trllint.semantic.model import SemanticModel
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

WRAPPING_BASE = """
    from accelerate import Accelerator


    class BaseTrainer:
        def __init__(self, model, optimizer):
            self.accelerator = Accelerator()
            self.model, self.optimizer = self.accelerator.prepare(model, optimizer)
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    project_module.use_cache_folder(None)  # a fresh index: no summary of another test's tree
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return tmp_path


def _findings(path: Path) -> list[tuple[int, str]]:
    source = SourceFile(text=path.read_text(), display_path=path.name, path=path)
    ruleset = RuleSet([all_rules()["TRL001"].rule], {}, preview=True)
    return [(f.line, f.message) for f in lint_source(source, path.name, ruleset)]


def test_a_base_module_that_does_not_parse_is_unknown(tmp_path):
    root = _project(
        tmp_path,
        {
            "base.py": WRAPPING_BASE + "        self.broken = (\n",
            "train.py": """
                from base import BaseTrainer


                class MyTrainer(BaseTrainer):
                    def sample(self, input_ids):
                        return self.model.generate(input_ids)
            """,
        },
    )
    assert _findings(root / "train.py") == []


def test_a_nearer_base_that_rebinds_the_attribute_hides_the_wrapping(tmp_path):
    root = _project(
        tmp_path,
        {
            "base.py": WRAPPING_BASE,
            "middle.py": """
                from base import BaseTrainer


                class BareModelTrainer(BaseTrainer):
                    def __init__(self, model, optimizer):
                        super().__init__(model, optimizer)
                        self.model = model
            """,
            "train.py": """
                from middle import BareModelTrainer


                class MyTrainer(BareModelTrainer):
                    def sample(self, input_ids):
                        return self.model.generate(input_ids)
            """,
        },
    )
    assert _findings(root / "train.py") == []


def test_a_base_of_the_file_between_the_class_and_the_project_base(tmp_path):
    root = _project(
        tmp_path,
        {
            "base.py": WRAPPING_BASE,
            "train.py": """
                from base import BaseTrainer


                class Mixin(BaseTrainer):
                    pass


                class MyTrainer(Mixin):
                    def sample(self, input_ids):
                        return self.model.generate(input_ids)
            """,
        },
    )
    [(line, message)] = _findings(root / "train.py")
    assert line == 10
    assert "self.accelerator.prepare(...) in BaseTrainer" in message
    assert "self.accelerator.unwrap_model(self.model)" in message


def test_reads_in_init_before_super_init_are_not_wrapped(tmp_path):
    root = _project(
        tmp_path,
        {
            "base.py": WRAPPING_BASE,
            "train.py": """
                from base import BaseTrainer


                class MyTrainer(BaseTrainer):
                    def __init__(self, model, optimizer):
                        self.model = model
                        self.vocab_size = self.model.config.vocab_size
                        super().__init__(model, optimizer)
            """,
        },
    )
    assert _findings(root / "train.py") == []


def test_reads_in_init_after_super_init_are_wrapped(tmp_path):
    root = _project(
        tmp_path,
        {
            "base.py": WRAPPING_BASE,
            "train.py": """
                from base import BaseTrainer


                class MyTrainer(BaseTrainer):
                    def __init__(self, model, optimizer):
                        super().__init__(model, optimizer)
                        self.pad_token_id = self.model.config.pad_token_id
            """,
        },
    )
    [(line, message)] = _findings(root / "train.py")
    assert line == 7 and "in BaseTrainer" in message


def test_the_module_facts_say_what_its_class_binds(tmp_path):
    model = SemanticModel.of(SourceFile(text=textwrap.dedent(WRAPPING_BASE), display_path="base.py"))
    attributes = SELF_ATTRIBUTES.compute(model)["BaseTrainer"]
    assert set(attributes["wrapped"]) == {"self.model", "self.optimizer"}
    assert attributes["wrapped"]["self.model"] == ["accelerate", "self.accelerator.prepare(...)", "self.accelerator", False]
    assert attributes["bound"] == ["self.accelerator", "self.model", "self.optimizer"]
    assert ACCELERATOR_ATTRIBUTES.compute(model) == {"BaseTrainer": "self.accelerator"}


def test_a_base_two_packages_up_through_a_relative_import(tmp_path):
    # (Deeper than a case folder may go: the wheel carries cases three levels down.)
    root = _project(
        tmp_path,
        {
            "rl/__init__.py": "",
            "rl/core/__init__.py": "",
            "rl/core/base.py": WRAPPING_BASE,
            "rl/algos/__init__.py": "",
            "rl/algos/ppo.py": """
                from ..core.base import BaseTrainer


                class PPOTrainer(BaseTrainer):
                    def rollout(self, queries):
                        return self.model.generate(queries)
            """,
        },
    )
    [(line, message)] = _findings(root / "rl" / "algos" / "ppo.py")
    assert line == 6 and "self.accelerator.unwrap_model(self.model)" in message


def test_a_helper_module_is_read_for_a_returned_wrapper_only_where_it_spells_one(tmp_path, monkeypatch):
    from trllint.semantic.project import modules as modules_module

    root = _project(tmp_path, {
        "dist_utils/__init__.py": "",
        "dist_utils/ddp.py": """
            from torch.nn.parallel import DistributedDataParallel


            def setup_ddp(model, rank):
                return DistributedDataParallel(model.cuda(rank), device_ids=[rank])
        """,
        "dist_utils/sharding.py": """
            from torch.distributed.fsdp import FullyShardedDataParallel


            def shard(model):
                return FullyShardedDataParallel(model)
        """,
        "train.py": """
            from dist_utils.ddp import setup_ddp
            from dist_utils.sharding import shard


            def main(model, rank, frozen_encoder):
                model = setup_ddp(model, rank)
                encoder = shard(frozen_encoder)
                print(model.config.hidden_size, encoder.config.hidden_size)
        """,
    })
    parsed: list[Path] = []
    real = modules_module._parse
    monkeypatch.setattr(modules_module, "_parse", lambda path, data: parsed.append(path) or real(path, data))
    findings = _findings(root / "train.py")
    # The DDP the helper returns is found; FSDP forwards `.config`, so the sharded encoder is not.
    assert [line for line, _ in findings] == [8]
    # `FullyShardedDataParallel` holds "DataParallel" but makes no DDP: its module is not parsed.
    assert [path.name for path in parsed] == ["ddp.py"]


SAMPLING_BASE = """
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM


    class RLTrainer:
        def __init__(self, path):
            self.accelerator = Accelerator()
            self.model = AutoModelForCausalLM.from_pretrained(path)

        def act(self, inputs):
            return self.model.generate(**inputs)
"""

PREPARING_SUBCLASS = """
    from .base import RLTrainer


    class PPOTrainer(RLTrainer):
        def learn(self, loader):
            self.model, loader = self.accelerator.prepare(self.model, loader)
"""


def test_a_subclass_added_beside_a_cached_file_lints_it_again(tmp_path, cli, monkeypatch):
    # The cached result of rl/base.py read which modules its folder held: a module added there
    # (that prepares what the base's `act` reads) makes the next run lint it again, and so does
    # its removal.
    project = _project(tmp_path, {"rl/__init__.py": "", "rl/base.py": SAMPLING_BASE})
    monkeypatch.chdir(project)
    assert cli("--preview", "--select", "TRL001", "--format", "json", "rl").out.strip() == "[]"
    (project / "rl" / "ppo.py").write_text(textwrap.dedent(PREPARING_SUBCLASS).lstrip())
    found = json.loads(cli("--preview", "--select", "TRL001", "--format", "json", "rl").out)
    assert [(f["path"], f["line"]) for f in found] == [("rl/base.py", 11)]
    (project / "rl" / "ppo.py").unlink()
    assert cli("--preview", "--select", "TRL001", "--format", "json", "rl").out.strip() == "[]"
    assert list((project / ".trllint_cache").glob("results-*.json"))


KEEPING_BASE = """
    class ModelFoundation:
        def __init__(self, config):
            self.config = config
            self.model = None

        def load_model(self, loader):
            self.model = loader(self.config.model_path)
            self.model.requires_grad_(False)

        def set_prepared_model(self, model):
            self.model = model
"""

KEPT_READER = """
    from models.foundation import ModelFoundation


    class Flux(ModelFoundation):
        def patch_size(self):
            return self.model.config.patch_size
"""

HANDING_TRAINER = """
    from accelerate import Accelerator


    def prepare_models(family, optimizer):
        accelerator = Accelerator()
        results = accelerator.prepare(family.model, optimizer)
        family.set_prepared_model(results[0])
        family.set_other(optimizer, model=accelerator.prepare(family.model))
        return accelerator
"""


def test_the_module_facts_say_what_it_hands_to_other_classes_methods():
    model = SemanticModel.of(SourceFile(text=textwrap.dedent(HANDING_TRAINER), display_path="trainer.py"))
    handed = HANDED_TO_METHODS.compute(model)
    assert handed == {
        "set_prepared_model": [[0, "accelerate", "accelerator.prepare(...)", "accelerator", False]],
        "set_other": [["model", "accelerate", "accelerator.prepare(...)", "accelerator", False]],
    }


def test_a_trainer_added_anywhere_in_the_project_lints_a_cached_kept_reader_again(tmp_path, cli, monkeypatch):
    # The cached result of models/flux.py read which modules of the whole project call the
    # method by which its base keeps the model: a trainer added in another folder, that hands it
    # a prepared model, makes the next run lint it again, and so does its removal.
    project = _project(tmp_path, {"models/__init__.py": "", "models/foundation.py": KEEPING_BASE, "models/flux.py": KEPT_READER})
    monkeypatch.chdir(project)
    assert cli("--preview", "--select", "TRL001", "--format", "json", "models").out.strip() == "[]"
    (project / "training").mkdir()
    (project / "training" / "trainer.py").write_text(textwrap.dedent(HANDING_TRAINER).lstrip())
    found = json.loads(cli("--preview", "--select", "TRL001", "--format", "json", "models").out)
    assert [(f["path"], f["line"], f["kind"]) for f in found] == [("models/flux.py", 6, "prepared-launch-unknown")]
    assert "handed to set_prepared_model() in training/trainer.py, kept by ModelFoundation" in found[0]["message"]
    (project / "training" / "trainer.py").unlink()
    assert cli("--preview", "--select", "TRL001", "--format", "json", "models").out.strip() == "[]"
    assert list((project / ".trllint_cache").glob("results-*.json"))


def test_a_model_handed_by_keyword_to_a_keyword_only_keeper(tmp_path):
    root = _project(
        tmp_path,
        {
            "models/__init__.py": "",
            "models/foundation.py": """
                class ModelFoundation:
                    def set_models(self, *, model, ema=None):
                        self.model = model
                        self.ema = ema
            """,
            "models/flux.py": KEPT_READER,
            "training/trainer.py": """
                from accelerate import Accelerator


                def prepare_models(family, ema):
                    accelerator = Accelerator()
                    family.set_models(ema=ema, model=accelerator.prepare_model(family.model))
            """,
        },
    )
    assert [line for line, _ in _findings(root / "models/flux.py")] == [6]
    (root / "training/trainer.py").write_text("def prepare_models(family, ema, prepared):\n    family.set_models(model=ema)\n")
    project_module.forget_module(root / "training/trainer.py")
    assert _findings(root / "models/flux.py") == []
