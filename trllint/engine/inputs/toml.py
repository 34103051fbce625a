"""TOML (``pyproject.toml``): text, and a fix that would leave it unloadable is not written."""

from __future__ import annotations

from trllint.core.source import SourceFile
from trllint.engine.inputs.text import TextKind


class TomlKind(TextKind):
    name = "toml"

    def validate(self, before: SourceFile, after_text: str) -> str | None:
        import tomllib  # only a fix of a TOML file needs it

        try:
            tomllib.loads(before.text)
        except tomllib.TOMLDecodeError:
            return None  # broken before the fix: not the fix's doing
        try:
            tomllib.loads(after_text)
        except tomllib.TOMLDecodeError as exc:
            return f"the fixed TOML would not load ({exc})"
        return None


TOML = TomlKind()
