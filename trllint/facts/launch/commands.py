"""Launch commands in shell scripts, SLURM jobs, Makefiles and READMEs: which program each starts,
under which launcher, with which options.

    accelerate launch --config_file configs/zero3.yaml train.py --lr 1e-5
    torchrun --nproc_per_node 8 -m pkg.train --deepspeed ds.json
    deepspeed train.py --deepspeed_config ds_z3.json
    python train.py --config recipes/sft.yaml

A command is read from one logical line (backslash continuations joined; ``&&``, ``;`` and ``|``
split commands; environment assignments, ``srun``, ``nohup`` and friends in front are skipped).
A value the text does not spell (``$CONFIG``) is unknown, and unknown allows any backend.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field


# What may stand in front of the launcher on the same command.
_PREFIXES = frozenset({"srun", "nohup", "exec", "time", "env", "sudo", "mpirun", "command", "-", "$", ">", "uv", "run", "poetry"})
_MAKE_PREFIXES = ("@", "-", "+")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"^(?:\S*/)?python(?:3(?:\.\d+)?)?$")
# ``python -m X`` that is a launcher, and which.
_LAUNCHER_MODULES = {
    "torch.distributed.run": "torchrun",
    "torch.distributed.launch": "torchrun",
    "accelerate.commands.launch": "accelerate",
    "deepspeed.launcher.runner": "deepspeed",
}
# Launcher options that take no value (every other ``--option`` is read as taking the next word).
_FLAGS = frozenset(
    {
        "--multi_gpu", "--multi-gpu", "--use_deepspeed", "--use-deepspeed", "--use_fsdp", "--use-fsdp",
        "--cpu", "--debug", "--same_network", "--same-network", "--no_python", "--no-python",
        "--standalone", "--module", "-m", "--quiet", "-q", "--tpu", "--use_megatron_lm", "--no_local_rank",
        "--use_env", "--use-env", "--bind_cores_to_rank", "--enable_cpu_affinity", "--dynamo_use_fullgraph",
    }
)
_SPLIT = re.compile(r"&&|\|\||;|\|")


@dataclass
class LaunchCommand:
    """One command that starts a Python program."""

    launcher: str  # "accelerate", "torchrun", "deepspeed", "python"
    program: str  # the script's path as written, or a module as a path (``pkg/train.py``)
    line: int  # 1-based, where the command starts
    options: dict[str, str] = field(default_factory=dict)  # the launcher's: --name -> value ("" for a flag)
    arguments: dict[str, str] = field(default_factory=dict)  # the program's: --name -> value
    positional: list[str] = field(default_factory=list)  # the program's other words (a recipe's path)
    text: str = ""  # the command, for messages

    def option(self, *names: str) -> str | None:
        for name in names:
            for spelled in (name, name.replace("_", "-")):
                if spelled in self.options:
                    return self.options[spelled]
        return None

    def argument(self, *names: str) -> str | None:
        for name in names:
            for spelled in (name, name.replace("_", "-")):
                if spelled in self.arguments:
                    return self.arguments[spelled]
        return None


def launch_commands(text: str, *, markdown: bool = False) -> list[LaunchCommand]:
    """The launch commands of a shell script, a Makefile or (``markdown``) a README's code."""
    commands: list[LaunchCommand] = []
    for line, logical in _logical_lines(text):
        if markdown and not any(word in logical for word in ("launch", "torchrun", "deepspeed", "python")):
            continue
        for part in _SPLIT.split(logical):
            command = _command(part, line)
            if command is not None:
                commands.append(command)
    return commands


def _logical_lines(text: str) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not pending:
            start = number
            if stripped.startswith("#"):
                continue
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        lines.append((start, " ".join(pending)))
        pending = []
    if pending:
        lines.append((start, " ".join(pending)))
    return lines


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:  # an unclosed quote: the words as spaces split them
        return text.split()


def _command(text: str, line: int) -> LaunchCommand | None:
    words = _words(text)
    if words and words[0][:1] in _MAKE_PREFIXES:
        # A Makefile recipe's `@` (silent), `-` (errors ignored), `+`: glued to the command.
        words[0] = words[0].lstrip("".join(_MAKE_PREFIXES))
        if not words[0]:
            words = words[1:]
    index = 0
    while index < len(words) and (words[index] in _PREFIXES or _ENV_ASSIGNMENT.match(words[index])):
        index += 1
    if 0 < index < len(words) and words[index].startswith("-"):
        # A wrapper's own options (`srun --ntasks 8 torchrun ...`): the command starts at the launcher.
        index = next((i for i in range(index, len(words)) if _launcher_word(words[i])), len(words))
    words = words[index:]
    if not words:
        return None
    head = words[0].rsplit("/", 1)[-1]
    rest: list[str]
    if head == "accelerate" and len(words) > 1 and words[1] == "launch":
        launcher, rest = "accelerate", words[2:]
    elif head in ("accelerate-launch", "torchrun", "deepspeed"):
        launcher, rest = ("accelerate" if head == "accelerate-launch" else head), words[1:]
    elif _PYTHON.match(head):
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest = rest[1:]  # the interpreter's own flags (-u, -O)
        if len(rest) >= 2 and rest[0] == "-m" and rest[1] in _LAUNCHER_MODULES:
            launcher, rest = _LAUNCHER_MODULES[rest[1]], rest[2:]
        else:
            launcher = "python"
    else:
        return None
    options, program, after = _split_options(rest, launcher)
    if program is None:
        return None
    arguments, positional = _program_arguments(after)
    return LaunchCommand(launcher, program, line, options, arguments, positional, " ".join(words))


def _launcher_word(word: str) -> bool:
    head = word.rsplit("/", 1)[-1]
    return head in ("accelerate", "accelerate-launch", "torchrun", "deepspeed") or _PYTHON.match(head) is not None


def _split_options(words: list[str], launcher: str) -> tuple[dict[str, str], str | None, list[str]]:
    """The launcher's options, the program it starts, and the words after the program."""
    options: dict[str, str] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word == "-m" and index + 1 < len(words):
            return options, words[index + 1].replace(".", "/") + ".py", words[index + 2 :]
        if word.endswith(".py") and not word.startswith("-"):
            return options, word, words[index + 1 :]
        if not word.startswith("-"):
            if launcher == "python":
                return options, None, []  # python's first other word is its program: not a .py, not ours
            index += 1  # a value this reader took for a flag's neighbour
            continue
        name, equals, value = word.partition("=")
        if equals:
            options[name] = value
        elif name in _FLAGS or index + 1 >= len(words) or words[index + 1].startswith("-") or words[index + 1].endswith(".py"):
            options[name] = ""
        else:
            options[name] = words[index + 1]
            index += 1
        index += 1
    return options, None, []


def _program_arguments(words: list[str]) -> tuple[dict[str, str], list[str]]:
    arguments: dict[str, str] = {}
    positional: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if equals:
                arguments[name] = value
            elif index + 1 < len(words) and not words[index + 1].startswith("--"):
                arguments[name] = words[index + 1]
                index += 1
            else:
                arguments[name] = ""
        elif not word.startswith("-"):
            positional.append(word)
        index += 1
    return arguments, positional
