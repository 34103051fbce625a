"""Finding the rule pack: every ``rules/<folder>/rule.py`` that defines a Rule subclass.

Installed, the pack is the package ``trllint.rules``; in a checkout that has not been installed,
it is the ``rules/`` folder beside ``trllint/``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Mapping

from dataclasses import dataclass

if TYPE_CHECKING:
    from trllint.rule.base import Rule


@dataclass(frozen=True)
class RuleInfo:
    rule: type[Rule]
    folder: Path

    @property
    def readme(self) -> Path:
        return self.folder / "README.md"


def rules_root() -> Path:
    return Path(next(iter(_rule_pack().__path__)))


@lru_cache(maxsize=1)
def _rule_pack() -> ModuleType:
    try:
        pack = importlib.import_module("trllint.rules")
    except ImportError:
        # A bare checkout: mount rules/ as trllint.rules, so rule modules import the same way
        # (relative imports included) as they do from the wheel.
        folder = Path(__file__).resolve().parents[2] / "rules"  # trllint/rule/registry.py -> the checkout
        spec = importlib.util.spec_from_file_location(
            "trllint.rules", folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        assert spec and spec.loader
        pack = importlib.util.module_from_spec(spec)
        sys.modules["trllint.rules"] = pack
        spec.loader.exec_module(pack)
    return pack


@lru_cache(maxsize=None)
def all_rules() -> dict[str, RuleInfo]:
    """Rules by code, in code order."""
    # Here, not at the top: finding the pack's folder (the cache's fingerprint) imports no LibCST.
    from trllint.rule.base import Rule

    root = rules_root()
    found: dict[str, RuleInfo] = {}
    for folder in sorted(p for p in root.iterdir() if (p / "rule.py").is_file()):
        module = importlib.import_module(f"trllint.rules.{folder.name}.rule")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
                and getattr(value, "code", None)
            ):
                if value.code in found:
                    raise RuntimeError(f"rule code {value.code} is defined twice ({folder.name})")
                found[value.code] = RuleInfo(value, folder)
    return dict(sorted(found.items()))


def register_rules(rules: dict[str, RuleInfo]) -> None:
    """Replace the pack (tests use this to exercise the engine with rules of their own)."""
    all_rules.cache_clear()
    _override.clear()
    _override.update(rules)


_override: dict[str, RuleInfo] = {}


def available_rules() -> dict[str, RuleInfo]:
    return dict(_override) if _override else all_rules()


def rules_replaced() -> bool:
    """Whether :func:`register_rules` replaced the pack (then no catalog of the pack describes them)."""
    return bool(_override)


def resolve_code(code_or_name: str, rules: Mapping[str, Any] | None = None) -> str | None:
    """A rule code for a code or a rule name; ``None`` when it names no rule. ``rules``: these
    (the rule catalog's, say) instead of the pack's."""
    rules = available_rules() if rules is None else rules
    key = code_or_name.strip()
    if key.upper() in rules:
        return key.upper()
    for code, info in rules.items():
        if info.rule.name == key:
            return code
    return None
