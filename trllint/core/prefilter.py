"""The text check that spares LibCST a file no rule can match.

A rule declares what a file must spell to be worth parsing for it, with named parts::

    prefilter = AllOf(
        AnyOf(*DISTRIBUTED_MARKERS),
        AnyOf(*METRIC_SINK_MARKERS, setting="metric-sinks"),
    )

``AnyOf`` holds when one of its tokens is in the file, ``AllOf`` when each of its parts holds.
``setting=`` names a rule setting whose configured values (their last dotted part: the name a
call spells) join that ``AnyOf``, so a file that spells only a project's own sink is still parsed.
The prefilter must never change results: it may only skip files that cannot hold a finding.

A token is a string or a compiled regular expression. Every file is checked, so prefer strings;
a regex should start with a literal, not ``\\b`` (trllint.facts.markers says why).

``Reached(tokens)`` is the one token that looks beyond the file: it holds when a module of the
file's project that the file's calls or classes' bases lead to spells one of ``tokens`` (found
from the modules' outlines and text). It is for a rule
whose finding can come from a helper in another module; put it last in its ``AnyOf``, so it is
asked only of files that spell none of the others.

``Calls(names)``, ``Reads(names)`` and ``Defines(names)`` name what a rule's every finding sits
at: a call of one of ``names`` (``f(...)``, ``x.f(...)``), an attribute of one (``x.name``), a
function of one (``def name``). The file must spell one of them as a whole word: ``gather`` in
``all_gather`` is another name. That is a question of the text, so it holds wherever the code
could hold the name (an import that binds it under another name spells it too); a word in a
comment or a string lets the file through, and the rule then finds nothing there.

"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator, Union

from dataclasses import dataclass

Token = Union[str, "re.Pattern[str]"]


def token_present(token: Token, text: str) -> bool:
    return token in text if isinstance(token, str) else token.search(text) is not None


class Reached:
    """Holds when a module of the project that the file's imports lead to spells one of ``tokens``.
    It is data: the caller that can ask the project (the rule API, through
    :func:`trllint.semantic.project.index.project_reaches`) answers it, so this layer knows
    no project; without such a caller (text that is no file of a project) it never holds."""

    __slots__ = ("tokens", "calls", "reading", "subclasses", "kept")

    def __init__(
        self,
        tokens: AnyOf | AllOf,
        *,
        calls: bool = True,
        reading: frozenset[str] | None = None,
        subclasses: bool = False,
        kept: bool = False,
    ) -> None:
        self.tokens = tokens
        self.calls = calls  # False: only the bases of the file's classes lead on
        # The bases lead on only from a file with a class that reads one of these members on a
        # `self` attribute it does not bind (trllint.semantic.project.outline.class_bases).
        self.reading = reading
        # True: so do the modules beside the file that derive a class from such a reading class.
        self.subclasses = subclasses
        # True: so does a module anywhere in the project that calls a method by which a base
        # class of the file's classes keeps an attribute the file reads (`set_prepared_model`).
        self.kept = kept

    def __repr__(self) -> str:
        return (
            f"Reached({self.tokens!r}, calls={self.calls}, reading={self.reading!r}, "
            f"subclasses={self.subclasses}, kept={self.kept})"
        )


def _configured_names(settings: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(value).rsplit(".", 1)[-1] for key in keys for value in settings.get(key, ()))


Reaches = Callable[[Reached], bool]  # answers a file's Reached token (the rule API builds it)


class AnyOf:
    """Holds when any token is in the text (or any name configured under ``setting``)."""

    __slots__ = ("tokens", "settings", "reached")

    def __init__(self, *tokens: Token | AnyOf | Reached, setting: str | tuple[str, ...] = ()) -> None:
        flat: list[Token] = []
        keys: list[str] = []
        reached: list[Reached] = []
        for token in tokens:
            if isinstance(token, AnyOf):  # any of (any of ...) is one any-of: shared markers nest
                flat.extend(token.tokens)
                keys.extend(token.settings)
                reached.extend(token.reached)
            elif isinstance(token, (str, re.Pattern)):
                flat.append(token)
            elif isinstance(token, Reached):
                reached.append(token)
            else:
                raise TypeError(
                    "AnyOf takes strings, compiled patterns, Reached or AnyOf (Calls, Reads, Defines), "
                    f"not {type(token).__name__}"
                )
        self.reached: tuple[Reached, ...] = tuple(reached)
        if not flat and not keys and not reached:
            raise TypeError("AnyOf() with no token would never hold; leave the prefilter out to always run")
        self.tokens: tuple[Token, ...] = tuple(flat)
        self.settings: tuple[str, ...] = (*keys, *((setting,) if isinstance(setting, str) else setting))

    def __iter__(self) -> Iterator[Token]:
        # Shared markers are spread into other token lists too (``(*DEEPSPEED_INITIALIZE, ...)``).
        return iter(self.tokens)

    def tokens_for(self, settings: dict[str, Any]) -> tuple[Token, ...]:
        return self.tokens + _configured_names(settings, self.settings)

    def holds(
        self, text: str, settings: dict[str, Any], reaches: Reaches | None = None
    ) -> bool:
        """``reaches`` answers a ``Reached`` token for this file; without it, none holds."""
        verdict = self.verdict(text, settings)
        if verdict is not None:
            return verdict
        return reaches is not None and any(reaches(reached) for reached in self.reached)

    def verdict(self, text: str, settings: dict[str, Any]) -> bool | None:
        """What the text tokens say: True or False, or None where only the costly ``Reached``
        could still hold."""
        if any(token_present(token, text) for token in self.tokens_for(settings)):
            return True
        return None if self.reached else False

    def __repr__(self) -> str:
        setting = f", setting={self.settings!r}" if self.settings else ""
        return f"AnyOf({', '.join(map(repr, (*self.tokens, *self.reached)))}{setting})"


class AllOf:
    """Holds when every part holds."""

    __slots__ = ("parts",)

    def __init__(self, *parts: AnyOf) -> None:
        for part in parts:
            if not isinstance(part, AnyOf):
                raise TypeError(f"AllOf takes AnyOf parts, not {type(part).__name__}")
        if not parts:
            raise TypeError("AllOf() with no part; leave the prefilter out to always run")
        self.parts: tuple[AnyOf, ...] = parts

    def holds(
        self, text: str, settings: dict[str, Any], reaches: Reaches | None = None
    ) -> bool:
        return all(part.holds(text, settings, reaches) for part in self.parts)

    def verdict(self, text: str, settings: dict[str, Any]) -> bool | None:
        """False when a part's text tokens rule the file out, True when every part's hold, else None."""
        undecided = False
        for part in self.parts:
            verdict = part.verdict(text, settings)
            if verdict is False:
                return False
            undecided = undecided or verdict is None
        return None if undecided else True

    def __repr__(self) -> str:
        return f"AllOf({', '.join(map(repr, self.parts))})"


class _Spelled(AnyOf):
    """Holds when the text spells one of ``names`` as a whole word (see the subclasses)."""

    __slots__ = ("names",)

    def __init__(self, *names: str) -> None:
        if not names or not all(isinstance(name, str) and name.isidentifier() for name in names):
            raise TypeError(f"{type(self).__name__} takes identifiers, not {names!r}")
        self.names = frozenset(names)
        # The name, then a look back that it starts a word: a pattern that starts with a literal
        # is searched for that literal (trllint.facts.markers).
        super().__init__(*(re.compile(rf"{name}(?<!\w{name})(?!\w)") for name in sorted(self.names)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, sorted(self.names)))})"


class Calls(_Spelled):
    """The rule's findings sit at calls of one of ``names``: ``f(...)``, ``x.f(...)``, or ``g(...)``
    for a ``g`` an import binds to an ``f`` (the import spells ``f``)."""


class Reads(_Spelled):
    """The rule's findings sit at an attribute named one of ``names``: ``x.name``."""


class Defines(_Spelled):
    """The rule's findings need a function (or method) named one of ``names``."""


Prefilter = Union[AnyOf, AllOf]


def check_declaration(owner: str, prefilter: object) -> None:
    """A clear error at import for a prefilter that is not AnyOf/AllOf (the old tuple forms)."""
    if prefilter is not None and not isinstance(prefilter, (AnyOf, AllOf)):
        raise TypeError(
            f"{owner}.prefilter is a {type(prefilter).__name__}; declare AnyOf(...) or AllOf(AnyOf(...), ...) "
            "from trllint.core.prefilter (docs/adding-a-rule.md, Prefilters)"
        )

