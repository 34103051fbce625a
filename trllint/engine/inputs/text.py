"""A text file the rules read as it is (``setup.cfg``, say): the base of the Python, TOML and
requirements kinds, which differ in how they decode and what "still sound" means after a fix."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePath

from trllint.core.findings import Finding
from trllint.core.source import SourceDecodeError, SourceFile
from trllint.core.target_version import TargetVersion
from trllint.engine.inputs.kind import EncodeError, Unreadable


def decode_text(data: bytes, display: str, *, is_python: bool) -> SourceFile:
    """The file's text; raises :class:`Unreadable` when the bytes are not text in its encoding."""
    try:
        return SourceFile.from_bytes(data, display, is_python=is_python)
    except SourceDecodeError as exc:
        raise Unreadable(f"cannot decode file: {exc}") from None


@dataclass
class TextDocument:
    """A file whose source is its whole text: findings stand where they are."""

    source: SourceFile
    linted_as: str
    unlinted: list[Finding] = field(default_factory=list)  # the whole text is linted
    target: TargetVersion | None = None  # the run's

    def map_back(self, finding: Finding) -> Finding:
        return finding

    def encode(self, text: str) -> bytes:
        try:
            return self.source.to_bytes(text)
        except UnicodeEncodeError as exc:
            # A fix brought in a character the file's declared encoding cannot hold (latin-1, say).
            raise EncodeError(
                f"the fixed text cannot be written in the file's encoding {self.source.encoding} ({exc.reason}); not written"
            ) from None

    def diff_texts(self, new_text: str, new_bytes: bytes) -> tuple[str, str]:
        return self.source.text, new_text


class TextKind:
    name = "text"
    is_python = False
    always_read = False
    size_factor = 1
    includes_files = False

    def taken_by_walk(self, path: PurePath) -> bool:
        return True

    def decode(
        self, data: bytes, display: str, filename: str, path: Path | None = None, target: TargetVersion | None = None
    ) -> TextDocument:
        source = decode_text(data, display, is_python=self.is_python)
        source.path = path
        return TextDocument(source, filename)

    def validate(self, before: SourceFile, after_text: str) -> str | None:
        return None

    def __repr__(self) -> str:
        return f"<input kind {self.name}>"


TEXT = TextKind()
