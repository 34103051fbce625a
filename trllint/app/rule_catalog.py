"""What a run needs to know of the rules without importing them: a catalog kept in the cache folder.

A warm run (every file's result read from the cache) reports findings that were computed before:
it needs each selected rule's name, message, status, settings and the files it reads, never its
code. Importing the rules imports LibCST (the rules subclass its visitor), which costs more than
the whole warm run; so every run that imported them writes their declarations here, under the
same fingerprint of the engine's and the rule pack's source that keys the result cache, and a run
that finds the catalog of the code it is running checks its configuration and reads the cache
from it. Any file whose result is not in the cache sends the run back to the rules themselves.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from trllint.core.findings import Fixable, RuleStatus
from dataclasses import dataclass
from trllint.rule.declared import Setting

# Bumped whenever the layout of a catalog file changes.
CATALOG_FORMAT = 1
# A setting's kind by its name in the catalog: the kinds a TOML value can have.
_KINDS: dict[str, type] = {kind.__name__: kind for kind in (bool, int, float, str, list, dict)}


@dataclass(frozen=True)
class RuleCard:
    """One rule's declarations: the class attributes of a ``Rule`` that a run reads before linting."""

    code: str
    name: str
    message: str
    fixable: Fixable
    status: RuleStatus
    preview_findings: str
    file_patterns: tuple[str, ...]
    settings_schema: dict[str, Setting]


@dataclass(frozen=True)
class CatalogEntry:
    """A rule as the catalog lists it: the same shape as ``trllint.rule.registry.RuleInfo``."""

    rule: RuleCard
    folder: Path

    @property
    def readme(self) -> Path:
        return self.folder / "README.md"


def catalog_file(folder: Path, fingerprint: str) -> Path:
    return folder / f"rules-{CATALOG_FORMAT}-{fingerprint}.json"


def read_catalog(folder: Path, fingerprint: str) -> dict[str, CatalogEntry] | None:
    """The catalog of the code with ``fingerprint``; None when none was written, or it is damaged."""
    try:
        data = json.loads(catalog_file(folder, fingerprint).read_bytes())
        return {entry["code"]: _entry_from_json(entry) for entry in data}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_catalog(folder: Path, fingerprint: str) -> None:
    """List the rule pack in ``folder`` (once per fingerprint, again when damaged); a rule whose settings JSON cannot
    hold leaves no catalog, and its runs import the rules."""
    from trllint.rule.registry import available_rules, rules_replaced

    file = catalog_file(folder, fingerprint)
    if rules_replaced() or not folder.is_dir() or read_catalog(folder, fingerprint) is not None:
        return  # no cache folder (nothing was saved), or the catalog is there
    try:
        entries = [_entry_to_json(code, info.rule, info.folder) for code, info in available_rules().items()]
    except (KeyError, TypeError, ValueError):
        return
    temp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps(entries, separators=(",", ":")), encoding="utf-8")
        os.replace(temp, file)
    except OSError:
        pass  # a read-only cache folder: the next run imports the rules, as this one did


def _entry_to_json(code: str, rule: Any, folder: Path) -> dict[str, Any]:
    settings = {
        key: [_kind_name(s.kind), _default_to_json(s.default), s.help, None if s.item_kind is None else _kind_name(s.item_kind)]
        for key, s in rule.settings_schema.items()
    }
    entry = {
        "code": code,
        "name": rule.name,
        "message": rule.message,
        "fixable": rule.fixable,
        "status": rule.status,
        "preview_findings": rule.preview_findings,
        "file_patterns": list(rule.file_patterns),
        "settings": settings,
        "folder": str(folder),
    }
    if _entry_from_json(json.loads(json.dumps(entry))).rule.settings_schema != dict(rule.settings_schema):
        raise ValueError(f"{code}: a setting the catalog cannot hold")
    return entry


def _kind_name(kind: type) -> str:
    if _KINDS.get(kind.__name__) is not kind:
        raise ValueError(f"a setting of kind {kind!r}")
    return kind.__name__


def _default_to_json(default: Any) -> list[Any]:
    # A tuple (an empty list a rule cannot mutate, the usual default) must come back a tuple.
    return ["tuple", list(default)] if isinstance(default, tuple) else ["value", default]


def _default_from_json(stored: list[Any]) -> Any:
    kind, value = stored
    return tuple(value) if kind == "tuple" else value


def _entry_from_json(entry: dict[str, Any]) -> CatalogEntry:
    settings = {
        key: Setting(_KINDS[kind], _default_from_json(default), help_text, None if item is None else _KINDS[item])
        for key, (kind, default, help_text, item) in entry["settings"].items()
    }
    card = RuleCard(
        entry["code"], entry["name"], entry["message"], entry["fixable"], entry["status"], entry["preview_findings"],
        tuple(entry["file_patterns"]), settings,
    )
    return CatalogEntry(card, Path(entry["folder"]))
