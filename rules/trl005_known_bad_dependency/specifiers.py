"""Version ranges: does a requirement admit a release in a bad range, and the edit that stops it.

``packaging`` answers "is this version in that set" but not "do these two sets meet". Two sets
built from ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``, ``~=`` and wildcards can only start to
meet at, or just beside, a version that one of them names; so probing those versions and their
neighbours decides it.
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from dataclasses import dataclass

# Always probed: the oldest and newest a version can plausibly be.
_FAR_VERSIONS = (Version("0"), Version("0.0.1"), Version("99999"))


def _named_version(specifier: Specifier) -> Version | None:
    try:
        return Version(specifier.version.removesuffix(".*"))
    except InvalidVersion:  # '===' takes arbitrary strings
        return None


def _neighbours(version: Version) -> set[Version]:
    """``version`` and the versions just beside it at every level of its release number."""
    release = version.release
    near = {version, Version(f"{version.base_version}.post1"), Version(".".join(map(str, release + (1,))))}
    for index, part in enumerate(release):
        for step in (-1, 0, 1):
            if part + step < 0:
                continue
            head = release[:index] + (part + step,)
            near.add(Version(".".join(map(str, head))))
            near.add(Version(".".join(map(str, head + (1,)))))
            near.add(Version(".".join(map(str, head + (99999,)))))
    return near


def probe_versions(*sets: SpecifierSet) -> list[Version]:
    probes = set(_FAR_VERSIONS)
    for specifier_set in sets:
        for specifier in specifier_set:
            named = _named_version(specifier)
            if named is not None:
                probes |= _neighbours(named)
    return sorted(probes)


def admits_any(requested: SpecifierSet, bad: SpecifierSet) -> bool:
    """Whether a version that ``requested`` admits (pre-releases as pip would) lies in ``bad``."""
    return any(
        requested.contains(version) and bad.contains(version, prereleases=True)
        for version in probe_versions(requested, bad)
    )


@dataclass(frozen=True)
class SpecifierEdit:
    """Replace ``text[start:end]`` of a requirement string with ``content``."""

    start: int
    end: int
    content: str
    unsafe: bool  # it drops a pin, an upper bound or an exclusion, not only a lower bound


# A requirement's name and extras, as PEP 508 spells them; what follows is the version part.
_NAME_AND_EXTRAS = re.compile(r"\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:\[[^\]]*\])?")


def version_part(requirement: str) -> tuple[int, int]:
    """Offsets of the specifier list in a PEP 508 string (an empty span where there is none)."""
    head = _NAME_AND_EXTRAS.match(requirement)
    name_end = len(head.group().rstrip()) if head else 0
    rest = requirement[name_end:]
    start = name_end + len(rest) - len(rest.lstrip())
    if requirement.startswith("(", start):  # the old spelling: name (>=1.0)
        close_at = requirement.find(")", start)
        return start + 1, close_at if close_at != -1 else len(requirement)
    end = name_end + len(re.split(r"[;@]", rest, maxsplit=1)[0].rstrip())
    if end <= start:  # no version at all: the bound goes right after the name
        return name_end, name_end
    return start, end


def raise_lower_bound(requirement: str, first_good: Version) -> SpecifierEdit | None:
    """The edit that makes ``requirement`` start at ``first_good``, keeping its other specifiers.

    Lower bounds below ``first_good`` are raised (safe). A pin, upper bound or exclusion that
    shuts out ``first_good`` itself is replaced (unsafe). None when no such edit can be written.
    """
    start, end = version_part(requirement)
    pieces = requirement[start:end].split(",") if end > start else []
    bound = f">={first_good}"
    kept: list[str] = []
    unsafe = False
    raised_at: int | None = None  # where the new lower bound goes
    for piece in pieces:
        text = piece.strip()
        try:
            specifier = Specifier(text)
        except InvalidSpecifier:
            return None
        admits_good = specifier.contains(first_good, prereleases=True)
        operator, named = specifier.operator, _named_version(specifier)
        if operator in (">=", ">") and named is not None and named < first_good:
            if raised_at is None:
                raised_at = len(kept)
                # '>= 0.6' keeps its spacing; '>0.7.1' becomes '>=0.7.2'.
                raised = text[: text.rindex(specifier.version)] + str(first_good) if operator == ">=" else bound
                kept.append(piece.replace(text, raised))
            continue
        if operator == "~=" and admits_good and named is not None and _same_series(named, first_good):
            # ~=0.7.0 is 0.7.*,>=0.7.0: raising it to ~=0.7.2 keeps the series and moves the floor.
            raised_at = len(kept)
            kept.append(piece.replace(text, f"~={first_good}"))
            continue
        if not admits_good:
            unsafe = True
            if raised_at is None and operator in ("==", "===", "~="):
                raised_at = len(kept)
                kept.append(piece.replace(text, bound))
            continue
        kept.append(piece)
    if raised_at is None and admits_any(SpecifierSet(",".join(kept)), SpecifierSet(f"<{first_good}")):
        kept.insert(0, bound)
    content = ",".join(kept).lstrip()
    try:
        fixed = SpecifierSet(content)
    except InvalidSpecifier:
        return None
    if not fixed.contains(first_good, prereleases=True):
        return None
    return SpecifierEdit(start, end, content, unsafe)


def _same_series(named: Version, first_good: Version) -> bool:
    """Whether ``~=first_good`` means ``~=named`` with a higher floor (same length, same prefix)."""
    return (
        len(named.release) == len(first_good.release) >= 2
        and named.release[:-1] == first_good.release[:-1]
        and str(first_good) == first_good.base_version
    )
