"""`trllint server` driven over stdio by pytest-lsp, as an editor drives it: open, change, code
actions, fix-all, a notebook cell, a configuration that changes, and a module that an open file
imports edited in another buffer."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

import pytest_lsp  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402


pytestmark = pytest.mark.asyncio

REPO = Path(__file__).resolve().parents[1]
TRL001_CASES = REPO / "rules" / "trl001_wrapped_model_attribute" / "cases"
TRL006_CASES = REPO / "rules" / "trl006_collective_under_rank_guard" / "cases"
# Every rule is preview until it meets the graduation bar: the workspace of each test
# turns preview on, as a project using the editor would; a test of another configuration writes its own.
PREVIEW_ON = "[tool.trllint]\npreview = true\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "trllint", "server"]))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    registrations: list[lsp.Registration] = []
    lsp_client.registrations = registrations  # type: ignore[attr-defined]

    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    (tmp_path / "pyproject.toml").write_text(PREVIEW_ON)
    capabilities = client_capabilities("visual-studio-code")
    capabilities.notebook_document = lsp.NotebookDocumentClientCapabilities(
        synchronization=lsp.NotebookDocumentSyncClientCapabilities()
    )
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=capabilities,
            root_uri=tmp_path.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(tmp_path.as_uri(), "project")],
        )
    )
    yield
    await lsp_client.shutdown_session()


# ---- helpers ------------------------------------------------------------------------------


async def diagnostics(client: LanguageClient, uri: str, until=lambda found: True, timeout: float = 60):
    """The diagnostics last published for ``uri`` once ``until`` holds of them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        found = client.diagnostics.get(uri)
        if found is not None and until(found):
            return list(found)
        if loop.time() > deadline:
            raise AssertionError(f"no diagnostics for {uri} that hold: last {found!r}")
        await asyncio.sleep(0.02)


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", version, path.read_text() if text is None else text))
    )
    return uri


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text)],
        )
    )


def offset(text: str, position: lsp.Position) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: position.line]) + position.character


def apply_edits(text: str, edits) -> str:
    """What the editor does with a TextEdit list (ASCII text: UTF-16 units are characters)."""
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(text, edit.range.start)] + edit.new_text + text[offset(text, edit.range.end) :]
    return text


def edits_for(action: lsp.CodeAction, uri: str):
    assert action.edit is not None and action.edit.document_changes is not None
    return [edit for change in action.edit.document_changes if change.text_document.uri == uri for edit in change.edits]


async def code_actions(client: LanguageClient, uri: str, where: lsp.Range, only=None, diagnostics_=()):
    return await client.text_document_code_action_async(
        lsp.CodeActionParams(lsp.TextDocumentIdentifier(uri), where, lsp.CodeActionContext(list(diagnostics_), only=only))
    ) or []


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


# ---- open and change ----------------------------------------------------------------------


async def test_open_publishes_the_finding_with_its_rule_page_and_evidence(client: LanguageClient, tmp_path: Path):
    project = tmp_path / "sft"
    shutil.copytree(TRL001_CASES / "bad_accelerate_multi_gpu", project)
    (project / "train.fixed.py").unlink()
    text = (project / "train.py").read_text()
    uri = open_file(client, project / "train.py")
    found = await diagnostics(client, uri)
    assert [(d.code, d.range.start.line) for d in found] == [("TRL001", line_of(text, "vocab = model.config"))]
    diagnostic = found[0]
    assert diagnostic.source == "trllint" and diagnostic.severity == lsp.DiagnosticSeverity.Warning
    # the range is `model.config`, in the line as the editor counts it
    line = text.splitlines()[diagnostic.range.start.line]
    assert line[diagnostic.range.start.character : diagnostic.range.end.character] == "model.config"
    page = diagnostic.code_description.href
    assert page.startswith("file://") and page.endswith("/trl001_wrapped_model_attribute/README.md")
    assert Path(page[len("file://") :]).is_file()
    # the launch command that makes it DDP, from the Makefile beside it
    (evidence,) = diagnostic.related_information
    assert evidence.location.uri == (project / "Makefile").resolve().as_uri()
    assert evidence.location.range.start.line == 1 and "--multi_gpu" in evidence.message
    # the other reads of the model in that file stand on an unwrapped model or the accelerator: not flagged
    assert not any(d.range.start.line == line_of(text, "accelerator.prepare(") for d in found)


def without_trl008(tmp_path: Path) -> None:
    # TRL008 (preview) flags the save_pretrained of an unwrapped model too: no launch of these
    # cases says whether ZeRO-3 runs. These tests follow TRL001's findings and fixes.
    (tmp_path / "pyproject.toml").write_text(PREVIEW_ON + 'ignore = ["TRL008"]\n')


async def test_a_change_is_linted_at_its_new_text(client: LanguageClient, tmp_path: Path):
    without_trl008(tmp_path)
    path = tmp_path / "train.py"
    fixed = (TRL001_CASES / "bad_accelerate_loop.fixed.py").read_text()
    path.write_text(fixed)
    uri = open_file(client, path)
    assert await diagnostics(client, uri) == []
    broken = (TRL001_CASES / "bad_accelerate_loop.py").read_text()
    replace_all(client, uri, broken, 2)
    found = await diagnostics(client, uri)
    assert [d.range.start.line for d in found] == [line_of(broken, "model.config.vocab_size"), line_of(broken, "model.save_pretrained")]
    # an incremental change: the unwrap put back by hand on the first line
    first = found[0].range
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [lsp.TextDocumentContentChangePartial(lsp.Range(first.start, lsp.Position(first.start.line, first.start.character + 5)), "accelerator.unwrap_model(model)")],
        )
    )
    found = await diagnostics(client, uri)
    assert [d.range.start.line for d in found] == [line_of(broken, "model.save_pretrained")]


async def test_a_file_that_does_not_parse_is_one_error_not_a_crash(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "broken.py"
    path.write_text("def train(:\n    pass\n")
    uri = open_file(client, path)
    (found,) = await diagnostics(client, uri)
    assert found.code == "TRL000" and found.severity == lsp.DiagnosticSeverity.Error
    assert not client.messages  # no "Error in server" message


# ---- code actions -------------------------------------------------------------------------


async def test_quick_fix_of_a_safe_fix_is_preferred_and_removes_the_finding(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    text = (TRL001_CASES / "bad_accelerate_loop.py").read_text()
    path.write_text(text)
    uri = open_file(client, path)
    found = await diagnostics(client, uri, lambda d: len(d) == 2)
    actions = await code_actions(client, uri, found[0].range, diagnostics_=found[:1])
    fixes = [a for a in actions if a.title.startswith("Fix TRL001")]
    (fix,) = fixes
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.title == "Fix TRL001: replace `model` with `accelerator.unwrap_model(model)`"
    new = apply_edits(text, edits_for(fix, uri))
    assert "accelerator.unwrap_model(model).config.vocab_size" in new
    replace_all(client, uri, new, 2)
    after = await diagnostics(client, uri)
    assert [d.range.start.line for d in after] == [line_of(text, "model.save_pretrained")]


async def test_noqa_action_silences_one_finding(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "train.py"
    text = (TRL001_CASES / "bad_accelerate_loop.py").read_text()
    path.write_text(text)
    uri = open_file(client, path)
    found = await diagnostics(client, uri, lambda d: len(d) == 2)
    actions = await code_actions(client, uri, found[1].range, only=[lsp.CodeActionKind.QuickFix])
    (noqa,) = [a for a in actions if "noqa" in a.title]
    assert noqa.title == "Disable TRL001 for this line (# noqa: TRL001)" and not noqa.is_preferred
    new = apply_edits(text, edits_for(noqa, uri))
    assert new.splitlines()[found[1].range.start.line].endswith("  # noqa: TRL001")
    assert sum(a != b for a, b in zip(text.splitlines(), new.splitlines())) == 1
    replace_all(client, uri, new, 2)
    after = await diagnostics(client, uri)
    assert [d.range.start.line for d in after] == [found[0].range.start.line]


async def test_an_unsafe_fix_is_offered_by_name_never_preferred(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "trainer.py"
    text = (TRL001_CASES / "bad_accelerator_that_may_be_none.py").read_text()
    path.write_text(text)
    uri = open_file(client, path)
    found = (await diagnostics(client, uri))[0]
    actions = await code_actions(client, uri, found.range)
    (unsafe,) = [a for a in actions if "TRL001" in a.title and "noqa" not in a.title]
    assert unsafe.title.startswith("Apply unsafe fix for TRL001") and "may be None" in unsafe.title
    assert not unsafe.is_preferred
    # fix-all applies safe fixes only: nothing for it here
    assert await code_actions(client, uri, found.range, only=["source.fixAll"]) == []


async def test_fix_all_applies_the_safe_fixes_and_leaves_the_unsafe_ones(client: LanguageClient, tmp_path: Path):
    without_trl008(tmp_path)
    path = tmp_path / "train.py"
    loop = (TRL001_CASES / "bad_accelerate_loop.py").read_text()
    trainer = (TRL001_CASES / "bad_accelerator_that_may_be_none.py").read_text()
    text = loop + "\n\n" + trainer
    path.write_text(text)
    uri = open_file(client, path)
    found = await diagnostics(client, uri, lambda d: len(d) == 4)
    start = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    (fix_all,) = await code_actions(client, uri, start, only=["source.fixAll.trllint"])
    assert fix_all.kind == "source.fixAll.trllint"
    assert (await code_actions(client, uri, start, only=[lsp.CodeActionKind.SourceFixAll]))[0].title == fix_all.title
    new = apply_edits(text, edits_for(fix_all, uri))
    assert new.count("accelerator.unwrap_model(model)") == 2
    assert "self.accelerator.unwrap_model(self.model)" not in new  # the unsafe ones wait for the user
    replace_all(client, uri, new, 2)
    left = await diagnostics(client, uri)
    assert [d.message.endswith("[unsafe fix]") for d in left] == [True, True]
    assert [d.range.start.line for d in left] == [d.range.start.line for d in found[2:]]


# ---- notebooks ----------------------------------------------------------------------------


async def test_a_notebook_finding_lands_in_its_cell_and_its_fix_edits_that_cell(client: LanguageClient, tmp_path: Path):
    notebook = tmp_path / "train.ipynb"
    notebook.write_text("{}")
    # A notebook runs in one process, except the function notebook_launcher starts.
    cells = [
        ("# Fine-tuning\nTwo processes.", lsp.NotebookCellKind.Markup, "markdown"),
        ("%pip install accelerate\nfrom accelerate import Accelerator, notebook_launcher", lsp.NotebookCellKind.Code, "python"),
        (
            "def train(model, optimizer):\n    accelerator = Accelerator()\n"
            "    model, optimizer = accelerator.prepare(model, optimizer)\n    return model.config.vocab_size",
            lsp.NotebookCellKind.Code,
            "python",
        ),
        ("notebook_launcher(train, (model, optimizer), num_processes=2)", lsp.NotebookCellKind.Code, "python"),
    ]
    uris = [f"vscode-notebook-cell:{notebook}#cell{i}" for i in range(len(cells))]
    client.notebook_document_did_open(
        lsp.DidOpenNotebookDocumentParams(
            lsp.NotebookDocument(
                notebook.as_uri(), "jupyter-notebook", 1, [lsp.NotebookCell(kind, uri) for (_, kind, _), uri in zip(cells, uris)]
            ),
            [lsp.TextDocumentItem(uri, language, 1, text) for (text, _, language), uri in zip(cells, uris)],
        )
    )
    (found,) = await diagnostics(client, uris[2])
    assert found.code == "TRL001" and found.range.start == lsp.Position(3, 11)
    for uri in (uris[0], uris[1], uris[3]):
        assert await diagnostics(client, uri) == []
    # the evidence is the launcher's cell
    (launcher,) = found.related_information
    assert launcher.location.uri == uris[3] and "notebook_launcher starts train in 2 processes" in launcher.message
    actions = await code_actions(client, uris[2], found.range)
    (fix,) = [a for a in actions if a.title.startswith("Fix TRL001")]
    assert {change.text_document.uri for change in fix.edit.document_changes} == {uris[2]}
    assert apply_edits(cells[2][0], edits_for(fix, uris[2])).endswith("    return accelerator.unwrap_model(model).config.vocab_size")
    (noqa,) = [a for a in actions if "noqa" in a.title]
    assert apply_edits(cells[2][0], edits_for(noqa, uris[2])).endswith("vocab_size  # noqa: TRL001")
    # the magic in cell 2 is kept as it is by a fix that rewrites the notebook
    (fix_all,) = await code_actions(client, uris[2], found.range, only=["source.fixAll"])
    assert {change.text_document.uri for change in fix_all.edit.document_changes} == {uris[2]}
    # the cell edited: the finding goes
    client.diagnostics.pop(uris[2], None)
    client.notebook_document_did_change(
        lsp.DidChangeNotebookDocumentParams(
            lsp.VersionedNotebookDocumentIdentifier(version=2, uri=notebook.as_uri()),
            lsp.NotebookDocumentChangeEvent(
                cells=lsp.NotebookDocumentCellChanges(
                    text_content=[
                        lsp.NotebookDocumentCellContentChanges(
                            lsp.VersionedTextDocumentIdentifier(uri=uris[2], version=2),
                            [lsp.TextDocumentContentChangeWholeDocument(apply_edits(cells[2][0], edits_for(fix, uris[2])))],
                        )
                    ]
                )
            ),
        )
    )
    assert await diagnostics(client, uris[2]) == []


# ---- configuration ------------------------------------------------------------------------


def trl006_file(tmp_path: Path) -> Path:
    path = tmp_path / "save.py"
    shutil.copy(TRL006_CASES / "bad_save_on_main_process.py", path)
    return path


def configuration_changed(client: LanguageClient, config: Path, text: str, *uris: str) -> None:
    config.write_text(text)
    for uri in uris:
        client.diagnostics.pop(uri, None)
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent(config.as_uri(), lsp.FileChangeType.Changed)])
    )


async def test_preview_and_a_changed_configuration_are_read_again(client: LanguageClient, tmp_path: Path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[project]\nname = "x"\n\n[tool.trllint]\npreview = true\nignore = ["TRL006"]\n')
    path = trl006_file(tmp_path)
    uri = open_file(client, path)
    assert await diagnostics(client, uri) == []  # the other rules find nothing in it
    configuration_changed(client, config, '[project]\nname = "x"\n\n[tool.trllint]\npreview = true\n', uri)
    found = await diagnostics(client, uri)
    assert {d.code for d in found} == {"TRL006"} and len(found) == 5
    # the server asked to hear of such changes
    (watching,) = client.registrations
    assert watching.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert "**/pyproject.toml" in [w["globPattern"] for w in watching.register_options["watchers"]]
    # a mistake in it: said once, and the defaults stand in for it: preview off, so only the
    # stable kinds run, and this file has none of theirs
    configuration_changed(client, config, '[project]\nname = "x"\n\n[tool.trllint]\nselec = ["TRL006"]\n', uri)
    assert await diagnostics(client, uri) == []
    (mistake,) = client.messages
    assert mistake.type == lsp.MessageType.Warning and "unknown key 'selec'" in mistake.message


async def test_with_no_rule_selected_the_server_says_so_once_and_publishes_nothing(client: LanguageClient, tmp_path: Path):
    # A configuration that selects only a preview rule, without preview, selects nothing: the
    # CLI's usage error, said once for the workspace folder however many files are opened.
    config = tmp_path / "pyproject.toml"
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "train.py"
    shutil.copy(TRL001_CASES / "bad_accelerate_loop.py", path)
    broken = tmp_path / "broken.py"
    broken.write_text("def train(:\n    pass\n")  # not even TRL000: the CLI runs nothing either
    configuration_changed(client, config, '[tool.trllint]\nselect = ["TRL006"]\n')
    uris = [open_file(client, path), open_file(client, broken)]
    for uri in uris:
        assert await diagnostics(client, uri) == []
    (message,) = client.messages
    assert message.type == lsp.MessageType.Warning
    assert message.message == "trllint: no rule is selected: TRL006 needs --preview"
    # Preview turned on: the findings come, and nothing more is said.
    configuration_changed(client, config, PREVIEW_ON, *uris)
    assert [d.code for d in await diagnostics(client, uris[0])] == ["TRL001", "TRL001"]
    assert [d.code for d in await diagnostics(client, uris[1])] == ["TRL000"]
    # Off again: the findings go, and the changed configuration is told once more.
    configuration_changed(client, config, '[tool.trllint]\npreview = false\nselect = ["TRL006"]\n', *uris)
    for uri in uris:
        assert await diagnostics(client, uri) == []
    assert [m.message for m in client.messages] == ["trllint: no rule is selected: TRL006 needs --preview"] * 2
    # The syntax check alone is a selection the CLI runs: so does the server, and says nothing more.
    configuration_changed(client, config, '[tool.trllint]\nselect = ["TRL000"]\n', *uris)
    assert [d.code for d in await diagnostics(client, uris[1])] == ["TRL000"]
    assert await diagnostics(client, uris[0]) == [] and len(client.messages) == 2


async def test_an_excluded_file_is_not_linted(client: LanguageClient, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(PREVIEW_ON + 'extend-exclude = ["vendored"]\n')
    (tmp_path / "vendored").mkdir()
    path = tmp_path / "vendored" / "train.py"
    shutil.copy(TRL001_CASES / "bad_accelerate_loop.py", path)
    uri = open_file(client, path)
    assert await diagnostics(client, uri) == []
    # The same file outside the excluded folder is linted: the test above can fail.
    shutil.copy(path, tmp_path / "train.py")
    assert len(await diagnostics(client, open_file(client, tmp_path / "train.py"))) == 2


# ---- the project model --------------------------------------------------------------------


async def test_an_edit_to_an_imported_module_relints_the_file_that_imports_it(client: LanguageClient, tmp_path: Path):
    project = tmp_path / "rlhf"
    shutil.copytree(TRL001_CASES / "bad_base_through_relative_import", project)
    rloo = open_file(client, project / "rl" / "rloo.py")
    (found,) = await diagnostics(client, rloo)
    assert found.code == "TRL001" and "in OnPolicyTrainer" in found.message
    # the base class stops preparing the policy, in the editor, not saved
    base_path = project / "rl" / "base.py"
    base_text = base_path.read_text()
    base = open_file(client, base_path, base_text)
    assert await diagnostics(client, base) == []
    client.diagnostics.pop(rloo, None)
    unprepared = base_text.replace(
        "self.policy, self.optimizer = self.accelerator.prepare(policy, optimizer)",
        "self.policy = policy\n        self.optimizer = self.accelerator.prepare(optimizer)",
    )
    replace_all(client, base, unprepared, 2)
    # (opening base.py re-lints rloo.py too, with its finding: that publish may come after the pop)
    assert await diagnostics(client, rloo, lambda found: not found) == []
    # closed without saving: the file on disk prepares it again
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(base)))
    (again,) = await diagnostics(client, rloo, lambda found: len(found) == 1)
    assert again.code == "TRL001"
