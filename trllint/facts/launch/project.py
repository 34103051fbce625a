"""What a project's own files say about how its programs are launched.

The project is the tree above the linted file's project marker (``trllint.semantic.project.index``).
Its launch files are read once per run and root, and only when a rule asks:

- ``*.yaml`` / ``*.yml``: accelerate configs and training recipes (``configs.py``);
- ``*.json`` that spell ``zero_optimization`` or a DeepSpeed batch size: DeepSpeed configs;
- shell scripts (``*.sh``, ``*.bash``, ``*.slurm``, ``*.sbatch``, ``*.job``), Makefiles and
  Markdown files: launch commands (``commands.py``).

The walk and its bounds are the project's (``trllint.semantic.project.files``).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from trllint.core.findings import Evidence
from trllint.facts.launch.backends import ANY, DEEPSPEED, Backend, LaunchFact, deepspeed_stage, describe
from trllint.facts.launch.commands import LaunchCommand, launch_commands
from trllint.facts.launch.configs import ConfigVerdict, read_deepspeed_json, read_yaml_config
from trllint.semantic.project import files

_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job", ".mk")
# Docs whose code blocks hold launch commands; Hugging Face's docs are MDX.
_MARKDOWN_SUFFIXES = (".md", ".mdx")
_DDP_OR_DEEPSPEED = frozenset({Backend.DDP, *DEEPSPEED})
_DEEPSPEED_JSON_MARKERS = ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size")


@dataclass
class ProjectLaunch:
    """The launch facts of one project: commands (each naming its program) and configurations."""

    root: Path
    commands: list[LaunchFact] = field(default_factory=list)
    configs: list[LaunchFact] = field(default_factory=list)
    # Every launch file read, relative path -> content hash: a cached result holds while they do.
    read: dict[str, str] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        text = "\n".join(f"{path} {digest}" for path, digest in sorted(self.read.items()))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def commands_for(self, path: Path) -> list[LaunchFact]:
        """The commands that start the program at ``path``."""
        try:
            relative = PurePosixPath(path.resolve().relative_to(self.root).as_posix())
        except ValueError:
            return []
        return [fact for fact in self.commands if fact.entry is not None and _names(fact.entry, relative)]


def _names(program: str, relative: PurePosixPath) -> bool:
    """The command's program (a path as written, relative to some folder, or absolute on the
    machine that runs it) is the file: the shorter of the two paths ends the other."""
    parts = _parts(program)
    if not parts or any(p.startswith("$") or "{" in p for p in parts):
        return False
    return _same_ending(parts, list(relative.parts), absolute=program.startswith("/"))


def _parts(written: str) -> list[str]:
    """A path's components, without `.`, a leading `..` or the root (`/fsx/me/repo/train.py`)."""
    parts = [p for p in PurePosixPath(written).parts if p not in (".", "", "/")]
    while parts and parts[0] == "..":
        parts = parts[1:]
    return parts


def _same_ending(written: list[str], relative: list[str], *, absolute: bool) -> bool:
    """``written`` ends ``relative`` (``train.py`` names ``src/train.py``); or, written as an
    absolute path on the machine that runs it, ``relative`` ends ``written``."""
    if 0 < len(written) <= len(relative):
        return relative[-len(written) :] == written
    return absolute and bool(relative) and written[-len(relative) :] == relative


@lru_cache(maxsize=64)
def project_launch(root: Path) -> ProjectLaunch:
    """The launch facts of the project at ``root``, read once per process."""
    project = ProjectLaunch(root)
    shell: list[tuple[Path, str]] = []
    yamls: dict[PurePosixPath, tuple[Path, ConfigVerdict]] = {}
    jsons: dict[PurePosixPath, tuple[Path, ConfigVerdict]] = {}
    for path in _launch_files(root):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        relative = PurePosixPath(path.relative_to(root).as_posix())
        text = data.decode("utf-8", errors="replace")
        name = path.name
        if name.endswith((".yaml", ".yml")):
            if "distributed_type" not in text and "deepspeed" not in text and "fsdp" not in text:
                continue
            verdict = read_yaml_config(text)
            if verdict is not None:
                yamls[relative] = (path, verdict)
        elif name.endswith(".json"):
            if not any(marker in text for marker in _DEEPSPEED_JSON_MARKERS):
                continue
            verdict = read_deepspeed_json(text)
            if verdict is not None:
                jsons[relative] = (path, verdict)
        else:
            shell.append((path, text))
            if not any(word in text for word in ("launch", "torchrun", "deepspeed", "python")):
                continue
        project.read[relative.as_posix()] = hashlib.sha256(data).hexdigest()
    resolver = _Resolver(root, yamls, jsons)
    for relative, (path, verdict) in sorted(yamls.items()):
        project.configs.append(resolver.config_fact(path, verdict))
    for relative, (path, verdict) in sorted(jsons.items()):
        project.configs.append(LaunchFact(verdict.backends, (Evidence(shown(path), verdict.line, verdict.message),)))
    for path, text in shell:
        for command in launch_commands(text, markdown=path.suffix in _MARKDOWN_SUFFIXES):
            project.commands.append(resolver.command_fact(path, command))
    return project


# The text of a top-level `if __name__ == "__main__":` (either order, in parentheses or not): the
# launch model's test of a program (model.py), read from text so that no other file is parsed. A
# match inside a string counts too, which only ever makes a file less often the one program.
_MAIN_TEST = re.compile(rb"^if\s*\(?\s*(?:__name__\s*==\s*(['\"])__main__\1|(['\"])__main__\2\s*==\s*__name__)\s*\)?\s*:", re.M)


@lru_cache(maxsize=64)
def project_programs(root: Path) -> tuple[Path, ...] | None:
    """The project's Python files that run as programs of their own; None where the walk stopped
    at its bounds (a program may lie beyond them)."""
    modules = files.project_files(root, (".py",))
    if len(modules) >= files.MAX_FILES_READ:
        return None
    programs: list[Path] = []
    for path in modules:
        try:
            if path.stat().st_size <= files.MAX_FILE_BYTES and _MAIN_TEST.search(path.read_bytes()):
                programs.append(path.resolve())
        except OSError:
            continue
    return tuple(programs)


def _launch_files(root: Path) -> list[Path]:
    suffixes = (".yaml", ".yml", ".json", *_MARKDOWN_SUFFIXES, *_SHELL_SUFFIXES)
    return [path for path in files.project_files(root, suffixes) if path.stat().st_size <= files.MAX_FILE_BYTES]


def shown(path: Path) -> str:
    """A path as findings show it: relative to the working folder when below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return str(path) if relative.startswith("..") else relative


class _Resolver:
    """Turns a command or a configuration into a launch fact, following the files they name."""

    def __init__(
        self,
        root: Path,
        yamls: dict[PurePosixPath, tuple[Path, ConfigVerdict]],
        jsons: dict[PurePosixPath, tuple[Path, ConfigVerdict]],
    ) -> None:
        self.root = root
        self.yamls = yamls
        self.jsons = jsons

    def _find(self, written: str, near: Path, table: dict[PurePosixPath, tuple[Path, ConfigVerdict]]) -> tuple[Path, ConfigVerdict] | None:
        if not written or "$" in written or "{" in written:
            return None
        for base in (near.parent, self.root):
            try:
                relative = PurePosixPath((base / written).resolve().relative_to(self.root).as_posix())
            except ValueError:
                continue
            if relative in table:
                return table[relative]
        parts = _parts(written)
        absolute = written.startswith("/")
        matches = [entry for relative, entry in table.items() if _same_ending(parts, list(relative.parts), absolute=absolute)]
        return matches[0] if len(matches) == 1 else None

    def _deepspeed_json(self, written: str, near: Path) -> tuple[frozenset[Backend], tuple[Evidence, ...]]:
        found = self._find(written, near, self.jsons)
        if found is None:
            return DEEPSPEED, ()
        path, verdict = found
        return verdict.backends, (Evidence(shown(path), verdict.line, verdict.message),)

    def config_fact(self, path: Path, verdict: ConfigVerdict, entry: str | None = None) -> LaunchFact:
        evidence: tuple[Evidence, ...] = (Evidence(shown(path), verdict.line, verdict.message),)
        backends = verdict.backends
        if verdict.deepspeed_file is not None:
            backends, more = self._deepspeed_json(verdict.deepspeed_file, path)
            evidence += more
        return LaunchFact(backends, evidence, entry)

    def command_fact(self, path: Path, command: LaunchCommand) -> LaunchFact:
        backends, evidence = self._launcher_backends(path, command)
        program = self._program_backends(path, command)
        if program is not None:  # the program's own arguments choose DeepSpeed or FSDP
            backends, evidence = program[0], evidence + program[1]
        said = f"`{_short(command.text)}` runs it under {describe(backends)}" if backends != ANY else f"`{_short(command.text)}` launches it (backend not said)"
        return LaunchFact(backends, (Evidence(shown(path), command.line, said), *evidence), command.program)

    def _launcher_backends(self, path: Path, command: LaunchCommand) -> tuple[frozenset[Backend], tuple[Evidence, ...]]:
        if command.launcher == "python":
            return frozenset({Backend.ONE_PROCESS}), ()
        if command.launcher == "torchrun":
            # `torchrun --nproc_per_node=1` on one node starts one process: a process group of
            # one, where accelerate wraps nothing and a rank's value is the run's.
            nodes = (command.option("--nnodes") or "1").strip()
            if (command.option("--nproc_per_node") or "").strip() == "1" and nodes in ("1", "1:1"):
                return frozenset({Backend.ONE_PROCESS}), ()
            return frozenset({Backend.DDP}), ()
        if command.launcher == "deepspeed":
            # The launcher only starts the processes: the program builds DeepSpeed when it is
            # given a config (`--deepspeed ds.json`, below) or calls deepspeed.initialize itself
            # (its code says so); an accelerate or Trainer program given none runs under DDP.
            return _DDP_OR_DEEPSPEED, ()
        # accelerate launch
        if command.option("--use_deepspeed") is not None or command.option("--zero_stage") is not None or command.option("--deepspeed_config_file"):
            named = command.option("--deepspeed_config_file")
            if named:
                return self._deepspeed_json(named, path)
            stage = command.option("--zero_stage")
            return (deepspeed_stage(stage) if stage else DEEPSPEED), ()
        if command.option("--use_fsdp") is not None:
            return frozenset({Backend.FSDP}), ()
        config = command.option("--config_file")
        if config is not None:
            found = self._find(config, path, self.yamls)
            if found is None:
                return ANY, ()
            fact = self.config_fact(found[0], found[1])
            return fact.backends, fact.evidence
        if command.option("--multi_gpu") is not None:
            return frozenset({Backend.DDP}), ()
        if (command.option("--num_processes") or "").strip() == "1":
            return frozenset({Backend.ONE_PROCESS}), ()
        return ANY, ()  # the user's default accelerate config: any backend

    def _program_backends(self, path: Path, command: LaunchCommand) -> tuple[frozenset[Backend], tuple[Evidence, ...]] | None:
        # The Trainer's `--deepspeed ds.json`; deepspeed.add_config_arguments' `--deepspeed
        # --deepspeed_config ds.json` (there `--deepspeed` is a flag).
        written = command.argument("--deepspeed_config", "--deepspeed_config_file")
        if not written:
            written = command.argument("--deepspeed")
        if written is not None:
            return self._deepspeed_json(written, path)
        fsdp = command.argument("--fsdp")
        if fsdp and fsdp.lower() not in ("false", "none", "''", '""'):
            return frozenset({Backend.FSDP}), ()
        for written in (command.argument("--config", "--config_file", "--config-file"), *command.positional):
            if written and written.endswith((".yaml", ".yml")):
                found = self._find(written, path, self.yamls)
                if found is not None and not found[1].message.startswith("accelerate config"):
                    fact = self.config_fact(found[0], found[1])
                    return fact.backends, fact.evidence
        return None


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# A known-bad range that bites only where the project runs TRL's vLLM generation (GRPO / Online
# DPO with ``use_vllm``): a project that installs vLLM for offline inference never meets it.
TRL_VLLM_GENERATION = "trl-vllm-generation"
_VLLM_FLAG = re.compile(rb"\buse_vllm\b\s*[:=]\s*(?:True|true|1)\b|--use_vllm\b(?!\s*(?:=\s*)?(?:False|false|0)\b)|\bvllm_mode\b")
_VLLM_FILES = (".py", ".yaml", ".yml", ".sh", ".bash", ".slurm", ".sbatch", *_MARKDOWN_SUFFIXES, ".ipynb")


# Where the flag is TRL's: a Python file (or notebook) that imports TRL, or any other file of a
# project that imports TRL or runs its command line. A project's own `--use_vllm` option (an
# evaluation script's, an inferencer's parameter) with no TRL in it is not TRL's generation.
_IMPORTS_TRL = re.compile(rb"(?:^|\n|\")[ \t]*(?:from[ \t]+trl[ \t.]|import[ \t]+trl\b)")
_RUNS_TRL_CLI = re.compile(rb"\btrl[ \t]+(?:grpo|online-dpo|rloo|vllm-serve)\b")
# `trl>=0.15` in a requirements file, `"trl[vllm]>=0.17"` in a pyproject or setup.py.
_DECLARES_TRL = re.compile(rb"(?:^|[\s\"'\[,])trl[ \t]*(?:\[[^\]]*\][ \t]*)?(?:[<>=~!;,\"']|\r?$)", re.M)
_DEPENDENCY_FILES = re.compile(r"requirements.*\.(?:txt|in)|pyproject\.toml|setup\.(?:py|cfg)|environment\.ya?ml")
_CODE_FILES = (".py", ".ipynb")


@lru_cache(maxsize=64)
def trl_vllm_generation(root: Path) -> Evidence | None:
    """Where the project turns TRL's vLLM generation on (``use_vllm=True``, ``use_vllm: true``,
    ``--use_vllm``, ``vllm_mode``), or None. The flag counts where TRL reads it: in a Python file
    or notebook that imports TRL; on a launch command whose program imports TRL; in a recipe such
    a command names; and, in a project that imports TRL, declares it as a dependency or runs its
    command line, in a recipe no command names or on a line that is no launch command (``trl
    grpo --use_vllm``). Files are read as text, commands as ``commands.py`` reads them."""
    uses_trl = False
    recipes: list[tuple[Path, Evidence]] = []
    # recipe file name -> whether a command that names it runs a program that imports TRL
    named: dict[str, bool] = {}
    unnamed: Evidence | None = None
    for path in files.project_files(root, _VLLM_FILES):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        in_code = path.suffix in _CODE_FILES
        if in_code:
            imports_trl = _IMPORTS_TRL.search(data) is not None
            uses_trl = uses_trl or imports_trl
            match = _VLLM_FLAG.search(data) if imports_trl else None
            if match is not None:
                return _generation_at(path, data, match.start())
            continue
        uses_trl = uses_trl or _RUNS_TRL_CLI.search(data) is not None
        match = _VLLM_FLAG.search(data)
        if path.suffix in (".yaml", ".yml"):
            if match is not None:
                recipes.append((path, _generation_at(path, data, match.start())))
            continue
        flagged_commands = False
        for command in launch_commands(data.decode("utf-8", "replace"), markdown=path.suffix in _MARKDOWN_SUFFIXES):
            trl_program = _imports_trl_at(root, path.parent, command.program)
            for written in (*command.positional, *command.arguments.values()):
                if written.endswith((".yaml", ".yml")):
                    name = written.rsplit("/", 1)[-1]
                    named[name] = named.get(name, False) or trl_program
            flag = command.argument("--use_vllm", "--vllm_mode")
            if flag is not None and flag.lower() not in ("false", "0"):
                flagged_commands = True
                if trl_program:  # the flag's own line, at or after where the command starts
                    start = sum(len(line) for line in data.splitlines(keepends=True)[: command.line - 1])
                    at = _VLLM_FLAG.search(data, start)
                    return _generation_at(path, data, at.start() if at is not None else start)
        if match is not None and not flagged_commands and unnamed is None:
            unnamed = _generation_at(path, data, match.start())
    if not uses_trl and (recipes or unnamed):  # a walk of its own: data files must not crowd out code
        uses_trl = _declares_trl(root)
    for recipe, evidence in recipes:
        # The commands that name a recipe say whose it is; one that none names is TRL's where the
        # project uses TRL.
        if named.get(recipe.name, uses_trl):
            return evidence
    return unnamed if uses_trl else None


def _generation_at(path: Path, data: bytes, offset: int) -> Evidence:
    line = data.count(b"\n", 0, offset) + 1
    return Evidence(shown(path), line, "the project runs TRL's vLLM generation here")


def _declares_trl(root: Path) -> bool:
    """A requirements file, pyproject, setup or environment file of the project lists TRL."""
    for path in files.project_files(root, (".txt", ".in", ".toml", ".cfg", ".py", ".yml", ".yaml")):
        if _DEPENDENCY_FILES.fullmatch(path.name):
            try:
                if _DECLARES_TRL.search(path.read_bytes()) is not None:
                    return True
            except OSError:
                continue
    return False


def _imports_trl_at(root: Path, folder: Path, program: str) -> bool:
    """Whether the program a command names (from the project's root or the script's folder)
    imports TRL; a program not found in the project does not."""
    for candidate in (root / program, folder / program):
        try:
            if candidate.is_file():
                return _IMPORTS_TRL.search(candidate.read_bytes()) is not None
        except OSError:
            return False
    return False


def forget_launch_files() -> None:
    """Read every project's launch files afresh: a run's answers (and the result cache's check
    of its digests) must see the files as they are now, not as an earlier run in this process
    read them (the tests' in-process CLI, an editor integration)."""
    project_launch.cache_clear()
    project_programs.cache_clear()
    trl_vllm_generation.cache_clear()
