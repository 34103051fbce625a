"""The launch model (trllint/facts/launch, docs/launch-model.md): what each config, launch command,
project walk, notebook and file's own code says about how the code runs, and what the rules are
told: shown, ruled out, or unknown. Through the CLI: a changed launch file makes a cached result
be linted again, and the evidence reaches the text, JSON and SARIF reports."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from trllint.core.findings import Evidence
from trllint.core.source import SourceFile
from trllint.facts.launch import project as project_module
from trllint.semantic.project import files as project_files_module
from trllint.facts.launch.backends import ANY, DEEPSPEED, MULTI_PROCESS, SHARDED, Backend, LaunchFact, deepspeed_stage, describe
from trllint.facts.branches import proves
from trllint.facts.launch.backend_tests import backends_named, rules_out
from trllint.facts.launch.commands import launch_commands
from trllint.facts.launch.configs import read_deepspeed_json, read_yaml_config
from trllint.facts.launch.model import Launch, launch_of
from trllint.facts.launch.project import project_launch
from trllint.semantic.model import SemanticModel

ONE = frozenset({Backend.ONE_PROCESS})
DDP = frozenset({Backend.DDP})
FSDP = frozenset({Backend.FSDP})
ZERO3 = frozenset({Backend.ZERO3})
ZERO12 = frozenset({Backend.ZERO_UNSHARDED})


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A fresh project folder, the working folder (evidence paths are shown relative to it)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\n', encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def source_of(path: Path | None, text: str, display: str | None = None) -> SourceFile:
    return SourceFile(text=textwrap.dedent(text), display_path=display or (path.name if path else "<stdin>"), path=path)


def launch_at(source: SourceFile, code: str | None = None) -> Launch:
    """The launch at the first node whose code is ``code`` (the file's top level when None)."""
    model = SemanticModel.of(source)
    node = None
    if code is not None:
        module = source.module

        class Find(cst.CSTVisitor):
            def on_visit(self, candidate: cst.CSTNode) -> bool:
                nonlocal node
                if node is None and isinstance(candidate, cst.BaseExpression) and module.code_for_node(candidate) == code:
                    node = candidate
                return node is None

        module.visit(Find())
        assert node is not None, code
    return launch_of(model, node)


def union(launch: Launch) -> frozenset[Backend]:
    return frozenset().union(*(fact.backends for fact in launch.facts))


# ---- backends -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stage, backends",
    [(3, ZERO3), ("3", ZERO3), (" 3 ", ZERO3), (0, ZERO12), (1, ZERO12), ("2", ZERO12), ("auto", DEEPSPEED),
     (None, DEEPSPEED), (True, DEEPSPEED), ("", DEEPSPEED)],
)
def test_deepspeed_stage(stage, backends):
    assert deepspeed_stage(stage) == backends


def test_describe_names_backends_in_a_fixed_order():
    assert describe(SHARDED) == "FSDP or DeepSpeed ZeRO-3"
    assert describe(DEEPSPEED | FSDP) == "FSDP or DeepSpeed"
    assert describe(ANY) == "one process, DDP, FSDP or DeepSpeed"
    assert describe(DDP) == "DDP"


# ---- configs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "yaml, backends",
    [
        ("distributed_type: NO\n", ONE),
        ("distributed_type: MULTI_GPU\nnum_processes: 8\n", DDP),
        ("distributed_type: MULTI_GPU\nnum_processes: 1\n", ONE),
        ("distributed_type: 'MULTI_NPU'\n", DDP),
        ("distributed_type: MULTI_CPU\n", DDP),
        ("distributed_type: multi_gpu  # lower case is read too\n", DDP),
        ("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n", FSDP),
        ("deepspeed_config:\n  zero_stage: 3\ndistributed_type: DEEPSPEED\n", ZERO3),
        ("deepspeed_config:\n  zero_stage: 2  # optimizer states only\ndistributed_type: DEEPSPEED\n", ZERO12),
        ("deepspeed_config:\n  zero_stage: 0\ndistributed_type: DEEPSPEED\n", ZERO12),
        ("deepspeed_config:\n  offload_param_device: cpu\ndistributed_type: DEEPSPEED\n", DEEPSPEED),
        ("distributed_type: MEGATRON_LM\n", MULTI_PROCESS),
        ("distributed_type: XLA\n", MULTI_PROCESS),
    ],
)
def test_accelerate_config_backends(yaml, backends):
    verdict = read_yaml_config(yaml)
    assert verdict is not None and verdict.backends == backends
    assert verdict.message.startswith("accelerate config")


def test_accelerate_config_points_at_the_line_that_says_it():
    verdict = read_yaml_config("compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  zero_stage: 3\ndistributed_type: DEEPSPEED\n")
    assert verdict is not None and verdict.line == 3 and "ZeRO stage 3" in verdict.message
    verdict = read_yaml_config("debug: false\ndistributed_type: FSDP\n")
    assert verdict is not None and verdict.line == 2


def test_accelerate_config_naming_a_deepspeed_file_defers_to_it():
    verdict = read_yaml_config("deepspeed_config:\n  deepspeed_config_file: ds/zero3.json\n  zero_stage: 2\ndistributed_type: DEEPSPEED\n")
    assert verdict is not None and verdict.deepspeed_file == "ds/zero3.json" and verdict.backends == DEEPSPEED
    verdict = read_yaml_config("deepspeed_config:\n  deepspeed_config_file: null\n  zero_stage: 3\ndistributed_type: DEEPSPEED\n")
    assert verdict is not None and verdict.deepspeed_file is None and verdict.backends == ZERO3


@pytest.mark.parametrize(
    "yaml, backends, deepspeed_file",
    [
        ("model_name_or_path: x\ndeepspeed: configs/ds_z3.json\n", DEEPSPEED, "configs/ds_z3.json"),
        ("bf16: true\nfsdp: full_shard auto_wrap\n", FSDP, None),
        ('fsdp: "full_shard offload"\n', FSDP, None),
        ("deepspeed: null\nfsdp: ''\n", None, None),
        ("# deepspeed: configs/ds_z3.json\nlearning_rate: 1.0e-5\n", None, None),
        ("learning_rate: 1.0e-5\n", None, None),
    ],
)
def test_training_recipe(yaml, backends, deepspeed_file):
    verdict = read_yaml_config(yaml)
    if backends is None:
        assert verdict is None
    else:
        assert verdict is not None and verdict.backends == backends and verdict.deepspeed_file == deepspeed_file
        assert verdict.message.startswith("training recipe")


@pytest.mark.parametrize(
    "text, backends, line",
    [
        ('{\n  "train_batch_size": 8,\n  "zero_optimization": {\n    "stage": 3\n  }\n}', ZERO3, 4),
        ('{"zero_optimization": {"stage": 1, "stage3_param_persistence_threshold": 10}}', ZERO12, 1),
        ('{"train_micro_batch_size_per_gpu": "auto", "fp16": {"enabled": true}}', ZERO12, 1),  # no ZeRO: stage 0
        ('{"zero_optimization": {"stage": "auto"}}', DEEPSPEED, 1),
    ],
)
def test_deepspeed_json(text, backends, line):
    verdict = read_deepspeed_json(text)
    assert verdict is not None and verdict.backends == backends and verdict.line == line


@pytest.mark.parametrize("text", ['{"compilerOptions": {"strict": true}}', "[1, 2]", '{"zero_optimization": {', "not json"])
def test_json_that_is_no_deepspeed_config(text):
    assert read_deepspeed_json(text) is None


# ---- launch commands ----------------------------------------------------------------------


def one(text: str, **kwargs):
    commands = launch_commands(textwrap.dedent(text), **kwargs)
    assert len(commands) == 1, commands
    return commands[0]


def test_accelerate_launch_options_program_and_its_arguments():
    command = one("accelerate launch --config_file configs/zero3.yaml --num_processes=8 train.py recipe.yaml --lr 1e-5 --bf16")
    assert command.launcher == "accelerate" and command.program == "train.py"
    assert command.option("--config_file") == "configs/zero3.yaml" and command.option("--num_processes") == "8"
    assert command.argument("--lr") == "1e-5" and command.argument("--bf16") == ""
    assert command.positional == ["recipe.yaml"]


@pytest.mark.parametrize(
    "text, launcher, program",
    [
        ("accelerate launch --multi_gpu --mixed_precision bf16 train.py", "accelerate", "train.py"),
        ("accelerate launch --use-deepspeed --zero-stage 3 src/train.py", "accelerate", "src/train.py"),
        ("accelerate-launch --use_fsdp train.py", "accelerate", "train.py"),
        ("python -m accelerate.commands.launch --num_processes 2 train.py", "accelerate", "train.py"),
        ("torchrun --nproc_per_node=8 --standalone -m pkg.train --epochs 3", "torchrun", "pkg/train.py"),
        ("python -m torch.distributed.run --nproc_per_node 4 train.py", "torchrun", "train.py"),
        ("python3 -u -m torch.distributed.launch --use_env train.py", "torchrun", "train.py"),
        ("deepspeed --num_gpus 8 --master_port 29501 train.py --deepspeed ds.json", "deepspeed", "train.py"),
        ("/usr/bin/python3.11 -u train.py --epochs 1", "python", "train.py"),
        ("python -m mypkg.eval --split test", "python", "mypkg/eval.py"),
    ],
)
def test_each_launcher(text, launcher, program):
    command = one(text)
    assert (command.launcher, command.program) == (launcher, program)


def test_the_options_spelled_with_dashes_or_underscores():
    command = one("accelerate launch --use-deepspeed --zero-stage 3 --deepspeed-config-file ds.json train.py")
    assert command.option("--use_deepspeed") == "" and command.option("--zero_stage") == "3"
    assert command.option("--deepspeed_config_file") == "ds.json"


def test_continuations_are_joined_and_keep_the_first_line():
    commands = launch_commands("#!/bin/bash\nset -e\n\naccelerate launch \\\n  --use_fsdp \\\n  train.py \\\n  --output_dir out\n")
    assert len(commands) == 1
    assert commands[0].line == 4 and commands[0].option("--use_fsdp") == "" and commands[0].argument("--output_dir") == "out"


@pytest.mark.parametrize(
    "text",
    [
        "srun --ntasks 8 torchrun train.py",
        "srun --nodes=2 --ntasks-per-node 1 --gres gpu:8 torchrun train.py",
        "mpirun -np 4 -x NCCL_DEBUG torchrun train.py",
        "nohup torchrun train.py > log.txt 2>&1 &",
        "CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO torchrun train.py",
        "env OMP_NUM_THREADS=4 torchrun train.py",
        "uv run torchrun train.py",
        "$ torchrun train.py",
        "time torchrun train.py",
        "\t@torchrun train.py",  # a Makefile recipe, silent
        "\t-torchrun train.py",  # a Makefile recipe, errors ignored
        "cd src && torchrun train.py",
        "pip install -e . ; torchrun train.py | tee log",
    ],
)
def test_what_stands_before_the_launcher_is_skipped(text):
    command = one(text)
    assert (command.launcher, command.program) == ("torchrun", "train.py")


@pytest.mark.parametrize(
    "text",
    [
        "# accelerate launch --use_fsdp train.py",
        "python -c 'import torch; print(torch.cuda.device_count())'",
        "python --version",
        "accelerate config",
        "accelerate launch --help",
        "pip install deepspeed",
        "echo python train.py",
    ],
)
def test_no_launch_command(text):
    assert launch_commands(text) == []


def test_markdown_reads_the_lines_that_name_a_launcher():
    readme = textwrap.dedent(
        """
        # Project

        Train on 8 GPUs with DeepSpeed ZeRO-3 (the launch is below).

        ```bash
        pip install -r requirements.txt
        accelerate launch --config_file configs/zero3.yaml train.py
        ```

        Then `python eval.py` scores the checkpoint.
        """
    )
    commands = launch_commands(readme, markdown=True)
    assert [(c.launcher, c.program, c.line) for c in commands] == [("accelerate", "train.py", 8)]


def test_a_variable_is_kept_as_written():
    command = one('accelerate launch --config_file "$CONFIG" train.py --deepspeed ${DS_CONFIG}')
    assert command.option("--config_file") == "$CONFIG" and command.argument("--deepspeed") == "${DS_CONFIG}"


# ---- the project: commands, configs, the walk ---------------------------------------------


def test_a_launch_script_with_a_config_names_the_program(project):
    write(project, {
        "configs/zero3.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n",
        "scripts/train.sh": "accelerate launch --config_file configs/zero3.yaml src/train.py\n",
        "src/train.py": "",
    })
    facts = project_launch(project).commands_for(project / "src" / "train.py")
    assert len(facts) == 1 and facts[0].backends == ZERO3
    assert [(e.path, e.line) for e in facts[0].evidence] == [("scripts/train.sh", 1), ("configs/zero3.yaml", 3)]
    assert project_launch(project).commands_for(project / "train.py") == []


def test_the_config_is_found_beside_the_script_or_by_its_last_folders(project):
    write(project, {
        "recipes/accelerate_configs/fsdp.yaml": "distributed_type: FSDP\n",
        "recipes/launch.sh": "accelerate launch --config_file accelerate_configs/fsdp.yaml ../train.py\n",
        "other.sh": "accelerate launch --config_file /fsx/me/repo/recipes/accelerate_configs/fsdp.yaml /fsx/me/repo/train2.py\n",
    })
    launch = project_launch(project)
    assert launch.commands_for(project / "train.py")[0].backends == FSDP
    assert launch.commands_for(project / "train2.py")[0].backends == FSDP  # absolute paths of the cluster
    assert launch.commands_for(project / "recipes" / "train2.py") == []


@pytest.mark.parametrize(
    "command, backends",
    [
        ("accelerate launch --config_file configs/ds.yaml train.py", ZERO3),  # the config's JSON decides
        ("accelerate launch --use_deepspeed --deepspeed_config_file ds_z2.json train.py", ZERO12),
        ("accelerate launch --use_deepspeed train.py", DEEPSPEED),
        ("accelerate launch --zero_stage 3 train.py", ZERO3),
        ("accelerate launch --use_fsdp train.py", FSDP),
        ("accelerate launch --multi_gpu train.py", DDP),
        ("accelerate launch --num_processes 1 train.py", ONE),
        ("accelerate launch train.py", ANY),  # the user's default config
        ("accelerate launch --config_file $CONFIG train.py", ANY),
        ("accelerate launch --config_file missing.yaml train.py", ANY),
        ("torchrun --nproc_per_node 8 train.py", DDP),
        ("torchrun --nnodes=1 --nproc_per_node=1 train.py", ONE),  # one process: a group of one
        ("python -m torch.distributed.launch --nproc_per_node 1 train.py", ONE),
        ("torchrun --nnodes 2 --nproc_per_node 1 train.py", DDP),  # one a node, on two nodes
        ("torchrun --nproc-per-node 1 train.py --deepspeed ds_z3.json", ZERO3),  # an engine of one
        ("torchrun --nproc_per_node 8 train.py --deepspeed ds_z2.json", ZERO12),
        ("torchrun train.py --deepspeed --deepspeed_config ds_z3.json", ZERO3),
        ("torchrun train.py --fsdp 'full_shard auto_wrap'", FSDP),
        ("torchrun train.py --fsdp false", DDP),
        ("deepspeed train.py --deepspeed ds_z3.json", ZERO3),
        ("deepspeed --num_gpus 2 train.py --deepspeed_config ds_z2.json", ZERO12),
        ("deepspeed train.py", DDP | DEEPSPEED),  # the program decides: DDP unless it builds DeepSpeed
        ("python train.py", ONE),
        ("python train.py --config recipe_z3.yaml", ZERO3),  # the recipe names the JSON
        ("accelerate launch --multi_gpu train.py recipe_fsdp.yaml", FSDP),
        ("torchrun train.py --config configs/ds.yaml", DDP),  # an accelerate config is no recipe
    ],
)
def test_what_each_command_concludes(project, command, backends):
    write(project, {
        "configs/ds.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds_z3.json\n",
        "ds_z3.json": '{"zero_optimization": {"stage": 3}}',
        "ds_z2.json": '{"zero_optimization": {"stage": 2}}',
        "recipe_z3.yaml": "deepspeed: ds_z3.json\n",
        "recipe_fsdp.yaml": "fsdp: full_shard\n",
        "run.sh": command + "\n",
    })
    facts = project_launch(project).commands_for(project / "train.py")
    assert [fact.backends for fact in facts] == [backends]


def test_a_makefile_and_slurm_jobs_are_read(project):
    write(project, {
        "Makefile": "train:\n\t@accelerate launch --use_fsdp train.py\n",
        "jobs/eval.sbatch": "#!/bin/bash\n#SBATCH --gres=gpu:4\nsrun torchrun --nproc_per_node 4 eval.py\n",
        "jobs/big.slurm": "srun deepspeed big.py --deepspeed ds.json\n",
        "ds.json": '{"zero_optimization": {"stage": 3}}',
    })
    launch = project_launch(project)
    assert [f.backends for f in launch.commands_for(project / "train.py")] == [FSDP]
    assert [f.backends for f in launch.commands_for(project / "eval.py")] == [DDP]
    assert [f.backends for f in launch.commands_for(project / "big.py")] == [ZERO3]
    assert launch.commands_for(project / "train.py")[0].evidence[0] == Evidence(
        "Makefile", 2, "`accelerate launch --use_fsdp train.py` runs it under FSDP"
    )


def test_the_walk_skips_what_is_not_the_project(project):
    write(project, {
        ".venv/lib/python3.11/site-packages/trl/accelerate_configs/zero3.yaml": "distributed_type: DEEPSPEED\n",
        ".hidden/fsdp.yaml": "distributed_type: FSDP\n",
        "node_modules/x/fsdp.yaml": "distributed_type: FSDP\n",
        "env/pyvenv.cfg": "home = /usr/bin\n",
        "env/share/fsdp.yaml": "distributed_type: FSDP\n",
        "vendor/trl/.git/HEAD": "ref: refs/heads/main\n",
        "vendor/trl/examples/zero3.yaml": "distributed_type: DEEPSPEED\n",
        "vendor/trl/run.sh": "accelerate launch --use_fsdp ../../train.py\n",
        "configs/ddp.yaml": "distributed_type: MULTI_GPU\n",
    })
    launch = project_launch(project)
    assert [fact.backends for fact in launch.configs] == [DDP]
    assert launch.commands == []
    assert list(launch.read) == ["configs/ddp.yaml"]


def test_the_walk_stays_within_its_bounds(project, monkeypatch):
    write(project, {f"configs/c{n}.yaml": "distributed_type: FSDP\n" for n in range(5)})
    (project / "configs" / "big.yaml").write_text("distributed_type: MULTI_GPU\n" + "# padding\n" * 40_000, encoding="utf-8")
    assert len(project_launch(project).configs) == 5  # the big file is not read
    project_launch.cache_clear()
    monkeypatch.setattr(project_files_module, "MAX_FILES_READ", 2)
    assert len(project_launch(project).configs) <= 2
    project_launch.cache_clear()
    monkeypatch.setattr(project_files_module, "MAX_FILES_READ", 2_000)
    monkeypatch.setattr(project_files_module, "MAX_ENTRIES", 3)
    assert len(project_launch(project).configs) < 5


def test_a_folder_that_is_no_project_is_read_within_a_far_smaller_budget(tmp_path, monkeypatch):
    # A loose script and its launch files, in a folder with no project marker: read as a project's.
    loose = write(tmp_path / "loose", {"launch.sh": "accelerate launch train.py\n", "train.py": "print(1)\n"})
    write(loose, {"configs/fsdp.yaml": "distributed_type: FSDP\n"})
    monkeypatch.chdir(loose)
    assert [fact.backends for fact in project_launch(loose).configs] == [FSDP]
    assert project_launch(loose).commands_for(loose / "train.py")
    # A data folder beside it, past the budget: not read, and what is beside the script still is.
    for n in range(project_files_module.LOOSE_MAX_ENTRIES):
        write(loose, {f"data/x{n:05}.yaml": "distributed_type: MULTI_GPU\n"})
    project_launch.cache_clear()
    assert [fact.backends for fact in project_launch(loose).configs] == [FSDP]
    assert project_launch(loose).commands_for(loose / "train.py")
    # The folder itself past the budget (/tmp, Downloads: other programs' files): not read at all.
    for n in range(project_files_module.LOOSE_MAX_ENTRIES):
        (loose / f"x{n:05}.txt").write_bytes(b"")
    project_launch.cache_clear()
    assert project_launch(loose).configs == [] and project_launch(loose).commands == []
    # A project: its whole tree, within the project's bounds.
    (loose / "pyproject.toml").write_text('[project]\nname = "loose"\n', encoding="utf-8")
    project_launch.cache_clear()
    assert len(project_launch(loose).configs) == 1 + project_files_module.LOOSE_MAX_ENTRIES


def test_a_loose_folder_reads_a_bounded_number_of_files(tmp_path, monkeypatch):
    count = project_files_module.LOOSE_MAX_FILES_READ + 5
    loose = write(tmp_path / "downloads", {f"c{n:03}.yaml": "distributed_type: FSDP\n" for n in range(count)})
    monkeypatch.chdir(loose)
    assert len(project_launch(loose).configs) == project_files_module.LOOSE_MAX_FILES_READ


def test_the_digest_follows_the_launch_files_only(project):
    write(project, {"configs/a.yaml": "distributed_type: MULTI_GPU\n", "notes.md": "# Notes\nNothing to see.\n"})
    first = project_launch(project).digest
    project_launch.cache_clear()
    (project / "notes.md").write_text("# Notes\nStill nothing.\n", encoding="utf-8")
    assert project_launch(project).digest == first
    project_launch.cache_clear()
    (project / "configs" / "a.yaml").write_text("distributed_type: FSDP\n", encoding="utf-8")
    assert project_launch(project).digest != first


# ---- what a file is told ------------------------------------------------------------------

SAVE = """
from accelerate import Accelerator

accelerator = Accelerator()


def save(model):
    if accelerator.is_main_process:
        return accelerator.get_state_dict(model)
"""


def test_a_file_named_by_commands_is_told_those_commands_closed(project):
    write(project, {
        "configs/fsdp.yaml": "distributed_type: FSDP\n",
        "configs/zero3.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n",
        "train.sh": "accelerate launch --config_file configs/zero3.yaml train.py\npython train.py --debug\n",
    })
    launch = launch_at(source_of(project / "train.py", SAVE))
    assert launch.closed and union(launch) == ZERO3 | ONE  # the FSDP config names another program
    assert launch.shown(SHARDED) == (
        Evidence("train.sh", 1, "`accelerate launch --config_file configs/zero3.yaml train.py` runs it under DeepSpeed ZeRO-3"),
        Evidence("configs/zero3.yaml", 3, "accelerate config: distributed_type DEEPSPEED, ZeRO stage 3"),
    )
    assert not launch.possible(FSDP) and launch.possible(ZERO3) and not launch.only(MULTI_PROCESS)


def test_another_file_is_told_every_multi_process_command_and_config(project):
    write(project, {
        "configs/ddp.yaml": "distributed_type: MULTI_GPU\n",
        "train.sh": "accelerate launch --config_file configs/ddp.yaml train.py\npython prepare_data.py\n",
    })
    launch = launch_at(source_of(project / "pkg" / "checkpointing.py", SAVE))
    assert launch.closed and union(launch) == DDP  # `python prepare_data.py` says nothing of a module
    assert not launch.possible(SHARDED) and launch.multi_process and launch.only(DDP)


def test_a_docs_page_in_mdx_is_read_as_markdown(project):
    write(project, {
        "docs/source/quickstart.md": "```bash\npython -m pkg.train --steps 10\n```\n",
        "docs/source/multi_gpu.mdx": (
            "<Tip>Several GPUs:</Tip>\n\n```bash\naccelerate launch --multi_gpu --num_processes=4 \\\n"
            "  src/pkg/train.py --steps 10\n```\n"
        ),
    })
    launch = launch_at(source_of(project / "src" / "pkg" / "train.py", SAVE))
    assert launch.possible(DDP) and launch.possible(ONE)
    assert launch.shown(DDP) == (
        Evidence(
            "docs/source/multi_gpu.mdx", 4,
            "`accelerate launch --multi_gpu --num_processes=4 src/pkg/train.py --steps 10` runs it under DDP",
        ),
    )


def test_another_programs_launch_shows_a_script_only_several_processes(project):
    # diffusers' examples: one README launches its script with a DeepSpeed config; a sibling
    # script no command names may run under anything, so that config shows it no backend.
    write(project, {
        "examples/a/README.md": "```bash\naccelerate launch --config_file=ds2.yaml train_a.py\n```\n",
        "examples/a/ds2.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\nnum_processes: 2\n",
    })
    script = launch_at(source_of(project / "examples" / "b" / "train_b.py", SAVE + '\n\nif __name__ == "__main__":\n    save(None)\n'))
    assert script.shown(DEEPSPEED) == () and script.possible(ZERO12) and not script.possible(ZERO3)
    assert [e.path for e in script.shown(MULTI_PROCESS)] == ["examples/a/README.md", "examples/a/ds2.yaml"]
    # A module those programs may import keeps them as its launches.
    module = launch_at(source_of(project / "examples" / "b" / "helpers.py", SAVE))
    assert [e.path for e in module.shown(DEEPSPEED)] == ["examples/a/README.md", "examples/a/ds2.yaml"]


def test_a_config_no_command_names_shows_an_unnamed_script_only_several_processes(project):
    # LMFlow: ZeRO-3 configs at the root serve recipes of other programs; a script in another
    # folder that no command starts is not shown to run under them.
    write(project, {"configs/zero3.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"})
    script = launch_at(source_of(project / "experimental" / "train.py", SAVE + '\n\nif __name__ == "__main__":\n    save(None)\n'))
    assert script.shown(SHARDED) == () and script.possible(ZERO3)
    assert [e.path for e in script.shown(MULTI_PROCESS)] == ["configs/zero3.yaml"]
    # A module (no `__main__`) keeps the config as its launch.
    module = launch_at(source_of(project / "experimental" / "helpers.py", SAVE))
    assert [e.path for e in module.shown(SHARDED)] == ["configs/zero3.yaml"]


def test_an_if_that_names_backends_rules_the_others_out_at_the_code_it_holds(project):
    # llamafactory's PPO save: the engine's own method, read only where the run is DeepSpeed's or FSDP's.
    write(project, {"run.sh": "accelerate launch --multi_gpu train.py\n"})
    code = """
    def save(self):
        if self.is_fsdp_enabled or self.is_deepspeed_enabled:
            self.model.save_checkpoint(self.output_dir)
        self.model.save_pretrained(self.output_dir)
    """
    source = source_of(project / "trainer.py", code)
    inside = launch_at(source, "self.model.save_checkpoint(self.output_dir)")
    assert not inside.possible(DDP) and not inside.possible(ONE) and inside.possible(FSDP)
    # The DDP launch is no launch of it; the code's own handling of FSDP and DeepSpeed is.
    assert [e.path for e in inside.shown(ANY)] == ["trainer.py", "trainer.py"]
    outside = launch_at(source, "self.model.save_pretrained(self.output_dir)")
    assert outside.possible(DDP) and [e.path for e in outside.shown(DDP)] == ["run.sh"]
    # An `or` with a test that names no backend holds anywhere: nothing is ruled out.
    either = launch_at(source_of(project / "trainer.py", code.replace("self.is_fsdp_enabled", "self.args.save_full")),
                       "self.model.save_checkpoint(self.output_dir)")
    assert either.possible(DDP)


def test_a_branch_no_launch_of_the_project_runs_is_unknown_not_ruled_out(project):
    # The program's own switch for DeepSpeed, under a torchrun (DDP) launch: how that branch runs
    # is not shown, and it may run on several processes.
    write(project, {"run.sh": "torchrun --nproc_per_node 4 train.py\n"})
    code = """
    def save(args, model):
        if args.deepspeed:
            model.save_checkpoint(args.output_dir)
    """
    inside = launch_at(source_of(project / "train.py", code), "model.save_checkpoint(args.output_dir)")
    assert not inside.closed and inside.facts == () and inside.multi_process
    assert inside.possible(DEEPSPEED) and not inside.possible(DDP) and inside.shown(DEEPSPEED) == ()


def test_an_early_exit_narrows_the_launch_as_a_branch_body_does_and_an_else_arm_does_not(project):
    write(project, {"run.sh": "accelerate launch --use_deepspeed --zero_stage 3 train.py\n"})
    code = """
    def save(model, args):
        if not is_deepspeed_zero3_enabled():
            return
        model.save_checkpoint(args.output_dir)


    def export(model, args):
        if is_deepspeed_zero3_enabled():
            model.save_checkpoint(args.output_dir)
        else:
            model.save_pretrained(args.output_dir)
    """
    source = source_of(project / "train.py", code)
    after_exit = launch_at(source, "model.save_checkpoint(args.output_dir)")
    assert after_exit.possible(ZERO3) and not after_exit.possible(DDP)
    # The else arm handles the launches the project may not have: its launch stays the project's.
    else_arm = launch_at(source, "model.save_pretrained(args.output_dir)")
    assert else_arm.possible(ZERO3) and else_arm.closed
    # After `if not is_fsdp_enabled(): return`, the code runs under FSDP only.
    maybe = "def maybe(model, args):\n    if not is_fsdp_enabled():\n        return\n    model.push_to_hub(args.repo)\n"
    assert not launch_at(source_of(project / "train.py", maybe), "model.push_to_hub(args.repo)").possible(ZERO3)


def test_the_configs_of_a_project_show_the_backend_of_its_one_program(project):
    write(project, {
        "configs/zero3.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n",
        "train.py": SAVE + '\n\nif __name__ == "__main__":\n    save(None)\n',
        "pkg/utils.py": "def helper():\n    return 1\n",
    })
    script = project / "train.py"
    launch = launch_at(source_of(script, script.read_text()))
    assert [e.path for e in launch.shown(SHARDED)] == ["configs/zero3.yaml"]
    # A second program: the config no longer says whose it is.
    write(project, {"tools/convert.py": 'if __name__ == "__main__":\n    print(1)\n'})
    project_module.project_programs.cache_clear()
    again = launch_at(source_of(script, script.read_text()))
    assert again.shown(SHARDED) == () and [e.path for e in again.shown(MULTI_PROCESS)] == ["configs/zero3.yaml"]


def test_a_project_without_launch_files_is_unknown(project):
    launch = launch_at(source_of(project / "train.py", SAVE))
    assert not launch.closed and launch.facts == ()
    assert launch.possible(SHARDED) and launch.shown(SHARDED) == () and launch.multi_process
    assert "FSDP or DeepSpeed ZeRO-3" in launch.unknown_message(SHARDED)


def test_only_one_process_commands_leave_a_module_unknown(project):
    write(project, {"run.sh": "python train.py\n"})
    launch = launch_at(source_of(project / "utils.py", SAVE))
    assert not launch.closed and launch.facts == ()
    assert not launch_at(source_of(project / "train.py", SAVE)).multi_process


def test_standard_input_hears_only_its_own_code():
    text = SAVE + "\nplugin = DeepSpeedPlugin(zero_stage=3)\n"
    launch = launch_at(source_of(None, text))
    assert not launch.closed and union(launch) == ZERO3
    assert [(e.path, e.line) for e in launch.shown(SHARDED)] == [("<stdin>", 11)]


@pytest.mark.parametrize(
    "code, backends",
    [
        ("Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=2))", ZERO12),  # the plugin says the stage
        ("Accelerator(deepspeed_plugin=plugin)", DEEPSPEED),
        ("Accelerator(deepspeed_plugin=None)", frozenset()),
        ("Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())", FSDP),
        ("TrainingArguments(output_dir='o', deepspeed='ds.json')", DEEPSPEED),
        ("GRPOConfig(fsdp='full_shard')", FSDP),
        ("TrainingArguments(output_dir='o', deepspeed=None, fsdp='')", frozenset()),
        ("engine, *_ = deepspeed.initialize(model=model, config='ds.json')", DEEPSPEED),
        ("model = FSDP(model)", FSDP),
        ("model = DistributedDataParallel(model)", DDP),
        ("if accelerator.distributed_type == DistributedType.DEEPSPEED: pass", DEEPSPEED),
        ("zero3 = is_deepspeed_zero3_enabled()", ZERO3),
        # A test of the ZeRO stage against 3 shows that the code handles ZeRO-3, not that any launch
        # uses it: DeepSpeed-Chat's `if zero_stage == 3:` saves under every stage its scripts pass.
        ("if args.deepspeed_stage == 3: pass", frozenset()),
        ("gather = ds_config['zero_optimization']['stage'] == 3", frozenset()),
        ("if 3 != self.zero_stage: pass", frozenset()),
        ("if args.stage == 2: pass", frozenset()),
        ("if args.num_stages == 3: pass", frozenset()),
        ("sharded = self.is_fsdp_enabled", FSDP),
        # Lightning builds its launch from a strategy: by class, or by its registry name.
        ("strategy = FSDPStrategy(sharding_strategy='SHARD_GRAD_OP')", FSDP),
        ("fabric = L.Fabric(devices=8, strategy=DDPStrategy(find_unused_parameters=True))", DDP),
        ("trainer = pl.Trainer(strategy=DeepSpeedStrategy(stage=3))", ZERO3),
        ("trainer = pl.Trainer(strategy=DeepSpeedStrategy())", ZERO12),  # Lightning's default stage
        ("trainer = pl.Trainer(strategy=DeepSpeedStrategy(stage=args.stage))", DEEPSPEED),
        ("trainer = pl.Trainer(strategy=DeepSpeedStrategy(config='ds_zero3.json'))", DEEPSPEED),  # its config says
        ("trainer = Trainer(strategy='DDP')", DDP),
        ("fabric = Fabric(devices=4, strategy='ddp')", DDP),
        ("trainer = Trainer(accelerator='gpu', devices=2, strategy='ddp_find_unused_parameters_true')", DDP),
        ("trainer = Trainer(strategy='fsdp')", FSDP),
        ("trainer = Trainer(strategy='deepspeed_stage_3_offload')", ZERO3),
        ("trainer = Trainer(strategy='deepspeed')", ZERO12),
        # One process, DataParallel (one process too), or a strategy the code does not spell.
        ("trainer = Trainer(strategy='auto')", frozenset()),
        ("trainer = Trainer(strategy='dp')", frozenset()),
        ("fabric = Fabric(strategy=args.strategy)", frozenset()),
        # A Hugging Face Trainer takes no strategy; another call's `strategy=` is not Lightning's.
        ("trainer = Trainer(model=model, args=args)", frozenset()),
        ("split = train_test_split(data, strategy='ddp')", frozenset()),
        ("print('DeepSpeed and FSDP are mentioned only in text')", frozenset()),
    ],
)
def test_the_code_says_what_it_builds_or_handles(code, backends):
    launch = launch_at(source_of(None, code + "\n"))
    assert union(launch) == backends


TWO_MODELS = """
def main():
    vae = AutoencoderKL.from_pretrained(name)
    discriminator = NLayerDiscriminator()
    optimizer = AdamW(vae.parameters())
    disc_optimizer = AdamW(discriminator.parameters())
    {prepare}
    if accelerator.distributed_type == DistributedType.DEEPSPEED:
        pass
"""


@pytest.mark.parametrize(
    "prepare, excluded",
    [
        # Two models the file treats as models, in one prepare on every path: no DeepSpeed.
        ("vae, discriminator, optimizer, disc_optimizer = accelerator.prepare(vae, discriminator, optimizer, disc_optimizer)", True),
        # One model per call, as accelerate asks under DeepSpeed.
        ("vae, optimizer = accelerator.prepare(vae, optimizer)", False),
        # Two names, but the second is not shown to be a model (a data loader, say).
        ("vae, loader = accelerator.prepare(vae, train_dataloader)", False),
        # Under a test: the other arm may be the DeepSpeed one.
        ("if not use_deepspeed:\n        vae, discriminator = accelerator.prepare(vae, discriminator)", False),
    ],
)
def test_two_models_in_one_prepare_rule_deepspeed_out(project, prepare, excluded):
    write(project, {"run.sh": "accelerate launch --config_file zero3.yaml train.py\n", "zero3.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"})
    launch = launch_at(source_of(project / "train.py", TWO_MODELS.format(prepare=prepare)))
    assert launch.possible(ZERO3) is not excluded
    assert launch.possible(DDP) is False  # the project launches it only under ZeRO-3
    assert bool(launch.shown(SHARDED)) is not excluded
    # Without any launch the code's own exclusion still holds.
    alone = launch_at(source_of(None, TWO_MODELS.format(prepare=prepare)))
    assert alone.possible(DEEPSPEED) is not excluded and alone.possible(DDP)


# ---- notebooks ----------------------------------------------------------------------------

NOTEBOOK = """
from accelerate import Accelerator, notebook_launcher


class Evaluator:
    def run(self, model):
        return model.config.vocab_size


def evaluate(model):
    return Evaluator().run(model)


def training_function():
    accelerator = Accelerator()
    model = accelerator.prepare(build())
    evaluate(model)
    return model.config


def build():
    return None


def explore(model):
    return model.config


{launch}
"""


@pytest.mark.parametrize(
    "launch, processes",
    [
        ("notebook_launcher(training_function, num_processes=2)", 2),
        ("notebook_launcher(training_function, (), 4)", 4),
        ("notebook_launcher(training_function)", None),
    ],
)
def test_a_notebook_runs_what_notebook_launcher_starts_in_its_processes(launch, processes):
    source = source_of(None, NOTEBOOK.format(launch=launch), display="train.ipynb")
    for started in ("model.config", "model.config.vocab_size"):  # training_function; a class it reaches
        reached = launch_at(source, started)
        assert reached.closed and union(reached) == DDP and reached.multi_process
        assert f"in {processes or 'one per GPU'} processes" in reached.facts[0].evidence[0].message
    explore = source.module.body[5]  # a function no launcher starts
    assert isinstance(explore, cst.FunctionDef) and explore.name.value == "explore"
    assert not launch_of(SemanticModel.of(source), explore.body.body[0]).multi_process


def test_a_notebook_without_a_launcher_runs_in_one_process():
    source = source_of(None, NOTEBOOK.format(launch="training_function()"), display="train.ipynb")
    launch = launch_at(source, "model.config")
    assert launch.closed and union(launch) == ONE and not launch.possible(MULTI_PROCESS)
    assert "no notebook_launcher" in launch.facts[0].evidence[0].message
    assert not launch_at(source).multi_process


def test_a_notebook_launcher_with_one_process_is_one_process():
    source = source_of(None, NOTEBOOK.format(launch="notebook_launcher(training_function, num_processes=1)"), display="t.ipynb")
    assert not launch_at(source, "model.config").multi_process


def test_a_launched_notebook_function_that_builds_deepspeed_runs_deepspeed():
    text = NOTEBOOK.format(launch="notebook_launcher(training_function, num_processes=2)").replace(
        "Accelerator()", "Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3))"
    )
    launch = launch_at(source_of(None, text, display="t.ipynb"), "model.config")
    assert launch.facts[0].backends == ZERO3  # the code's own backend, not DDP
    assert launch.shown(ZERO3) != ()


# ---- Launch's three answers ---------------------------------------------------------------

E1, E2 = Evidence("a.sh", 1, "one"), Evidence("b.yaml", 2, "two")


def test_shown_needs_a_fact_that_allows_nothing_else():
    launch = Launch((LaunchFact(ZERO3, (E1,)), LaunchFact(DDP | ZERO3, (E2,))), closed=True)
    assert launch.shown(SHARDED) == (E1,)
    assert launch.shown(FSDP) == ()
    assert launch.possible(DDP) and not launch.possible(FSDP)


def test_open_facts_rule_nothing_out():
    launch = Launch((LaunchFact(DDP, (E1,)),), closed=False)
    assert launch.possible(FSDP) and not launch.only(DDP) and launch.shown(DDP) == (E1,)


# ---- through the CLI: the result cache and the reports ------------------------------------

TRAIN = """\
from accelerate import Accelerator

accelerator = Accelerator()


def save(model):
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        return accelerator.get_state_dict(model)
"""


@pytest.fixture
def cli_project(project):
    write(project, {
        "configs/run.yaml": "distributed_type: MULTI_GPU\nnum_processes: 8\n",
        "scripts/train.sh": "accelerate launch --config_file configs/run.yaml train.py\n",
    })
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    return project


def test_a_changed_launch_config_lints_a_cached_file_again(cli_project, cli):
    # TRL006 is a preview rule: these tests select it with --preview.
    assert cli("--preview", "--select", "TRL006", "--format", "json", ".").out.strip() == "[]"  # DDP: no collective
    (cli_project / "configs" / "run.yaml").write_text("distributed_type: FSDP\n", encoding="utf-8")
    findings = json.loads(cli("--preview", "--select", "TRL006", "--format", "json", ".").out)
    assert [(f["path"], f["line"]) for f in findings] == [("train.py", 9)]
    (cli_project / "configs" / "run.yaml").write_text("distributed_type: MULTI_GPU\n", encoding="utf-8")
    assert cli("--preview", "--select", "TRL006", "--format", "json", ".").out.strip() == "[]"
    assert list((cli_project / ".trllint_cache").glob("results-*.json"))


UNKNOWN = "no launch config or script of the project says"


def test_a_new_launch_script_lints_a_cached_file_again(cli_project, cli):
    (cli_project / "scripts" / "train.sh").unlink()
    (cli_project / "configs" / "run.yaml").unlink()
    unknown = json.loads(cli("--preview", "--select", "TRL006", "--format", "json", ".").out)
    assert all(UNKNOWN in f["message"] for f in unknown)  # a preview finding at most
    (cli_project / "Makefile").write_text("train:\n\taccelerate launch --use_deepspeed --zero_stage 3 train.py\n", encoding="utf-8")
    shown = json.loads(cli("--preview", "--select", "TRL006", "--format", "json", ".").out)
    assert [(f["line"], UNKNOWN in f["message"]) for f in shown] == [(9, False)]
    assert shown[0]["evidence"][1]["path"] == "Makefile"


def test_show_evidence_prints_one_indented_line_per_fact(cli_project, cli):
    (cli_project / "configs" / "run.yaml").write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n", encoding="utf-8")
    plain = cli("--preview", "--select", "TRL006", "--no-cache", ".").out
    shown = cli("--preview", "--select", "TRL006", "--no-cache", "--show-evidence", ".").out
    assert "TRL006" in plain and "scripts/train.sh" not in plain
    lines = shown.splitlines()
    first = next(n for n, line in enumerate(lines) if "TRL006" in line)
    assert [line.strip() for line in lines[first + 1 : first + 4]] == [
        "train.py:8: the rank guard: under `if accelerator.is_main_process:`",
        "scripts/train.sh:1: `accelerate launch --config_file configs/run.yaml train.py` runs it under DeepSpeed ZeRO-3",
        "configs/run.yaml:3: accelerate config: distributed_type DEEPSPEED, ZeRO stage 3",
    ]
    assert all(line.startswith("    ") for line in lines[first + 1 : first + 4])


def test_json_and_sarif_carry_the_evidence(cli_project, cli):
    (cli_project / "configs" / "run.yaml").write_text("distributed_type: FSDP\n", encoding="utf-8")
    findings = json.loads(cli("--preview", "--select", "TRL006", "--no-cache", "--format", "json", ".").out)
    assert findings[0]["evidence"] == [
        {"path": "train.py", "line": 8, "message": "the rank guard: under `if accelerator.is_main_process:`"},
        {"path": "scripts/train.sh", "line": 1,
         "message": "`accelerate launch --config_file configs/run.yaml train.py` runs it under FSDP"},
        {"path": "configs/run.yaml", "line": 1, "message": "accelerate config: distributed_type FSDP"},
    ]
    sarif = json.loads(cli("--preview", "--select", "TRL006", "--no-cache", "--format", "sarif", ".").out)
    related = sarif["runs"][0]["results"][0]["relatedLocations"]
    assert [(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"]) for r in related] == [
        ("train.py", 8), ("scripts/train.sh", 1), ("configs/run.yaml", 1)
    ]
    assert related[2]["message"]["text"] == "accelerate config: distributed_type FSDP"


# ---- branches that name backends (facts/launch/backend_tests.py) ---------------------------------


@pytest.mark.parametrize(
    "test, named",
    [
        ("accelerator.distributed_type == DistributedType.DEEPSPEED", DEEPSPEED),
        ("is_deepspeed_zero3_enabled()", ZERO3),
        ("self.is_fsdp_enabled", FSDP),
        # A program's own switch named after a backend, read plainly or through getattr/bool.
        ("self.config.use_deepspeed_optimizer", DEEPSPEED),
        ("args.fsdp_enable", FSDP),
        ("is_fsdp", FSDP),
        # TrainingArguments' own: empty where accelerate launch's config chooses the backend.
        ("args.deepspeed", frozenset()),
        ('bool(getattr(self.config, "use_fsdp", False))', FSDP),
        ("accelerator.is_main_process or config.use_deepspeed or config.use_fsdp", DEEPSPEED | FSDP),
        # A program's own engine switch compared with a backend's name (SLAM-LLM's CosyVoice trainer).
        ('info_dict["train_engine"] == "torch_ddp"', DDP),
        ("'deepspeed' == args.strategy", DEEPSPEED),
        # The switch is exact: not DeepSpeed's name, true under every other backend.
        ('args.train_engine != "deepspeed"', ANY - DEEPSPEED),
        ('args.dataset == "fsdp_logs"', frozenset()),
        ('accelerator.distributed_type == "DEEPSPEED"', DEEPSPEED),  # the enum member's value
        ('args.launcher == "deepspeed"', frozenset()),  # the launcher may run DDP
        # Not a switch that says the backend runs.
        ("is_deepspeed_available()", frozenset()),
        ("args.deepspeed_available", frozenset()),
        ("args.disable_fsdp", frozenset()),
        ("not args.use_fsdp", ANY - FSDP),  # and the switch off under every other
        ("args.fsdp_version == 2", frozenset()),
    ],
)
def test_backends_named(test, named):
    assert backends_named(cst.parse_expression(test)) == named


def test_a_test_narrows_by_and_and_widens_by_or_of_named_sides():
    values = {"all_ranks_save": cst.parse_expression('bool(getattr(cfg, "use_deepspeed", False) or cfg.use_fsdp)')}

    def possible_when_true(test: str) -> frozenset[Backend]:
        expression = cst.parse_expression(test)
        return frozenset(b for b in Backend if not proves(expression, True, rules_out(b, values.get)))

    assert possible_when_true("distributed and all_ranks_save and cfg.use_tempdir") == DEEPSPEED | FSDP
    assert possible_when_true("cfg.use_fsdp and step % 10 == 0") == FSDP
    assert possible_when_true("cfg.use_deepspeed or cfg.use_fsdp") == DEEPSPEED | FSDP
    assert possible_when_true("cfg.use_deepspeed and cfg.use_fsdp") == frozenset()  # never both
    # A side that names no backend may be true under any: so may the test.
    assert possible_when_true("cfg.use_fsdp or step % 10 == 0") == ANY
    assert possible_when_true("accelerator.num_processes > 1") == ANY
    assert possible_when_true("all_ranks") == ANY  # a name no value is known for
