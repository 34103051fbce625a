"""The project's target Python when the configuration names none: ``requires-python``, else the
running interpreter (Ruff's order after its own ``target-version``)."""

from __future__ import annotations

from pathlib import Path

from trllint.app.config import CONFIG_FILE, Config, ConfigError, _parse_toml, _read_bytes
from trllint.core.target_version import TargetVersion, lowest_admitted, running_interpreter


def resolve_target(config: Config, start: Path) -> TargetVersion:
    """The configuration's target-version, else the lowest Python that ``requires-python``
    admits in the project's pyproject.toml (the configuration's folder, else the nearest at or
    above ``start`` that has a [project] table), else the running interpreter (Ruff's order)."""
    if config.target is not None:
        return config.target
    if config.path is not None:
        folders = [config.root]  # the project the configuration belongs to
    else:
        start = start.resolve()
        folders = [start, *start.parents] if start.is_dir() else list(start.parents)
    for folder in folders:
        candidate = folder / CONFIG_FILE
        if not candidate.is_file():
            continue
        data = _read_bytes(candidate)
        if b"requires-python" not in data:  # parsed only when it may name one (tomllib costs)
            if b"[project]" in data:
                break  # the project's, and it names no version: the interpreter's
            continue  # a tool's pyproject.toml, not the project's: look further up
        try:
            document = _parse_toml(candidate, data)
        except ConfigError:
            if config.path is not None:
                raise
            continue  # not trllint's file, and pip cannot read it either: not the project's
        project = document.get("project")
        if not isinstance(project, dict):
            continue
        specifier = project.get("requires-python")
        if specifier is None:
            break  # the project says nothing: the interpreter's version
        if not isinstance(specifier, str):
            raise ConfigError(f"{candidate}: [project] 'requires-python' must be a string, got {specifier!r}")
        try:
            version = lowest_admitted(specifier)
        except ValueError:
            raise ConfigError(f"{candidate}: [project] 'requires-python' is not a version specifier: {specifier!r}") from None
        if version is None:
            raise ConfigError(
                f"{candidate}: [project] requires-python = {specifier!r} admits no Python from 3.7 to 3.14; "
                "set target-version in [tool.trllint]"
            )
        return TargetVersion(version, f"requires-python = {specifier!r}".replace("'", '"'))
    return running_interpreter()
