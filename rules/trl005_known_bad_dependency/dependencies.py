"""Where a project declares its dependencies, with each requirement's place in the file's text.

Requirements files, ``setup.cfg`` and ``pyproject.toml`` are read as text, never re-serialised:
each requirement comes back with the offsets a fix edits, so everything else in the file stays
byte for byte as it was. (``setup.py`` is Python: its rule reads it through LibCST.)
"""

from __future__ import annotations

import re
import tomllib
from typing import Iterator

from dataclasses import dataclass
from trllint.core.requirements_files import PIP_COMMENT


@dataclass(frozen=True)
class Declared:
    """One requirement string: ``text`` as the installer reads it, and where it stands."""

    text: str
    start: int  # the span to report, as offsets into the file
    end: int
    # Where ``text`` itself starts in the file when it is there verbatim (no escapes, no hash
    # pins that a new version would break), else None: such a requirement gets no fix.
    text_offset: int | None


@dataclass(frozen=True)
class Unreadable:
    """A part of the file that cannot be read as dependencies (a TOML error, say)."""

    message: str
    start: int


Item = Declared | Unreadable

# ---- requirements.txt / requirements.in (pip's format) -------------------------------------

# Per-requirement options (--hash, --config-settings, ...) follow the requirement after a space.
_OPTION = re.compile(r"\s+--?[A-Za-z]")
# Lines that name something other than a PEP 508 requirement: paths, archives, URLs, variables.
_NOT_A_REQUIREMENT = re.compile(
    r"^(?:[./~\\]|[A-Za-z][A-Za-z0-9+.-]*://|file:)|\$\{|\.(?:whl|zip|tar\.gz|tar\.bz2|tgz)$"
)
# pip takes a line for a local path when its name holds a path separator (`packages/foo`,
# `src\tools`, `foo/bar[extra]`): a PEP 508 name never does, only a URL after ` @ ` may.
_PATH_SEPARATOR = re.compile(r"[/\\]")


def _is_local_path(requirement: str) -> bool:
    head = requirement.split(";", 1)[0]
    return "@" not in head and bool(_PATH_SEPARATOR.search(head))


def in_requirements_file(text: str) -> Iterator[Item]:
    """The requirements of a pip requirements file; options (-r, -c, -e, --index-url) are not."""
    lines = list(re.finditer(r"[^\r\n]*(?:\r\n|\r|\n|$)", text))
    index = 0
    while index < len(lines) and lines[index].end() > lines[index].start():
        first = lines[index]
        body = first.group().rstrip("\r\n")
        # A trailing backslash continues the line (pip-compile puts --hash options there).
        continuation = []
        while body.endswith("\\") and not PIP_COMMENT.match(body) and index + 1 < len(lines):
            index += 1
            continuation.append(lines[index].group().rstrip("\r\n"))
            if not continuation[-1].endswith("\\"):
                break
        index += 1
        own = PIP_COMMENT.sub("", body.removesuffix("\\"))
        requirement = _OPTION.split(own, maxsplit=1)[0]
        stripped = requirement.strip()
        if not stripped or stripped.startswith("-") or _NOT_A_REQUIREMENT.search(stripped) or _is_local_path(stripped):
            continue
        hashed = "--hash" in own or any("--hash" in line for line in continuation)
        start = first.start() + len(requirement) - len(requirement.lstrip())
        yield Declared(stripped, start, start + len(stripped), None if hashed else start)


# A frozen environment: what `pip freeze` (or a lock tool) wrote of one installed environment,
# every requirement pinned to one release, transitive dependencies included. It records the
# environment an author had, not the ranges the project supports, and it is complete: a package
# it does not list was not installed. A short file of exact pins is a choice made by hand and
# is read as one (`vllm==0.7.0` beside two other pins), so a lock needs this many pins at least.
LOCK_MINIMUM_PINS = 20
_EXACT_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*===?\s*[A-Za-z0-9][A-Za-z0-9.+!_-]*$")


def frozen_environment(items: list[Item]) -> frozenset[str] | None:
    """The names (normalised as PEP 503 does) a frozen environment's requirements file pins, or
    None when the file is not one: every requirement is `name==version` with no extras, markers
    or ranges, and there are at least ``LOCK_MINIMUM_PINS`` of them."""
    names = set()
    for item in items:
        match = _EXACT_PIN.match(item.text) if isinstance(item, Declared) else None
        if match is None:
            return None
        names.add(re.sub(r"[-_.]+", "-", match.group("name")).lower())
    return frozenset(names) if len(names) >= LOCK_MINIMUM_PINS else None


# ---- setup.cfg ------------------------------------------------------------------------------

_SECTION = re.compile(r"\[(?P<name>[^\]]+)\]\s*$")
_KEY = re.compile(r"(?P<key>[^=:\s][^=:]*?)\s*[=:]\s*(?P<value>.*)$")


def in_setup_cfg(text: str) -> Iterator[Item]:
    """``[options] install_requires`` and every list of ``[options.extras_require]``."""
    section = ""
    wanted = False
    values: list[tuple[int, str]] = []  # (offset, line text) of the value being read
    for match in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n|$)", text):
        line = match.group().rstrip("\r\n")
        if match.end() == match.start():
            break
        if line[:1].isspace() or not line.strip():  # a continuation (or blank) line of a value
            if wanted:
                values.append((match.start(), line))
            continue
        if line.lstrip().startswith(("#", ";")):
            continue
        yield from _setup_cfg_value(values)
        values, wanted = [], False
        header = _SECTION.match(line)
        if header:
            section = header.group("name").strip()
            continue
        key = _KEY.match(line)
        if key and (
            (section == "options" and key.group("key").strip() == "install_requires")
            or section == "options.extras_require"
        ):
            wanted = True
            values.append((match.start() + key.start("value"), key.group("value")))
    yield from _setup_cfg_value(values)


def _setup_cfg_value(values: list[tuple[int, str]]) -> Iterator[Item]:
    # setuptools reads a one-line value as ';'-separated items, a dangling list one per line.
    items = [v for v in values[1:] if v[1].strip()]
    if values and values[0][1].strip():
        first_offset, first = values[0]
        if items:
            items.insert(0, values[0])
        else:
            items = []
            cursor = 0
            for part in first.split(";"):
                items.append((first_offset + cursor, part))
                cursor += len(part) + 1
    for offset, item in items:
        item = item.partition(" #")[0]  # setuptools drops trailing comments as pip does
        stripped = item.strip()
        if not stripped or stripped.startswith(("#", ";", "file:")):
            continue
        start = offset + len(item) - len(item.lstrip())
        yield Declared(stripped, start, start + len(stripped), start)


# ---- pyproject.toml -------------------------------------------------------------------------

_TOML_ERROR_AT = re.compile(r"\(at line (?P<line>\d+), column (?P<column>\d+)\)")


def in_pyproject(text: str) -> Iterator[Item]:
    """``[project] dependencies``, ``[project.optional-dependencies]``, ``[dependency-groups]``,
    the PEP 508 lists of ``[tool.uv]`` and the version constraints of ``[tool.poetry]``."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = _TOML_ERROR_AT.search(str(exc))
        start = len(text) if "at end of document" in str(exc) else 0
        if where:
            start = _offset(text, int(where.group("line")), int(where.group("column")) - 1)
        yield Unreadable(f"invalid TOML: {exc}", start)
        return
    try:
        strings = TomlStrings(text).scan()
    except (AttributeError, IndexError):  # TOML the scan does not know: fall back below
        strings = []
    yield from _in_poetry(document, strings)
    found = [s for s in strings if s.in_array and _is_dependency_list(s.path)]
    # The scan reads only what it needs of TOML; tomllib is the judge of what the lists hold.
    expected = {path: [v for v in values if isinstance(v, str)] for path, values in _dependency_lists(document)}
    scanned: dict[tuple[str, ...], list[str]] = {path: [] for path in expected}
    for string in found:
        scanned.setdefault(string.path, []).append(string.value)
    if scanned != expected:
        for values in expected.values():  # positions unknown: report at the top, offer no fix
            for value in values:
                yield Declared(value, 0, 0, None)
        return
    for string in found:
        yield Declared(string.value, string.start, string.end, string.content_offset)


def _is_dependency_list(path: tuple[str, ...]) -> bool:
    return (
        path == ("project", "dependencies")
        or (len(path) == 3 and path[:2] == ("project", "optional-dependencies"))
        or (len(path) == 2 and path[0] == "dependency-groups")
        or (len(path) == 3 and path[:2] == ("tool", "uv") and path[2] in _UV_LISTS)
    )


# [tool.uv] keys that hold PEP 508 requirement lists.
_UV_LISTS = ("dev-dependencies", "constraint-dependencies", "override-dependencies")


def _dependency_lists(document: dict) -> Iterator[tuple[tuple[str, ...], list]]:
    project = document.get("project", {})
    if isinstance(project, dict):
        if isinstance(project.get("dependencies"), list):
            yield ("project", "dependencies"), project["dependencies"]
        extras = project.get("optional-dependencies", {})
        for name, values in extras.items() if isinstance(extras, dict) else ():
            if isinstance(values, list):
                yield ("project", "optional-dependencies", name), values
    groups = document.get("dependency-groups", {})
    for name, values in groups.items() if isinstance(groups, dict) else ():
        if isinstance(values, list):
            yield ("dependency-groups", name), values
    uv = _table(document, "tool", "uv")
    for key in _UV_LISTS:
        if isinstance(uv.get(key), list):
            yield ("tool", "uv", key), uv[key]


def _table(document: dict, *keys: str) -> dict:
    for key in keys:
        document = document.get(key) if isinstance(document, dict) else None
    return document if isinstance(document, dict) else {}


# ---- [tool.poetry]: `name = "constraint"` tables in Poetry's own syntax ----------------------


def _in_poetry(document: dict, strings: list[TomlString]) -> Iterator[Item]:
    """Each Poetry dependency as the PEP 508 requirement it means, reported at its constraint.

    Poetry's ``^`` and ``~`` have no PEP 440 spelling in the file, so these get no fix: the
    requirement text is a translation, not the file's own characters.
    """
    poetry = _table(document, "tool", "poetry")
    tables = [(("dependencies",), poetry.get("dependencies")), (("dev-dependencies",), poetry.get("dev-dependencies"))]
    for group, body in _table(poetry, "group").items():
        tables.append((("group", group, "dependencies"), _table(body, "dependencies")))
    at = {s.path: s for s in strings if not s.in_array}
    for where, table in tables:
        for name, value in table.items() if isinstance(table, dict) else ():
            key = ("tool", "poetry", *where, name)
            if isinstance(value, dict):
                value, key = value.get("version"), (*key, "version")
            if name.lower() == "python" or not isinstance(value, str):
                continue  # the interpreter, a path, a git source, or several constraints with markers
            specifier = poetry_specifier(value)
            if specifier is None:
                continue
            literal = at.get(key)
            start, end = (literal.start, literal.end) if literal is not None else (0, 0)
            yield Declared(f"{name}{specifier}", start, end, None)


_POETRY_PART = re.compile(r"(?P<op>\^|~=|~|>=|<=|!=|==|>|<|=)?\s*(?P<version>[0-9][0-9A-Za-z.*+!-]*|\*)$")


def poetry_specifier(constraint: str) -> str | None:
    """A Poetry version constraint as a PEP 440 specifier (``^0.6`` is ``>=0.6,<0.7``); None when
    it is not one this reads (``||`` alternatives)."""
    if "||" in constraint or "|" in constraint:
        return None
    parts = [p for p in re.split(r"\s*,\s*|\s+(?=[<>=!~^0-9])", constraint.strip()) if p]
    out: list[str] = []
    for part in parts:
        match = _POETRY_PART.match(part)
        if match is None:
            return None
        op, version = match.group("op") or "", match.group("version")
        if version == "*":
            continue
        release = [int(x) for x in re.findall(r"\d+", version.split("-")[0].split("+")[0])[:3]]
        if op == "^":
            first = next((i for i, x in enumerate(release) if x), len(release) - 1)
            upper = release[:first] + [release[first] + 1]
            out += [f">={version}", f"<{'.'.join(map(str, upper))}"]
        elif op == "~":
            upper = [release[0] + 1] if len(release) == 1 else [release[0], release[1] + 1]
            out += [f">={version}", f"<{'.'.join(map(str, upper))}"]
        elif op in ("", "="):
            out.append(f"=={version}")
        else:
            out.append(f"{op}{version}")
    return ",".join(out)


def _offset(text: str, line: int, column: int) -> int:
    starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    return min(starts[min(line, len(starts)) - 1] + column, len(text))


@dataclass(frozen=True)
class TomlString:
    path: tuple[str, ...]  # the key it is the value of (array elements share their array's key)
    value: str
    start: int  # the literal, quotes included
    end: int
    in_array: bool
    content_offset: int | None  # where ``value`` stands verbatim, when it does


_STRING_LITERALS = (
    ('"""', re.compile(r'"""(?:\\.|[^\\"]|"(?!""))*""""{0,2}', re.S)),
    ("'''", re.compile(r"'''(?:[^']|'(?!''))*''''{0,2}", re.S)),
    ('"', re.compile(r'"(?:\\.|[^"\\\r\n])*"')),
    ("'", re.compile(r"'[^'\r\n]*'")),
)
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR = re.compile(r"[^\s,\]}#]+(?: [0-9][^\s,\]}#]*)?")  # numbers, booleans, dates ('1979-05-27 07:32:00')
_SPACE = re.compile(r"[ \t]*")
_SPACE_AND_LINES = re.compile(r"(?:[ \t\r\n]|#[^\r\n]*)*")


class TomlStrings:
    """The string literals of a TOML document that tomllib has already accepted, with offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[TomlString] = []

    def scan(self) -> list[TomlString]:
        text, pos, table = self.text, 0, ()
        while True:
            pos = _SPACE_AND_LINES.match(text, pos).end()
            if pos >= len(text):
                return self.found
            if text.startswith("[[", pos) or text[pos] == "[":
                double = text.startswith("[[", pos)
                table, pos = self._key(pos + (2 if double else 1))
                pos = _SPACE.match(text, pos).end() + (2 if double else 1)
            else:
                key, pos = self._key(pos)
                pos = self._value(pos + 1, table + key, in_array=False)

    def _key(self, pos: int) -> tuple[tuple[str, ...], int]:
        """A dotted key; returns it and the offset of what follows (``=`` or ``]``)."""
        parts: list[str] = []
        while True:
            pos = _SPACE.match(self.text, pos).end()
            literal = self._string_at(pos)
            if literal is not None:
                parts.append(_decode(literal.group()))
                pos = literal.end()
            else:
                bare = _BARE_KEY.match(self.text, pos)
                parts.append(bare.group())
                pos = bare.end()
            pos = _SPACE.match(self.text, pos).end()
            if not self.text.startswith(".", pos):
                return tuple(parts), pos
            pos += 1

    def _string_at(self, pos: int) -> re.Match | None:
        for opening, pattern in _STRING_LITERALS:
            if self.text.startswith(opening, pos):
                return pattern.match(self.text, pos)
        return None

    def _value(self, pos: int, path: tuple[str, ...], *, in_array: bool) -> int:
        text = self.text
        pos = _SPACE.match(text, pos).end()
        literal = self._string_at(pos)
        if literal is not None:
            raw = literal.group()
            quote = next(opening for opening, _ in _STRING_LITERALS if raw.startswith(opening))
            value = _decode(raw)
            verbatim = raw[len(quote) : len(raw) - len(quote)] == value
            content_offset = pos + len(quote) if verbatim else None
            self.found.append(TomlString(path, value, literal.start(), literal.end(), in_array, content_offset))
            return literal.end()
        if text[pos] in "[{":
            closing = "]" if text[pos] == "[" else "}"
            pos += 1
            while True:
                pos = _SPACE_AND_LINES.match(text, pos).end()
                if text[pos] == closing:
                    return pos + 1
                if closing == "]":
                    pos = self._value(pos, path, in_array=True)
                else:
                    key, pos = self._key(pos)
                    pos = self._value(pos + 1, path + key, in_array=False)
                pos = _SPACE_AND_LINES.match(text, pos).end()
                if text[pos] == ",":
                    pos += 1
        return _SCALAR.match(text, pos).end()


def _decode(literal: str) -> str:
    return tomllib.loads(f"v = {literal}")["v"]
