"""Code actions: a finding's fix (a safe one is the preferred quick fix, an unsafe one says so and
why), a ``# noqa: CODE`` comment for one finding, and ``source.fixAll.trllint``, the safe fixes
only, through the engine's fix loop; each as a workspace edit of the lines that change."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.workspace import PositionCodec

from trllint.app.server.diagnostics import Linted, position
from trllint.app.server.documents import OpenFile, Part, add_noqa, changed_spans, fix_all, fix_one, position_at, split_lines
from trllint.core.findings import Finding

FIX_ALL = "source.fixAll.trllint"


def code_actions(linted: Linted, params: lsp.CodeActionParams, codec: PositionCodec, versioned: bool) -> list[lsp.CodeAction]:
    """The actions for the range asked about: each finding's fix and a ``# noqa`` comment for it,
    and the safe fixes of the whole file; ``versioned``: the client takes edits of a document's
    version."""
    file, ruleset = linted.file, linted.settings.ruleset
    only = params.context.only

    def wanted(kind: str) -> bool:
        return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)

    actions: list[lsp.CodeAction] = []
    if wanted(lsp.CodeActionKind.QuickFix):
        for (part, finding), diagnostic in zip(linted.findings, linted.diagnostics):
            if file.parts[part].uri != params.text_document.uri or not _overlaps(diagnostic.range, params.range):
                continue
            if finding.fix is not None:
                texts = fix_one(file, ruleset, finding.fix)
                if texts is not None:
                    safe = finding.fix.applicability == "safe"
                    title = f"Fix {finding.code}: {_describe(file, finding)}"
                    if not safe:
                        title = f"Apply unsafe fix for {finding.code}: {_describe(file, finding)}"
                        if finding.fix.reason:
                            title += f" (unsafe: {finding.fix.reason})"
                    actions.append(
                        lsp.CodeAction(
                            title,
                            kind=lsp.CodeActionKind.QuickFix,
                            diagnostics=[diagnostic],
                            is_preferred=safe,
                            edit=workspace_edit(codec, versioned, file, texts),
                        )
                    )
            if not finding.internal:
                texts = add_noqa(file, ruleset, finding)
                if texts is not None:
                    actions.append(
                        lsp.CodeAction(
                            f"Disable {finding.code} for this line (# noqa: {finding.code})",
                            kind=lsp.CodeActionKind.QuickFix,
                            diagnostics=[diagnostic],
                            edit=workspace_edit(codec, versioned, file, texts),
                        )
                    )
    if wanted(FIX_ALL) and any(f.fix is not None and f.fix.applicability == "safe" for _, f in linted.findings):
        texts = fix_all(file, ruleset)
        if texts is not None:
            actions.append(lsp.CodeAction("trllint: fix all safe fixes", kind=FIX_ALL, edit=workspace_edit(codec, versioned, file, texts)))
    return actions

def workspace_edit(codec: PositionCodec, versioned: bool, file: OpenFile, texts: list[str]) -> lsp.WorkspaceEdit:
    edits: list[tuple[Part, list[lsp.TextEdit]]] = []
    for part, new in zip(file.parts, texts):
        spans = changed_spans(part.text, new)
        if not spans:
            continue
        lines = split_lines(part.text)
        edits.append(
            (
                part,
                [
                    lsp.TextEdit(
                        lsp.Range(position(codec, lines, *position_at(lines, start)), position(codec, lines, *position_at(lines, end))),
                        content,
                    )
                    for start, end, content in spans
                ],
            )
        )
    if versioned:
        return lsp.WorkspaceEdit(
            document_changes=[
                lsp.TextDocumentEdit(lsp.OptionalVersionedTextDocumentIdentifier(part.uri, part.version), list(changes))
                for part, changes in edits
            ]
        )
    return lsp.WorkspaceEdit(changes={part.uri: list(changes) for part, changes in edits})


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def _describe(file: OpenFile, finding: Finding) -> str:
    """What a fix does, in a few words: ``replace `model` with `accelerator.unwrap_model(model)```."""
    assert finding.fix is not None
    edits = finding.fix.edits
    if len(edits) == 1 and "\n" not in edits[0].content and len(edits[0].content) <= 60:
        edit = edits[0]
        if edit.start_position[0] == edit.end_position[0] and file.parts:
            part = file.parts[file.part_of(finding)].text
            lines = split_lines(part)
            row = edit.start_position[0] - 1
            if 0 <= row < len(lines):
                old = lines[row][edit.start_position[1] - 1 : edit.end_position[1] - 1]
                if old and edit.content:
                    return f"replace `{old}` with `{edit.content}`"
                if edit.content:
                    return f"insert `{edit.content}`"
    return f"edit {len(edits)} place{'s' if len(edits) != 1 else ''}"
