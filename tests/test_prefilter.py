"""The text prefilter only saves work: linting with and without it gives the same findings.

Checked twice: with the stand-in rules of ``tests/engine_rules.py`` (so the engine's part holds
whatever the rule pack holds), and with the real rule pack (so each rule's ``prefilter`` names
tokens its findings cannot exist without). The corpus is real training code (a spread of the
installed trl, accelerate and deepspeed sources, when installed), every rule's cases and
scenario, and a few hand-made files aimed at the edges (a syntax error, an attribute written
with spaces around the dot, a file no rule can match).
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

from tests import engine_rules
from trllint.rule.registry import all_rules
from trllint.core.findings import Finding
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source, read_source

REPO = Path(__file__).resolve().parent.parent
# Files per installed package; TRLLINT_PREFILTER_FILES raises it (the slow run uses every file).
PER_PACKAGE = int(os.environ.get("TRLLINT_PREFILTER_FILES", "8"))

EDGE_FILES = {
    "spaced_attribute.py": "def f(model):\n    return model . config\n",
    "nothing_to_match.py": "import os\n\nprint(os.getcwd())\n",
    "syntax_error.py": "def f(:\n    pass\n",
    "syntax_error_with_token.py": "model.config =\n",
    "cpython_only_error.py": "f() = config\n",
    "initialize_in_string.py": 'x = "initialize"\n',
    # Markers spelt the rare ways: an aliased from-import, an import list, spaces around dots.
    "deepspeed_initialize_alias.py": 'from deepspeed import initialize as ds_init\n\n\ndef build(args, model=None):\n    engine, *_ = ds_init(args=args, model=model)\n    return engine.config\n',
    "import_list.py": 'import os, accelerate\n\naccelerator = accelerate.Accelerator()\n\n\ndef evaluate(model, batch):\n    logits = model(batch["input_ids"])\n    accuracy = (logits.argmax(-1) == batch["labels"]).float().mean()\n    accelerator.log({"accuracy": accuracy})\n',
    "spaced_calls.py": 'import deepspeed\nfrom accelerate import Accelerator\n\naccelerator = Accelerator()\n\n\ndef train(model, loader):\n    model = accelerator . prepare(model)\n    print(model . config)\n    engine, _, _, _ = deepspeed . initialize(model=None)\n    for batch in loader:\n        loss = model(**batch).loss\n        accelerator . log({"loss": loss})\n',
    # The code tokens (Calls, Reads, Defines) met the rare ways: a gather under an alias whose text
    # spells `gather` only in the import, a forward of `engine.module` (a call of `module`), a
    # Trainer's sampler method with no prepare call, a wrapped member read inside an f-string.
    "gather_aliased.py": 'from accelerate import Accelerator\nfrom accelerate.utils import gather as from_every_rank\n\naccelerator = Accelerator()\n\n\ndef sample(model, prompts):\n    return from_every_rank(accelerator.unwrap_model(model).generate(**prompts, max_new_tokens=32))\n',
    "engine_module_forward.py": 'import deepspeed\nimport torch.distributed as dist\n\n\ndef evaluate(model, batch, config):\n    engine, _, _, _ = deepspeed.initialize(model=model, config=config)\n    if dist.get_rank() == 0:\n        logits = engine.module(batch["input_ids"])\n        print(logits.shape)\n',
    "sampler_method.py": 'from torch.utils.data import DistributedSampler\nfrom transformers import Trainer\n\n\nclass ShardedTrainer(Trainer):\n    def _get_train_sampler(self, train_dataset=None):\n        return DistributedSampler(self.train_dataset, num_replicas=self.args.world_size, rank=self.args.process_index)\n',
    "member_in_fstring.py": 'from accelerate import Accelerator\n\naccelerator = Accelerator()\n\n\ndef train(model, loader, optimizer):\n    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n    print(f"training {model.config.model_type}")\n',
    # TRL006's tree check: the only collective is a helper's, called in a conditional expression
    # after an exit at the top of its function's body.
    "exit_then_helper.py": 'from accelerate import Accelerator\n\n\nclass Meter:\n    def __init__(self):\n        self.accelerator = Accelerator()\n\n    def totals(self):\n        return self.accelerator.gather(self.values)\n\n    def display(self, given=None):\n        if not self.accelerator.is_main_process:\n            return\n        results = self.totals() if given is None else given\n        print(results)\n',
    # A review's counterexamples: a rank test by keyword (`on_rank(rank=0)`: LibCST's Name), an
    # exit on this rank's data that spells no rank marker, and an alias an import in a function
    # binds again (the rules read module-level imports; the code names keep both originals).
    "kwarg_rank_test.py": "import torch\nimport torch.distributed as dist\nfrom myproject.utils import on_rank\n\n\ndef save(model, path):\n    if on_rank(rank=0):\n        torch.save(model.state_dict(), path)\n        dist.barrier()\n",
    "data_exit_then_collective.py": "import torch.distributed as dist\n\n\ndef loop(loader, model):\n    for batch in loader:\n        out = model(batch)\n        if out is None:\n            continue\n        dist.all_reduce(out)\n",
    "alias_rebound_in_function.py": "\"\"\"Evaluation helpers: generated samples gathered across ranks for logging.\"\"\"\n\nimport torch\nfrom accelerate import Accelerator\nfrom accelerate.utils import gather as collect\n\naccelerator = Accelerator()\n\n\ndef collect_scores(scores):\n    # scalar scores are plain Python floats: no tensors to gather here\n    from statistics import fmean as collect\n\n    return collect(scores)\n\n\n@torch.no_grad()\ndef sample_completions(model, prompts, max_new_tokens=64):\n    unwrapped = accelerator.unwrap_model(model)\n    tokens = unwrapped.generate(**prompts, max_new_tokens=max_new_tokens)\n    return collect(tokens)\n",
    "sink_alias_rebound_in_function.py": "from typing import Optional\n\nimport torch.nn as nn\nfrom trl.models.utils import prepare_deepspeed as wrap_for_zero\n\n\ndef wrap_scheduler(scheduler, accelerator):\n    # schedulers are wrapped by accelerate itself, not DeepSpeed\n    from accelerate.scheduler import AcceleratedScheduler as wrap_for_zero\n\n    return wrap_for_zero(scheduler, accelerator.optimizer)\n\n\ndef load_reference(ref_model: Optional[nn.Module], accelerator):\n    return wrap_for_zero(ref_model, accelerator)\n",
    # TRL001's wraps in code, the rare ways: a wrapper under an alias, and a Trainer's step method
    # (its model argument is wrapped) that names no wrapping marker at all.
    "ddp_alias.py": "from torch.nn.parallel import DistributedDataParallel as Replicated\n\n\ndef train(model, rank):\n    model = Replicated(model, device_ids=[rank])\n    return model.config.hidden_size\n",
    "step_method_only.py": "from transformers import Trainer\n\n\nclass TagTrainer(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n        vocab = model.config.vocab_size\n        return model(**inputs).loss / vocab\n",
    # The code gates of TRL004 and TRL009 met the rare ways: a tracker reached through a getter
    # (`get_tracker(...).log`), and an accelerator made under an alias (`Accelerator as Runner`).
    "tracker_getter_log.py": 'from accelerate import Accelerator\n\naccelerator = Accelerator(log_with="wandb")\n\n\ndef evaluate(model, loader):\n    model, loader = accelerator.prepare(model, loader)\n    for batch in loader:\n        logits = model(batch["input_ids"])\n        accuracy = (logits.argmax(-1) == batch["labels"]).float().mean()\n        accelerator.get_tracker("wandb").log({"accuracy": accuracy})\n',
    "accelerator_alias_gather.py": 'from accelerate import Accelerator as Runner\n\nrunner = Runner()\n\n\ndef sample(model, prompts):\n    tokens = runner.unwrap_model(model).generate(**prompts, max_new_tokens=32)\n    return runner.gather(tokens)\n',
    # A method of the file named like a torch collective, handed a group: the method's own collective counts.
    "own_method_given_group.py": "import torch.distributed as dist\n\n\nclass Syncer:\n    def all_reduce(self, tensor, group=None):\n        dist.all_reduce(tensor)\n\n    def step(self, tensor, group):\n        if dist.get_rank() == 0:\n            self.all_reduce(tensor, group=group)\n",
    # TRL007's tree check: a generate after `and`, and a forward of a prepared (unpacked) model in a `while`.
    "generate_short_circuit.py": "from accelerate import Accelerator\n\naccelerator = Accelerator()\n\n\ndef sample(model, batch):\n    unwrapped = accelerator.unwrap_model(model)\n    return accelerator.is_main_process and unwrapped.generate(**batch, max_new_tokens=16)\n",
    "prepared_forward_in_while.py": "from accelerate import Accelerator\n\naccelerator = Accelerator()\n\n\ndef warm_up(model, batch):\n    model, batch = accelerator.prepare(model, batch)\n    steps = 0\n    while accelerator.is_main_process and steps < 3:\n        model(**batch)\n        steps += 1\n",
    # TRL001's wrap through the Trainer's own wrapped attribute, read on `self`.
    "trainer_wrapped_read.py": "from transformers import Trainer\n\n\nclass LoggingTrainer(Trainer):\n    def log_width(self):\n        return self.model_wrapped.config.hidden_size\n",
    "requirements.txt": "torch==2.1\nvllm>=0.6\n",
    "requirements-dev.txt": "pytest\n",
}


def _package_sample(name: str, count: int) -> list[Path]:
    spec = importlib.util.find_spec(name)  # located, never imported
    if spec is None or not spec.submodule_search_locations:
        return []
    files = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.py"))
    # Small and mid-sized files, evenly spread: the test stays quick and still sees every part.
    files = [f for f in files if f.stat().st_size < 40_000]
    step = max(1, len(files) // count)
    return files[::step][:count]


def _corpus(tmp_path: Path) -> list[Path]:
    files: list[Path] = []
    for package in ("trl", "accelerate", "deepspeed"):
        files += _package_sample(package, PER_PACKAGE)
    for info in all_rules().values():
        files += sorted(p for p in (info.folder / "cases").glob("*") if p.is_file())
        files += [p for p in [info.folder / "scenario.py"] if p.is_file()]
    for name, text in EDGE_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        files.append(tmp_path / name)
    return files


def _lint(files: list[Path], ruleset: RuleSet) -> dict[str, list[Finding]]:
    out = {}
    for path in files:
        # A case named bad_x__pyproject.toml is read as pyproject.toml, as the case harness does.
        filename = path.name.split("__", 1)[1] if "__" in path.name else path.name
        source = read_source(path.read_bytes(), str(path), filename)
        out[str(path)] = [source] if isinstance(source, Finding) else lint_source(source, filename, ruleset)
    return out


def _compare(files: list[Path], rules: list) -> int:
    # Preview on, so that preview findings are compared too.
    with_prefilter = _lint(files, RuleSet(rules, use_prefilter=True, preview=True))
    without = _lint(files, RuleSet(rules, use_prefilter=False, preview=True))
    differing = [path for path in with_prefilter if with_prefilter[path] != without[path]]
    assert not differing, "\n".join(
        f"{p}:\n  with prefilter:    {with_prefilter[p]}\n  without prefilter: {without[p]}" for p in differing
    )
    return sum(len(v) for v in without.values())


def test_prefilter_changes_no_finding_of_the_stand_in_rules(tmp_path):
    files = _corpus(tmp_path)
    rules = [info.rule for info in engine_rules.speed_rule_infos().values()]
    found = _compare(files, rules)
    # The corpus must exercise the rules, or the comparison proves nothing.
    assert found > 0


def test_prefilter_skips_files_no_rule_can_match(tmp_path):
    """The saving is real: a file without any rule's token is never parsed by LibCST."""
    rules = [info.rule for info in engine_rules.speed_rule_infos().values()]
    source = read_source(EDGE_FILES["nothing_to_match.py"].encode(), "n.py", "n.py")
    assert lint_source(source, "n.py", RuleSet(rules)) == []
    assert source._module is None
    lint_source(source, "n.py", RuleSet(rules, use_prefilter=False))
    assert source._module is not None


def test_syntax_error_finding_does_not_depend_on_the_prefilter(tmp_path):
    rules = [info.rule for info in engine_rules.speed_rule_infos().values()]
    for name in ("syntax_error.py", "syntax_error_with_token.py", "cpython_only_error.py"):
        text = EDGE_FILES[name]
        results = [
            lint_source(read_source(text.encode(), name, name), name, RuleSet(rules, use_prefilter=flag))
            for flag in (True, False)
        ]
        assert results[0] == results[1]
        assert [f.code for f in results[0]] == ["TRL000"]


def test_environment_variable_switches_the_prefilter_off(monkeypatch):
    monkeypatch.setenv("TRLLINT_NO_PREFILTER", "1")
    assert RuleSet([]).use_prefilter is False
    monkeypatch.setenv("TRLLINT_NO_PREFILTER", "0")
    assert RuleSet([]).use_prefilter is True
    monkeypatch.delenv("TRLLINT_NO_PREFILTER")
    assert RuleSet([]).use_prefilter is True


@pytest.mark.skipif(not all_rules(), reason="the rule pack is empty")
def test_code_tokens_are_met_the_rare_ways(tmp_path):
    """Each edge file aimed at a code token holds its rule's finding, and that rule's own
    prefilter, whole, lets it through (another rule's could have the file parsed anyway)."""
    expected = {
        "gather_aliased.py": "TRL009",
        "engine_module_forward.py": "TRL007",
        "sampler_method.py": "TRL010",
        "member_in_fstring.py": "TRL001",
        "exit_then_helper.py": "TRL006",
        "kwarg_rank_test.py": "TRL006",
        "data_exit_then_collective.py": "TRL006",
        "alias_rebound_in_function.py": "TRL009",
        "sink_alias_rebound_in_function.py": "TRL003",
        "ddp_alias.py": "TRL001",
        "step_method_only.py": "TRL001",
        "tracker_getter_log.py": "TRL004",
        "accelerator_alias_gather.py": "TRL009",
        "own_method_given_group.py": "TRL006",
        "generate_short_circuit.py": "TRL007",
        "prepared_forward_in_while.py": "TRL007",
        "trainer_wrapped_read.py": "TRL001",
    }
    files = []
    for name in expected:
        (tmp_path / name).write_text(EDGE_FILES[name], encoding="utf-8")
        files.append(tmp_path / name)
    rules = [info.rule for info in all_rules().values()]
    without = _lint(files, RuleSet(rules, use_prefilter=False, preview=True))
    assert _lint(files, RuleSet(rules, use_prefilter=True, preview=True)) == without
    for path, found in without.items():
        code = expected[Path(path).name]
        assert code in {f.code for f in found}, path
        source = read_source(Path(path).read_bytes(), path, Path(path).name)
        assert all_rules()[code].rule.may_match(source.text, {}, source), f"{code}'s prefilter skips {path}"


# Text that spells what a rule's findings sit at, and code that holds nothing the rule reads: (rule, text).
NEAR_MISSES = [
    # `gather` in a comment, `all_gather` and a docstring: no gather call.
    ("TRL009", (
        '"""Collectives: gather, all_gather."""\nimport torch.distributed as dist\n\n\n'
        "def total(x):\n    # all ranks must gather here\n    dist.all_gather_into_tensor(x, x)\n    return x\n"
    )),
    # A docstring that says `prepare` and `deepspeed.initialize`, and a class named after a
    # wrapper's keyword arguments: the code wraps nothing.
    ("TRL001", (
        '"""Settings handed to accelerator.prepare() and deepspeed.initialize()."""\n'
        "from accelerate.utils import DistributedDataParallelKwargs\n\n\n"
        "def kwargs_for(model):\n    return DistributedDataParallelKwargs(find_unused_parameters=model.config.is_encoder_decoder)\n"
    )),
    # DeepSpeed's integration imported (`x.deepspeed` in the import), a script's `args.deepspeed`
    # read, a model's config read: no wrap (only a Trainer's `self.deepspeed` holds one).
    ("TRL001", (
        "from transformers.integrations.deepspeed import HfDeepSpeedConfig\n\n\n"
        "def zero_width(model, args):\n    if args.deepspeed:\n        HfDeepSpeedConfig(args.deepspeed)\n"
        "    return model.config.hidden_size\n"
    )),
    # A timer's and a math log, in a file that runs distributed: no tracker, no metric buffer.
    ("TRL004", (
        "import math\nimport torch\nimport torch.distributed as dist\n\n\nclass Stage:\n"
        "    def step(self, grads):\n        dist.all_reduce(grads)\n        self.timers.log([\"step\"])\n"
        "        return torch.log(grads.norm()) + math.log(2)\n"
    )),
]


@pytest.mark.parametrize(("code", "text"), NEAR_MISSES)
def test_a_near_miss_holds_no_finding_with_or_without_the_prefilter(code, text):
    rule = all_rules()[code].rule
    for use_prefilter in (True, False):
        source = read_source(text.encode(), "t.py", "t.py")
        assert lint_source(source, "t.py", RuleSet([rule], use_prefilter=use_prefilter, preview=True)) == []


def test_prefilter_changes_no_finding_of_the_rule_pack(tmp_path):
    files = _corpus(tmp_path)
    _compare(files, [info.rule for info in all_rules().values()])


# Configured names are markers too: a custom step method, a custom metric sink.
CONFIGURED_FILES = {
    "custom_step.py": 'from trl import SFTTrainer\n\n\nclass MyTrainer(SFTTrainer):\n    def my_step(self, model, inputs):\n        return model.config.vocab_size\n',
    "custom_sink.py": 'import torch.distributed as dist\n\n\ndef evaluate(model, batch, report):\n    logits = model(batch["input_ids"])\n    accuracy = (logits.argmax(-1) == batch["labels"]).float().mean()\n    report({"accuracy": accuracy})\n',
}


def test_prefilter_counts_configured_names_as_markers(tmp_path):
    files = []
    for name, text in CONFIGURED_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        files.append(tmp_path / name)
    rules = [info.rule for info in all_rules().values()]
    settings = {"training-step-methods": ["my_step"], "metric-sinks": ["report"]}
    with_prefilter = _lint(files, RuleSet(rules, settings=settings, use_prefilter=True, preview=True))
    without = _lint(files, RuleSet(rules, settings=settings, use_prefilter=False, preview=True))
    assert with_prefilter == without
    assert sorted(f.code for found in without.values() for f in found) == ["TRL001", "TRL004"]


# ---- the declaration: named parts, no meaning in tuple nesting -------------------------------


def test_any_of_all_of_and_configured_names():
    from trllint.core.prefilter import AllOf, AnyOf

    sinks = AnyOf("log_metric", re.compile(r"\.\s*log\s*\("), setting="metric-sinks")
    prefilter = AllOf(AnyOf("accelerate", "torch.distributed"), sinks)
    assert prefilter.holds("import accelerate\nself.log(x)\n", {})
    assert not prefilter.holds("import accelerate\nrecord(x)\n", {}), "no sink spelled"
    assert prefilter.holds("import accelerate\nrecord(x)\n", {"metric-sinks": ["my_logger.record"]})
    assert not prefilter.holds("record(x)\n", {"metric-sinks": ["my_logger.record"]}), "both parts must hold"
    # Shared markers nest: any of (any of ...) is one any-of, its settings kept.
    nested = AnyOf("prepare_deepspeed", sinks)
    assert nested.tokens[0] == "prepare_deepspeed" and nested.settings == ("metric-sinks",)
    assert list(AnyOf("a", "b")) == ["a", "b"]  # spread into other token lists


@pytest.mark.parametrize(
    "declaration, message",
    [
        ('prefilter = ("cuda", "accelerate")', "prefilter is a tuple; declare AnyOf(...)"),
        ('prefilter = (("cuda",), ("accelerate",))', "prefilter is a tuple; declare AnyOf(...)"),
        ('prefilter = AnyOf("x")\n    prefilter_settings = {"s": (0,)}', "prefilter_settings is gone"),
    ],
)
def test_old_tuple_declarations_are_refused_at_import(declaration: str, message: str):
    from trllint.core.prefilter import AnyOf
    from trllint.rule.base import Rule

    source = f"class Old(Rule):\n    code, name, message = 'TST199', 'old', 'old'\n    {declaration}\n"
    with pytest.raises(TypeError, match=re.escape(message)):
        exec(source, {"Rule": Rule, "AnyOf": AnyOf})


def test_named_tokens_hold_where_the_text_spells_a_name_as_a_word():
    from trllint.core.prefilter import AllOf, AnyOf, Calls, Defines, Reads

    text = (
        "from accelerate.utils import gather as g\nimport a.module_path\n\n"
        "class T:\n    async def _get_train_sampler(self):\n        return g(self.model.config)\n"
    )
    assert AnyOf(Calls("gather")).holds(text, {})  # the import spells the name `g` calls
    assert AnyOf(Reads("config"), Reads("module_path")).holds(text, {})
    assert AnyOf(Defines("_get_train_sampler")).holds(text, {})
    # A name inside a longer one is another name.
    assert not AnyOf(Calls("all", "gather_for_metrics", "model_path", "train_sampler")).holds(text, {})
    assert not AnyOf(Reads("generation_config")).holds(text, {})
    assert AllOf(AnyOf("gather"), Calls("gather")).verdict(text, {}) is True
    assert AnyOf(Calls("prepare"), "g(").verdict(text, {}) is True
    assert repr(Calls("b", "a")) == "Calls('a', 'b')"
    with pytest.raises(TypeError, match="takes identifiers"):
        Calls("x.prepare")


def test_costly_tokens_are_asked_only_where_no_rule_has_the_file_parsed(monkeypatch):
    """A `Reached` token is asked only where the cheap tokens of no rule let the file through:
    once one does, LibCST parses the file, and the other rule runs without the question."""
    import trllint.rule.base as base
    from trllint.core.prefilter import AllOf, AnyOf, Reached
    from trllint.rule.base import Rule

    asked: list[str] = []

    def never(reached):
        asked.append("asked")
        return False

    monkeypatch.setattr(base, "project_reaches_of", lambda source: never)

    class Cheap(Rule):
        code, name, message = "TST901", "cheap", "cheap"
        prefilter = AnyOf("accelerate")

    class Costly(Rule):
        code, name, message = "TST902", "costly", "costly"
        prefilter = AllOf(AnyOf("accelerate"), AnyOf(Reached(AnyOf("zero3"))))

    def chosen(rules):
        source = read_source(b"import accelerate\n", "t.py", "t.py")
        return RuleSet(rules).for_file("t.py", "t.py", source.text, source)

    assert chosen([Costly]) == [] and asked == ["asked"]
    assert chosen([Cheap, Costly]) == [Cheap, Costly] and asked == ["asked"]
    assert chosen([Costly, Cheap]) == [Costly, Cheap] and asked == ["asked"]
    assert Costly.prefilter_verdict("import accelerate\n") is None
    assert Costly.prefilter_verdict("import torch\n") is False and Cheap.prefilter_verdict("import accelerate\n") is True


def test_empty_or_malformed_parts_are_refused():
    from trllint.core.prefilter import AllOf, AnyOf

    with pytest.raises(TypeError, match="would never hold"):
        AnyOf()
    with pytest.raises(TypeError, match="AllOf takes AnyOf parts"):
        AllOf(("a", "b"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="AnyOf takes strings"):
        AnyOf(("a", "b"))  # type: ignore[arg-type]


# ---- tokens stay cheap: every file of a run is read for them -----------------------------------


def _gate_tokens():
    """Every regex token the rule pack's prefilters, their ``Reached`` questions and the module
    facts' gates (``deep_if``) search a text for."""
    from trllint.core.prefilter import AllOf, AnyOf
    from tests.test_module_fact_gates import GATED

    def tokens(declaration):
        for part in declaration.parts if isinstance(declaration, AllOf) else (declaration,):
            assert isinstance(part, AnyOf)
            yield from (t for t in part.tokens if isinstance(t, re.Pattern))
            for reached in part.reached:
                yield from tokens(reached.tokens)

    for info in all_rules().values():
        if info.rule.prefilter is not None:
            yield from ((info.rule.code, t) for t in tokens(info.rule.prefilter))
    for fact, gate in GATED:
        yield from ((fact.key, t) for t in tokens(gate))


def test_every_regex_token_starts_with_a_literal():
    # `re` scans a text for a pattern's leading literal and tries the pattern only where it is;
    # a pattern that starts with `\b` or a look-around is tried at every position: 30 times slower
    # on a 6,000-line module (`distributed(?<!\wdistributed)` is `\bdistributed` made cheap).
    import re._constants as sre
    import re._parser as sre_parse

    checked = list(_gate_tokens())
    assert len(checked) >= 5
    slow = [(owner, t.pattern) for owner, t in checked if sre_parse.parse(t.pattern, t.flags)[0][0] is not sre.LITERAL]
    assert not slow, f"a regex token must start with a literal character: {slow}"
