"""The nearest configuration, then the command line over it: ``.trllint.toml`` or ``trllint.toml``
(the keys at the top level) or ``[tool.trllint]`` in ``pyproject.toml``, first in that order in the
nearest folder that has one (Ruff's order for ``.ruff.toml``, ``ruff.toml`` and ``pyproject.toml``).

Every mistake in the configuration is one line naming the file and the key, and exit 2: a lint
gate that silently ignores a misspelt ``selec = [...]`` is worse than none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from trllint.core.findings import PARSE_ERROR, UNUSED_NOQA
from trllint.core.source import DEFAULT_MAX_FILE_BYTES
from trllint.core.target_version import TargetVersion, parse_target_version
from trllint.rule.declared import RuleEntry, Setting
from trllint.rule.registry import available_rules as registered_rules, resolve_code

if TYPE_CHECKING:
    from trllint.rule.ruleset import RuleSet

CONFIG_FILE = "pyproject.toml"
# Files of trllint's own: every key at the top level, no [tool.trllint] table.
STANDALONE_CONFIG_FILES = (".trllint.toml", "trllint.toml")

# Keys the engine owns; rules add their own settings through Rule.settings_schema.
_LIST_OF_STRINGS = (
    "select", "ignore", "extend-select", "exclude", "extend-exclude", "extend-ignore", "fixable", "unfixable", "extend-fixable"
)
_BOOLEANS = ("preview", "fix", "unsafe-fixes", "show-fixes")
_ENGINE_KEYS = set(_LIST_OF_STRINGS) | set(_BOOLEANS) | {"per-file-ignores", "target-version", "cache-dir", "max-file-size-mb"}
# Where results and summaries are cached, under the configuration's folder (``cache-dir``,
# ``--cache-dir`` and TRLLINT_CACHE_DIR move it).
CACHE_DIR = ".trllint_cache"
DEFAULT_MAX_FILE_SIZE_MB = DEFAULT_MAX_FILE_BYTES // 2**20
# Why a selection of preview rules only lints nothing while preview is off: every rule is
# preview until the test split measures it (README: Rules, Stable and preview).
NO_STABLE_RULE = (
    "no rule is selected: no rule is stable yet, each is preview until it meets the graduation bar "
    "(README: Rules, Stable and preview); run with --preview, or set preview = true"
)


# The rules a configuration is checked against: the rule pack's, or, for a run that may answer
# from the result cache alone, the catalog of the same code (trllint.app.rule_catalog).
_catalog: dict[str, RuleEntry] = {}


def use_rule_catalog(catalog: Mapping[str, RuleEntry] | None) -> None:
    """Check configurations against ``catalog`` instead of importing the rules; None: the rules."""
    _catalog.clear()
    _catalog.update(catalog or {})


def available_rules() -> Mapping[str, RuleEntry]:
    """The rules by code, as the rule catalog in use lists them, else the rule pack's."""
    if _catalog:
        return _catalog
    rules: Mapping[str, RuleEntry] = registered_rules()
    return rules


class ConfigError(Exception):
    """A configuration mistake: the CLI prints it on one line and exits 2."""


@dataclass
class Config:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    rule_settings: dict[str, Any] = field(default_factory=dict)
    # Preview rules selectable and preview findings shown (Ruff's preview mode): the file's
    # `preview`, which --preview / --no-preview replace (trllint.app.cli).
    preview: bool = False
    # The Python version the code must run on: syntax newer than it is a TRL000
    # (trllint.app.target.resolve_target fills it when the file names none).
    target: TargetVersion | None = None
    # Where the configuration came from; patterns are relative to this folder.
    root: Path = field(default_factory=Path.cwd)
    path: Path | None = None
    # Ruff's fix settings: `fix = true` fixes without --fix (--no-fix overrides), `unsafe-fixes`
    # likewise, `show-fixes` lists what was fixed; fixable / extend-fixable / unfixable say whose
    # fixes may be offered at all.
    fix: bool = False
    unsafe_fixes: bool = False
    show_fixes: bool = False
    fixable: list[str] | None = None
    extend_fixable: list[str] = field(default_factory=list)
    unfixable: list[str] = field(default_factory=list)
    # The cache folder (relative paths against root); None: root / CACHE_DIR.
    cache_dir: Path | None = None
    max_file_size_mb: int = DEFAULT_MAX_FILE_SIZE_MB

    # The command line's choice of rules, a layer over the file's (Ruff's order): a command-line
    # --select starts afresh, so the file's ignore does not silence a rule the user just selected.
    cli_select: list[str] | None = None
    cli_extend_select: list[str] = field(default_factory=list)
    cli_ignore: list[str] = field(default_factory=list)
    # --ignore-noqa: findings are reported whatever `# noqa` comments say.
    ignore_noqa: bool = False

    def _chosen(self, default: set[str]) -> set[str]:
        """The codes the selections name, in Ruff's order; ``default`` when no select is given."""
        rules = available_rules()
        chosen = set(expand_selectors(self.select, rules)) if self.select is not None else set(default)
        chosen |= set(expand_selectors(self.extend_select, rules))
        chosen -= set(expand_selectors(self.ignore, rules))
        if self.cli_select is not None:
            chosen = set(expand_selectors(self.cli_select, rules))
        chosen |= set(expand_selectors(self.cli_extend_select, rules))
        chosen -= set(expand_selectors(self.cli_ignore, rules))
        return chosen

    def selected_codes(self, preview: bool | None = None) -> list[str]:
        """The rules selected (TRL000 and TRL100 are the engine's: :meth:`reports_syntax_errors`,
        :meth:`reports_unused_noqa`); ``preview``: as if preview were on or off, else as set."""
        rules = available_rules()
        chosen = self._chosen(set(rules)) & set(rules)
        if not (self.preview if preview is None else preview):
            # As in Ruff: without preview no selector selects a preview rule, not even its exact
            # code (preview_selections_ignored names those, for a warning).
            chosen = {code for code in chosen if rules[code].rule.status != "preview"}
        return sorted(chosen)

    def reports_unused_noqa(self) -> bool:
        """TRL100 only when a selection names it (a code, a prefix such as ``TRL1``, or ``ALL``):
        the default selection leaves it out, as Ruff's leaves out RUF100."""
        return UNUSED_NOQA[0] in self._chosen(set())

    def reports_syntax_errors(self) -> bool:
        """TRL000 is reported unless an ignore names it (a selection that leaves it out does not
        hide a file that does not parse); a command-line --select starts afresh, as for rules."""
        rules = available_rules()
        reported = PARSE_ERROR[0] not in expand_selectors(self.ignore, rules)
        if self.cli_select is not None:
            reported = True
        return reported and PARSE_ERROR[0] not in expand_selectors(self.cli_ignore, rules)

    def selects_syntax_errors(self) -> bool:
        """Whether a selection names TRL000 itself (``--select TRL000``: a syntax check, no rule)."""
        return PARSE_ERROR[0] in self._chosen(set())

    def preview_selections_ignored(self) -> list[str]:
        """The preview rules a select or extend-select in effect names exactly (by code or name)
        while preview is off: selecting them has no effect, which Ruff warns about."""
        if self.preview:
            return []
        rules = available_rules()
        lists = [self.cli_select] if self.cli_select is not None else [self.select or [], self.extend_select]
        named = {resolve_code(selector, rules) for selectors in [*lists, self.cli_extend_select] for selector in selectors}
        return sorted(code for code in named if code is not None and rules[code].rule.status == "preview")

    def no_rule_selected(self) -> str | None:
        """Why a run of this configuration would lint nothing, in one line; None when it lints. A run
        of no rule would print "All checks passed!", a false clean result: the command line's usage
        error, the language server's warning."""
        if self.selected_codes() or self.selects_syntax_errors() or self.reports_unused_noqa():
            return None
        ignored_preview = self.preview_selections_ignored()
        if ignored_preview:
            return f"no rule is selected: {', '.join(ignored_preview)} needs --preview"
        if self.selected_codes(preview=True):
            return NO_STABLE_RULE
        return "no rule is selected: select and ignore leave none"

    def cache_folder(self) -> Path:
        if self.cache_dir is None:
            return self.root / CACHE_DIR
        return self.cache_dir if self.cache_dir.is_absolute() else self.root / self.cache_dir

    def unfixable_codes(self) -> frozenset[str]:
        """The codes whose fixes are dropped: those ``fixable`` leaves out or ``unfixable`` names."""
        rules = available_rules()
        every = set(rules) | {UNUSED_NOQA[0]}
        fixable = set(expand_selectors(self.fixable, rules)) if self.fixable is not None else set(every)
        fixable |= set(expand_selectors(self.extend_fixable, rules))
        fixable -= set(expand_selectors(self.unfixable, rules))
        return frozenset(every - fixable)

    def ruleset(self, codes: list[str]) -> RuleSet:
        from trllint.rule.ruleset import RuleSet

        rules = registered_rules()  # the classes themselves, whatever catalog checked the configuration
        return RuleSet(
            rules=[rules[code].rule for code in codes if code in rules],
            settings=dict(self.rule_settings),
            per_file_ignores=[
                (pattern, frozenset(expand_selectors(selectors, rules)))
                for pattern, selectors in self.per_file_ignores.items()
            ],
            root=self.root,
            preview=self.preview,
            target=self.target,
            syntax_errors_ignored=not self.reports_syntax_errors(),
            unused_noqa=self.reports_unused_noqa(),
            ignore_noqa=self.ignore_noqa,
            unfixable=self.unfixable_codes(),
            max_file_bytes=self.max_file_size_mb * 2**20,
        )

    def settings_fingerprint(self) -> str:
        """Everything about this configuration that can change a file's findings (for the cache)."""
        import json

        return json.dumps(
            {
                "codes": self.selected_codes(),
                "preview": self.preview,
                "settings": self.rule_settings,
                "per_file_ignores": self.per_file_ignores,
                "target": str(self.target) if self.target else None,
                "syntax_errors": self.reports_syntax_errors(),
                "unused_noqa": self.reports_unused_noqa(),
                "ignore_noqa": self.ignore_noqa,
                "unfixable": sorted(self.unfixable_codes()),
                "max_file_size_mb": self.max_file_size_mb,
            },
            sort_keys=True,
            default=str,
        )


def expand_selectors(selectors: list[str], rules: Mapping[str, RuleEntry]) -> list[str]:
    """Codes for a list of codes, code prefixes (``TRL00``), rule names or ``ALL``; TRL000
    (``unreadable-or-invalid-source``, the engine's) among them, which the caller tells apart."""
    names = {code: info.rule.name for code, info in rules.items()}
    names[PARSE_ERROR[0]] = PARSE_ERROR[1]
    names[UNUSED_NOQA[0]] = UNUSED_NOQA[1]
    codes: list[str] = []
    for selector in selectors:
        key = selector.strip()
        if key.upper() == "ALL":
            codes.extend(names)
            continue
        matched = [code for code in names if code.startswith(key.upper())] if key else []
        matched += [code for code, name in names.items() if name == key]
        if not matched:
            raise ConfigError(f"unknown rule code or name {selector!r} (see `trllint --list-rules`)")
        codes.extend(matched)
    return codes


def find_config(start: Path) -> Path | None:
    """The nearest configuration at or above ``start``: a ``.trllint.toml`` or ``trllint.toml``, or
    a pyproject.toml that has a [tool.trllint] table (in one folder, in that order)."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        for name in STANDALONE_CONFIG_FILES:
            if (folder / name).is_file():
                return folder / name
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            try:
                data = _read_bytes(candidate)
                if not _may_name_trllint(data):
                    continue  # most pyproject.toml files: no need to parse them (nor to import tomllib)
                document = _parse_toml(candidate, data)
                if "trllint" in document.get("tool", {}):
                    _found[candidate] = (data, document)  # load_config reads it next: parsed once
                    return candidate
            except ConfigError:
                # A broken pyproject.toml that might be ours: report it rather than skip past it.
                if "[tool.trllint" in candidate.read_text(encoding="utf-8", errors="replace"):
                    return candidate
    return None


# The document find_config parsed, by path, with the bytes it was parsed from; taken once.
_found: dict[Path, tuple[bytes, dict[str, Any]]] = {}


def _may_name_trllint(data: bytes) -> bool:
    """Whether a TOML document can hold a ``trllint`` key: only by spelling it, or by escaping
    some of its letters in a quoted key (``"trl\\u006cint"``)."""
    return b"trllint" in data or b"\\u" in data or b"\\U" in data


def _read_toml(path: Path) -> dict[str, Any]:
    data = _read_bytes(path)
    found = _found.pop(path, None)
    if found is not None and found[0] == data:
        return found[1]
    return _parse_toml(path, data)


def _read_bytes(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _parse_toml(path: Path, data: bytes) -> dict[str, Any]:
    import tomllib  # only a run that meets a pyproject.toml naming trllint pays for it

    try:
        return tomllib.loads(data.decode())  # what tomllib.load does with the bytes
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def settings_schema() -> dict[str, Setting]:
    schema: dict[str, Setting] = {}
    for info in available_rules().values():
        schema.update(info.rule.settings_schema)
    return schema


def is_standalone(path: Path) -> bool:
    """A file whose keys are trllint's at the top level: any configuration not named pyproject.toml."""
    return path.name != CONFIG_FILE


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    document = _read_toml(path)
    if is_standalone(path):
        return config_from_table(document, path, where=f"{path}:")
    tools = document.get("tool", {})
    if "trllint" not in tools:
        # Named with --config (find_config returns only a pyproject.toml with the table): ignoring
        # it silently would lint with defaults the user did not choose.
        raise ConfigError(f"{path}: no [tool.trllint] table (a trllint.toml takes the keys at its top level)")
    table = tools["trllint"]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.trllint] must be a table")
    config = config_from_table(table, path)
    if "line-length" not in table:
        # The formatter's line length, so that fixed lines pass the project's own format check.
        for tool in ("ruff", "black"):
            length = tools.get(tool, {}).get("line-length") if isinstance(tools.get(tool), dict) else None
            if isinstance(length, int) and not isinstance(length, bool) and length > 0:
                config.rule_settings["line-length"] = length
                break
    return config


def config_from_table(table: dict[str, Any], path: Path | None, where: str | None = None) -> Config:
    if where is None:
        where = f"{path}: [tool.trllint]" if path else "[tool.trllint]"
    schema = settings_schema()
    unknown = sorted(set(table) - _ENGINE_KEYS - set(schema))
    if unknown:
        raise ConfigError(f"{where} unknown key {unknown[0]!r}")
    for key in _LIST_OF_STRINGS:
        if key in table:
            _expect_list_of_strings(table[key], f"{where} {key!r}")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where} 'per-file-ignores' must be a table of glob = [codes]")
    for pattern, codes in pfi.items():
        _expect_list_of_strings(codes, f"{where} per-file-ignores {pattern!r}")
    for key in _BOOLEANS:
        if key in table and not isinstance(table[key], bool):
            raise ConfigError(f"{where} {key!r} must be true or false, got {table[key]!r}")
    preview = table.get("preview", False)
    cache_dir = table.get("cache-dir")
    if cache_dir is not None and (not isinstance(cache_dir, str) or not cache_dir):
        raise ConfigError(f"{where} 'cache-dir' must be a string (a folder), got {cache_dir!r}")
    max_size = table.get("max-file-size-mb", DEFAULT_MAX_FILE_SIZE_MB)
    if not isinstance(max_size, int) or isinstance(max_size, bool) or max_size < 0:
        raise ConfigError(f"{where} 'max-file-size-mb' must be an integer, 0 or more (0: no limit), got {max_size!r}")
    target = None
    if "target-version" in table:
        value = table["target-version"]
        version = parse_target_version(value) if isinstance(value, str) else None
        if version is None:
            raise ConfigError(f"{where} 'target-version' must be one of \"py37\" to \"py314\", got {value!r}")
        target = TargetVersion(version, f"target-version = {value!r}".replace("'", '"'))
    rule_settings: dict[str, Any] = {}
    for key, setting in schema.items():
        if key in table:
            rule_settings[key] = _check_setting(table[key], setting, f"{where} {key!r}")
    config = Config(
        select=table.get("select"),
        ignore=list(table.get("ignore", [])) + list(table.get("extend-ignore", [])),
        extend_select=list(table.get("extend-select", [])),
        per_file_ignores=dict(pfi),
        exclude=table.get("exclude"),
        extend_exclude=list(table.get("extend-exclude", [])),
        rule_settings=rule_settings,
        preview=preview,
        target=target,
        root=path.parent if path else Path.cwd(),
        path=path,
        fix=table.get("fix", False),
        unsafe_fixes=table.get("unsafe-fixes", False),
        show_fixes=table.get("show-fixes", False),
        fixable=table.get("fixable"),
        extend_fixable=list(table.get("extend-fixable", [])),
        unfixable=list(table.get("unfixable", [])),
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        max_file_size_mb=max_size,
    )
    try:
        config.selected_codes()
        config.unfixable_codes()
        for codes in config.per_file_ignores.values():
            expand_selectors(codes, available_rules())
    except ConfigError as exc:
        raise ConfigError(f"{where} {exc}") from None
    return config


def _expect_list_of_strings(value: Any, what: str) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what} must be a list of strings, got {value!r}")


def _check_setting(value: Any, setting: Setting, what: str) -> Any:
    if setting.kind is list:
        if not isinstance(value, list) or (
            setting.item_kind is not None and not all(isinstance(v, setting.item_kind) for v in value)
        ):
            item = _TOML_NAMES.get(setting.item_kind, "value") if setting.item_kind else "value"
            raise ConfigError(f"{what} must be a list of {item}s, got {value!r}")
        return value
    if setting.kind is bool and not isinstance(value, bool):
        raise ConfigError(f"{what} must be true or false, got {value!r}")
    if not isinstance(value, setting.kind) or (setting.kind is int and isinstance(value, bool)):
        raise ConfigError(f"{what} must be {_a(setting.kind)}, got {value!r}")
    return value


# What a configuration's values are called in its own language (TOML), not Python's type names:
# one wording for every key ("a list of strings", never "a list of strs").
_TOML_NAMES: dict[type, str] = {str: "string", int: "integer", float: "number"}


def _a(kind: type) -> str:
    name = _TOML_NAMES.get(kind, kind.__name__)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def parse_code_list(value: str) -> list[str]:
    """``--select TRL001,TRL004`` (commas and spaces both separate)."""
    return [part for part in value.replace(" ", ",").split(",") if part]
