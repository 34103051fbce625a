"""``trllint server``: the Language Server Protocol over standard input and output, on pygls.

Findings are published on open, change and save, for Python files and for notebooks (LSP 3.17
notebook sync: each finding on its cell's document), with the rule's page as the code's link and
the finding's evidence as related information. Code actions: a finding's fix (a safe one is the
preferred quick fix, an unsafe one says so), a ``# noqa: CODE`` comment for one finding, and
``source.fixAll.trllint``, the safe fixes only, through the engine's fix loop. This module is the
server's state and its handlers; a finding's diagnostic is made in ``diagnostics``, the actions
in ``code_actions``.

The process stays warm: the project index keeps the facts of imported modules by content, an
open module is read from its buffer (``use_unsaved``), and an edit to a module re-lints the open
files whose findings read it. Launch files are read afresh for each batch of lints, and the
configuration when a configuration file is saved or changes on disk. A configuration that selects
no rule (while every rule is preview, the default one) is said once per workspace folder, as the
command line says it, and nothing is published for its files.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from trllint import __version__
from trllint.app import memory
from trllint.app.server.code_actions import FIX_ALL, code_actions
from trllint.app.server.diagnostics import Linted, diagnostic
from trllint.app.server.documents import OpenFile, Part, lint
from trllint.app.server.settings import CONFIG_FILE_NAMES, Settings, SettingsCache, is_config_file
from trllint.rule.registry import available_rules
from trllint.semantic.project.index import MODULES_IN_FOLDER, PROJECT_MODULES, forget_module, use_unsaved

# Files whose change can change a finding without being opened: configurations, the modules a
# file imports, and the launch files (scripts, accelerate and DeepSpeed configs, READMEs).
WATCHED = (*(f"**/{name}" for name in CONFIG_FILE_NAMES), "**/*.py", "**/*.{sh,bash,slurm,sbatch,yaml,yml,json,md}", "**/Makefile")
LAUNCH_SOURCES = "launch-sources:"


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
        codec = self.workspace.position_codec
        diagnostics = [diagnostic(codec, file, part, finding, key) for key, (part, finding) in enumerate(findings)]
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
        """The open files whose findings read the module at ``path``, or which modules its folder
        holds (one created or deleted there)."""
        if path is None or path.suffix not in (".py", ".pyi"):
            return []
        resolved = path.resolve()
        keys = {str(resolved), f"{MODULES_IN_FOLDER}{resolved.parent}"}
        return [uri for uri, linted in self.linted.items() if keys & linted.dependencies or _searched(linted, resolved)]

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        linted = self.current(self.file_uri(params.text_document.uri))
        if linted is None:
            return []
        capabilities = self.client_capabilities.workspace
        versioned = bool(capabilities and capabilities.workspace_edit and capabilities.workspace_edit.document_changes)
        return code_actions(linted, params, self.workspace.position_codec, versioned)

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


def _searched(linted: Linted, path: Path) -> bool:
    """The file's findings read every module of ``path``'s project (``PROJECT_MODULES``): a
    module changed anywhere in it may change them."""
    return any(
        Path(dependency[len(PROJECT_MODULES) :]) in path.parents
        for dependency in linted.dependencies
        if dependency.startswith(PROJECT_MODULES)
    )


def _forget_launch_files() -> None:
    # What the CLI's run does (trllint.app.run): launch files edited since the last lint are read
    # again; only a process that has read them holds them.
    import sys

    launch_files = sys.modules.get("trllint.facts.launch.project")
    if launch_files is not None:
        launch_files.forget_launch_files()


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
