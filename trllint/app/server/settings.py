"""The configuration an open file is linted with, found and read as the command line does.

Each folder's answer is kept until a configuration file changes (:meth:`SettingsCache.forget`,
called on a saved or watched ``pyproject.toml`` / ``trllint.toml`` / ``.trllint.toml``). A
configuration with a mistake is not a reason to go silent in the editor: the file is linted with
the defaults and the mistake is said once (``problem``), as Ruff's server does.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from trllint.app.config import CONFIG_FILE, STANDALONE_CONFIG_FILES, Config, ConfigError, find_config, load_config
from trllint.app.discovery import DEFAULT_EXCLUDES, discover
from trllint.app.target import resolve_target
from dataclasses import dataclass
from trllint.core.target_version import running_interpreter
from trllint.engine.inputs import ALWAYS_READ_PATTERNS
from trllint.rule.ruleset import RuleSet

CONFIG_FILE_NAMES = (CONFIG_FILE, *STANDALONE_CONFIG_FILES)


def is_config_file(path: Path) -> bool:
    return path.name in CONFIG_FILE_NAMES


@dataclass
class Settings:
    config: Config
    ruleset: RuleSet
    # The configuration's mistake, when the defaults stand in for it (one line, as the CLI says it).
    problem: str | None = None
    # Why it selects no rule (the CLI's usage error, Config.no_rule_selected): nothing is linted.
    no_rule: str | None = None

    def reads(self, path: Path | None, filename: str) -> bool:
        """Whether a run would lint this file: its name is one a selected rule reads (Python and
        notebooks always), and no exclude names it or a folder above it (Ruff's server, like
        ``--force-exclude``: a vendored file opened in the editor stays quiet)."""
        patterns = (*self.ruleset.file_patterns(), *ALWAYS_READ_PATTERNS)
        if not any(fnmatch.fnmatch(filename, pattern) for pattern in patterns):
            return False
        if path is None or not path.is_file():
            return True  # not on disk yet: nothing to exclude it by
        excludes = list(self.config.exclude if self.config.exclude is not None else DEFAULT_EXCLUDES)
        excludes += self.config.extend_exclude
        found = discover(
            [str(path)], (), excludes=excludes, root=self.config.root, respect_gitignore=False, force_exclude=True
        )
        return bool(found.files)


class SettingsCache:
    def __init__(self) -> None:
        self._by_folder: dict[Path, Settings] = {}

    def forget(self) -> None:
        """A configuration file changed: every folder's settings are read again."""
        self._by_folder.clear()

    def for_folder(self, folder: Path) -> Settings:
        folder = folder.resolve()
        if folder not in self._by_folder:
            self._by_folder[folder] = _read_settings(folder)
        return self._by_folder[folder]


def _read_settings(folder: Path) -> Settings:
    """What ``trllint`` run in ``folder`` would lint with (``trllint.app.cli``'s order)."""
    try:
        config = load_config(find_config(folder))
        if config.path is None:
            config.root = folder
        config.target = resolve_target(config, folder)
        return Settings(config, config.ruleset(config.selected_codes()), no_rule=config.no_rule_selected())
    except ConfigError as exc:
        config = Config(root=folder, target=running_interpreter())
        return Settings(
            config, config.ruleset(config.selected_codes()), problem=str(exc), no_rule=config.no_rule_selected()
        )
