"""``trllint server``: the Language Server Protocol over standard input and output, on pygls.

Findings are published on open, change and save, for Python files and for notebooks (LSP 3.17
notebook sync: each finding on its cell's document), with the rule's page as the code's link and
the finding's evidence as related information. Code actions: a finding's fix (a safe one is the
preferred quick fix, an unsafe one says so), a ``# noqa: CODE`` comment for one finding, and
``source.fixAll.trllint``, the safe fixes only, through the engine's fix loop.

The process stays warm: the project index keeps the facts of imported modules by content, an
open module is read from its buffer (``use_unsaved``), and an edit to a module re-lints the open
files whose findings read it. Launch files are read afresh for each batch of lints, and the
configuration when a configuration file is saved or changes on disk. A configuration that selects
no rule (while every rule is preview, the default one) is said once per workspace folder, as the
command line says it, and nothing is published for its files.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from trllint import __version__
from trllint.app import memory
from trllint.app.server.documents import (
    OpenFile,
    Part,
    add_noqa,
    changed_spans,
    fix_all,
    fix_one,
    lint,
    position_at,
    split_lines,
)
from trllint.app.server.settings import CONFIG_FILE_NAMES, Settings, SettingsCache, is_config_file
from trllint.core.findings import Finding
from trllint.rule.registry import available_rules
from trllint.semantic.project.index import forget_module, use_unsaved

FIX_ALL = "source.fixAll.trllint"
# Files whose change can change a finding without being opened: configurations, the modules a
# file imports, and the launch files (scripts, accelerate and DeepSpeed configs, READMEs).
WATCHED = (*(f"**/{name}" for name in CONFIG_FILE_NAMES), "**/*.py", "**/*.{sh,bash,slurm,sbatch,yaml,yml,json,md}", "**/Makefile")
LAUNCH_SOURCES = "launch-sources:"


@dataclass
class Linted:
    """The last lint of an open file: what it found, for the texts it found it in."""

    file: OpenFile
    settings: Settings
    findings: list[tuple[int, Finding]]  # (part index, finding)
    diagnostics: list[lsp.Diagnostic]  # one per finding, in the same order
    dependencies: set[str] = field(default_factory=set)  # project modules its findings read

    def holds_for(self, file: OpenFile) -> bool:
        return [p.text for p in file.parts] == [p.text for p in self.file.parts]


class TrllintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "trllint",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[
                    lsp.NotebookDocumentFilterWithCells(
                        notebook="jupyter-notebook", cells=[lsp.NotebookCellLanguage(language="python")]
                    )
                ],
                save=True,
            ),
        )
        self.settings = SettingsCache()
        self.linted: dict[str, Linted] = {}  # by the file's URI (a notebook's, not its cells')
        self.published: dict[str, set[str]] = {}  # file URI -> the document URIs given diagnostics
        self._pending: dict[str, None] = {}  # file URIs to lint, in order
        self._flush_scheduled = False
        self._problems_said: set[str] = set()
        self._no_rule_said: set[str] = set()  # the workspace folders told that no rule is selected

    # ---- the open files --------------------------------------------------------------------

    def file_uri(self, uri: str) -> str:
        """The file a document belongs to: a notebook cell's notebook, else itself."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def open_file(self, uri: str) -> OpenFile | None:
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        path = _path_of(uri)
        name = path.name if path is not None else unquote(urlparse(uri).path).rsplit("/", 1)[-1] or "untitled"
        if notebook is not None:
            parts = []
            for cell in notebook.cells:
                document = self.workspace.text_documents.get(unquote(cell.document))
                parts.append(
                    Part(
                        cell.document,
                        document.source if document is not None else "",
                        document.version if document is not None else None,
                        is_code=cell.kind == lsp.NotebookCellKind.Code,
                        language=(document.language_id if document is not None else None) or "python",
                    )
                )
            filename = name if name.endswith(".ipynb") else name + ".ipynb"
            metadata: dict[str, Any] = notebook.metadata if isinstance(notebook.metadata, dict) else {}
            return OpenFile(uri, path, filename, parts, is_notebook=True, metadata=metadata)
        document = self.workspace.text_documents.get(unquote(uri))
        if document is None:
            return None
        filename = name
        if document.language_id == "python" and not name.endswith((".py", ".pyi")):
            filename = name + ".py"  # a Python buffer with another name (a script without a suffix)
        return OpenFile(uri, path, filename, [Part(uri, document.source, document.version)])

    def settings_for(self, file: OpenFile) -> Settings:
        if file.path is not None:
            folder = file.path.parent
        else:
            root = self.workspace.root_path
            folder = Path(root) if root else Path.cwd()
        settings = self.settings.for_folder(folder)
        if settings.problem is not None and settings.problem not in self._problems_said:
            self._problems_said.add(settings.problem)
            self.window_show_message(
                lsp.ShowMessageParams(lsp.MessageType.Warning, f"trllint: {settings.problem}; linting with the default settings")
            )
        if settings.no_rule is not None:
            # Said once per workspace folder, not once per file opened; again after a configuration changes.
            workspace_folder = self.workspace_folder_of(file.path, settings)
            if workspace_folder not in self._no_rule_said:
                self._no_rule_said.add(workspace_folder)
                self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, f"trllint: {settings.no_rule}"))
        return settings

    def workspace_folder_of(self, path: Path | None, settings: Settings) -> str:
        """The workspace folder a file is in (the innermost); else the workspace's root, else the
        folder its configuration was read for."""
        if path is not None:
            containing = [
                folder
                for folder in (_path_of(f.uri) for f in self.workspace.folders.values())
                if folder is not None and path.resolve().is_relative_to(folder.resolve())
            ]
            if containing:
                return str(max(containing, key=lambda folder: len(folder.parts)))
        return self.workspace.root_path or str(settings.config.root)

    def forget_settings(self) -> None:
        """A configuration file changed: each folder's settings are read again, and a folder that
        still selects no rule is told again."""
        self.settings.forget()
        self._no_rule_said.clear()

    # ---- linting ---------------------------------------------------------------------------

    def schedule(self, *uris: str) -> None:
        """Lint these files soon: changes that arrive together are linted once, at their last text."""
        for uri in uris:
            self._pending[uri] = None
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def schedule_all(self) -> None:
        self.schedule(*self.linted)

    def flush(self) -> None:
        self._flush_scheduled = False
        uris = list(self._pending)
        self._pending.clear()
        _forget_launch_files()
        for uri in uris:
            self.lint_now(uri)
        memory.after_file()

    def lint_now(self, uri: str) -> Linted | None:
        file = self.open_file(uri)
        if file is None:
            return None
        settings = self.settings_for(file)
        if settings.no_rule is None and settings.reads(file.path, file.filename):
            result = lint(file, settings.ruleset)
            findings = [(file.part_of(f), f) for f in result.findings]
            dependencies = {path for path in result.dependencies if not path.startswith(LAUNCH_SOURCES)}
        else:
            findings, dependencies = [], set()
        diagnostics = [self.diagnostic(file, part, finding, key) for key, (part, finding) in enumerate(findings)]
        linted = Linted(file, settings, findings, diagnostics, dependencies)
        self.linted[uri] = linted
        self.publish(linted)
        return linted

    def current(self, uri: str) -> Linted | None:
        """The lint of the file as it is now (linted again if it changed since)."""
        linted = self.linted.get(uri)
        file = self.open_file(uri)
        if file is None:
            return None
        if linted is None or not linted.holds_for(file):
            _forget_launch_files()
            linted = self.lint_now(uri)
        return linted

    def publish(self, linted: Linted) -> None:
        by_document: dict[str, list[lsp.Diagnostic]] = {part.uri: [] for part in linted.file.parts}
        for (part, _), diagnostic in zip(linted.findings, linted.diagnostics):
            by_document[linted.file.parts[part].uri].append(diagnostic)
        gone = self.published.get(linted.file.uri, set()) - set(by_document)
        for uri in gone:  # a notebook's deleted cell
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))
        versions = {part.uri: part.version for part in linted.file.parts}
        for uri, diagnostics in by_document.items():
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, diagnostics, versions.get(uri)))
        self.published[linted.file.uri] = set(by_document)

    def forget(self, uri: str) -> None:
        """The file was closed: its diagnostics go, and what imports it reads the disk again."""
        self.linted.pop(uri, None)
        for document in self.published.pop(uri, set()):
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(document, []))

    def dependents(self, path: Path | None) -> list[str]:
        """The open files whose findings read the module at ``path``."""
        if path is None or path.suffix not in (".py", ".pyi"):
            return []
        key = str(path.resolve())
        return [uri for uri, linted in self.linted.items() if key in linted.dependencies]

    # ---- diagnostics -----------------------------------------------------------------------

    def position(self, lines: list[str], line: int, character: int) -> lsp.Position:
        """A 0-based (line, code point) as the client counts (UTF-16 unless it chose otherwise)."""
        if line >= len(lines):
            return lsp.Position(len(lines), 0)
        text = lines[line].rstrip("\r\n")
        return lsp.Position(line, self.workspace.position_codec.client_num_units(text[: max(character, 0)]))

    def range_of(self, text: str, start: tuple[int, int], end: tuple[int, int]) -> lsp.Range:
        lines = split_lines(text)
        first = self.position(lines, *start)
        last = self.position(lines, *end)
        if (last.line, last.character) < (first.line, first.character):
            last = first
        return lsp.Range(first, last)

    def diagnostic(self, file: OpenFile, part: int, finding: Finding, key: int) -> lsp.Diagnostic:
        text = file.parts[part].text
        where = self.range_of(text, (finding.line - 1, finding.column - 1), (finding.end_line - 1, finding.end_column - 1))
        info = available_rules().get(finding.code)
        page = lsp.CodeDescription(info.readme.resolve().as_uri()) if info is not None and info.readme.is_file() else None
        message = finding.message
        if finding.fix is not None:
            message += " [safe fix]" if finding.fix.applicability == "safe" else " [unsafe fix]"
        return lsp.Diagnostic(
            range=where,
            message=message,
            severity=lsp.DiagnosticSeverity.Error if finding.internal else lsp.DiagnosticSeverity.Warning,
            code=finding.code,
            code_description=page,
            source="trllint",
            related_information=self.related(file, finding) or None,
            data={"key": key},
        )

    def related(self, file: OpenFile, finding: Finding) -> list[lsp.DiagnosticRelatedInformation]:
        related = []
        for evidence in finding.evidence:
            if evidence.path == file.display or evidence.cell is not None:
                part = evidence.cell - 1 if file.is_notebook and evidence.cell else 0
                uri = file.parts[min(part, len(file.parts) - 1)].uri
            else:
                path = Path(evidence.path)
                uri = (path if path.is_absolute() else Path.cwd() / path).as_uri()
            line = max(evidence.line - 1, 0)
            where = lsp.Range(lsp.Position(line, 0), lsp.Position(line + 1, 0))
            related.append(lsp.DiagnosticRelatedInformation(lsp.Location(uri, where), evidence.message))
        return related

    # ---- code actions ----------------------------------------------------------------------

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = self.file_uri(params.text_document.uri)
        linted = self.current(uri)
        if linted is None:
            return []
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
                                edit=self.workspace_edit(file, texts),
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
                                edit=self.workspace_edit(file, texts),
                            )
                        )
        if wanted(FIX_ALL) and any(f.fix is not None and f.fix.applicability == "safe" for _, f in linted.findings):
            texts = fix_all(file, ruleset)
            if texts is not None:
                actions.append(lsp.CodeAction("trllint: fix all safe fixes", kind=FIX_ALL, edit=self.workspace_edit(file, texts)))
        return actions

    def workspace_edit(self, file: OpenFile, texts: list[str]) -> lsp.WorkspaceEdit:
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
                            lsp.Range(self.position(lines, *position_at(lines, start)), self.position(lines, *position_at(lines, end))),
                            content,
                        )
                        for start, end, content in spans
                    ],
                )
            )
        capabilities = self.client_capabilities.workspace
        versioned = bool(capabilities and capabilities.workspace_edit and capabilities.workspace_edit.document_changes)
        if versioned:
            return lsp.WorkspaceEdit(
                document_changes=[
                    lsp.TextDocumentEdit(lsp.OptionalVersionedTextDocumentIdentifier(part.uri, part.version), list(changes))
                    for part, changes in edits
                ]
            )
        return lsp.WorkspaceEdit(changes={part.uri: list(changes) for part, changes in edits})

    # ---- files that changed ----------------------------------------------------------------

    def buffer_changed(self, uri: str) -> None:
        """A text document was opened or edited: lint it, and the open files that import it."""
        path = _path_of(uri)
        file = self.open_file(uri)
        if path is not None and file is not None and path.suffix in (".py", ".pyi"):
            use_unsaved(path, file.data())
        self.schedule(uri, *self.dependents(path))

    def watched_files_changed(self, params: lsp.DidChangeWatchedFilesParams) -> None:
        everything = False
        modules: list[str] = []
        for change in params.changes:
            path = _path_of(change.uri)
            if path is None:
                continue
            if is_config_file(path):
                self.forget_settings()
                everything = True
            elif path.suffix in (".py", ".pyi"):
                forget_module(path)
                modules += self.dependents(path)
            else:
                everything = True  # a launch file: read again by the next lint
        if everything:
            self.schedule_all()
        elif modules:
            self.schedule(*modules)

    def register_watchers(self) -> None:
        capabilities = self.client_capabilities.workspace
        watching = capabilities and capabilities.did_change_watched_files
        if not (watching and watching.dynamic_registration):
            return
        options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[lsp.FileSystemWatcher(glob_pattern=g) for g in WATCHED])
        self.client_register_capability(
            lsp.RegistrationParams([lsp.Registration("trllint-watched-files", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)])
        )


def _path_of(uri: str) -> Path | None:
    if urlparse(uri).scheme != "file":
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def _forget_launch_files() -> None:
    # What the CLI's run does (trllint.app.run): launch files edited since the last lint are read
    # again; only a process that has read them holds them.
    import sys

    launch_files = sys.modules.get("trllint.facts.launch.project")
    if launch_files is not None:
        launch_files.forget_launch_files()


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


def build_server() -> TrllintServer:
    server = TrllintServer()

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: TrllintServer, params: lsp.InitializedParams) -> None:
        ls.register_watchers()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TrllintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.buffer_changed(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TrllintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.buffer_changed(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(ls: TrllintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = _path_of(params.text_document.uri)
        if path is not None and is_config_file(path):
            ls.forget_settings()
            ls.schedule_all()
        else:
            ls.schedule(params.text_document.uri, *ls.dependents(path))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TrllintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = _path_of(uri)
        ls.forget(uri)
        if path is not None and path.suffix in (".py", ".pyi"):
            use_unsaved(path, None)
        dependents = ls.dependents(path)
        if dependents:
            ls.schedule(*dependents)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: TrllintServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: TrllintServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: TrllintServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: TrllintServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        ls.forget(params.notebook_document.uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: TrllintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        ls.watched_files_changed(params)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll, FIX_ALL]),
    )
    def code_action(ls: TrllintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return ls.code_actions(params)

    return server


def serve() -> None:
    server = build_server()
    available_rules()  # the rules loaded before the collector freezes what start-up built
    # A process that parses file after file, as a run of many files does (trllint.app.memory):
    # start-up frozen, collections rarer, the young generations collected after each batch.
    memory.prepare()
    server.start_io()
