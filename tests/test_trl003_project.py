"""TRL003 across the modules of a project: a helper or an inherited method defined in another
module that forwards its parameter to deepspeed.initialize is a sink; what the project cannot
answer for (an installed library, a missing module, an import cycle) stays unknown and silent.

The rule's project cases (``rules/trl003_deepspeed_initialize_none/cases/*_project_*``) hold the
main shapes; these tests hold the edges: ambiguity between classes, the nearest base winning,
a same-file definition shadowing an import, the prefilter, and the result cache seeing the helper
change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

HELPER = '''\
import deepspeed


def init_engine(model, config):
    engine, *_ = deepspeed.initialize(model=model, config=config)
    return engine
'''

GUARDED_HELPER = '''\
import deepspeed


def init_engine(model, config):
    if model is None:
        return None
    engine, *_ = deepspeed.initialize(model=model, config=config)
    return engine
'''

BASE = '''\
import deepspeed


class BaseTrainer:
    def __init__(self, model, config):
        self.config = config
        self.model = model

    def _wrap(self, model):
        engine, *_ = deepspeed.initialize(model=model, config=self.config)
        return engine
'''


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _lint(path: Path) -> list[tuple[int, str]]:
    """TRL003's findings on one file of a project, prefilter on (as a run has it)."""
    text = path.read_text(encoding="utf-8")
    source = SourceFile(text=text, display_path=path.name, is_python=True, path=path)
    ruleset = RuleSet([all_rules()["TRL003"].rule], {}, preview=True)
    return [(f.line, f.message) for f in lint_source(source, path.name, ruleset)]


def test_a_caller_must_spell_deepspeed_somewhere(tmp_path):
    """Only the import leads to deepspeed.initialize. The prefilter asks the file to name
    DeepSpeed somewhere (here its config): a caller that never does is not linted (the cost of
    parsing nearly every file of a project for this rule alone), one that does is."""
    caller = '''\
        from .engines import init_engine


        def evaluate(config, reward_model=None):
            engine = init_engine(reward_model, config)
            return engine
        '''
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/engines.py": HELPER,
        "pkg/evaluate.py": caller,
        "pkg/evaluate_ds.py": caller.replace("config", "deepspeed_config"),
    })
    assert _lint(root / "pkg/evaluate.py") == []
    found = _lint(root / "pkg/evaluate_ds.py")
    assert [line for line, _ in found] == [5]
    assert "reached through init_engine()" in found[0][1]


def test_a_required_parameter_or_a_guarded_helper_is_silent(tmp_path):
    caller = '''\
        from .engines import init_engine


        def evaluate(deepspeed_config, reward_model):
            return init_engine(reward_model, deepspeed_config)


        def evaluate_maybe(deepspeed_config, reward_model=None):
            return init_engine(reward_model, deepspeed_config)
        '''
    root = _project(tmp_path / "plain", {"pkg/__init__.py": "", "pkg/engines.py": HELPER, "pkg/evaluate.py": caller})
    assert [line for line, _ in _lint(root / "pkg/evaluate.py")] == [9]
    other = _project(tmp_path / "guarded", {"pkg/__init__.py": "", "pkg/engines.py": GUARDED_HELPER, "pkg/evaluate.py": caller})
    assert _lint(other / "pkg/evaluate.py") == []


def test_a_same_file_definition_shadows_the_import(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/engines.py": HELPER,
        "pkg/evaluate.py": '''\
            from .engines import init_engine


            def init_engine(model, deepspeed_config):
                return model


            def evaluate(deepspeed_config, reward_model=None):
                return init_engine(reward_model, deepspeed_config)
            ''',
    })
    assert _lint(root / "pkg/evaluate.py") == []


def test_an_inherited_method_is_a_sink_only_where_every_caller_inherits_it(tmp_path):
    one_class = '''\
        from .base import BaseTrainer


        class DPOTrainer(BaseTrainer):
            def __init__(self, model, deepspeed_config, ref_model=None):
                super().__init__(model, deepspeed_config)
                self.ref_model = self._wrap(ref_model)
        '''
    # A second class of the file with its own `_wrap` (from elsewhere): `self._wrap` is matched
    # by name, so the file's calls are unknown.
    two_classes = one_class + '''\


        class Evaluator(SomeLibraryEvaluator):
            def __init__(self, model=None):
                self.model = self._wrap(model)
        '''
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/dpo.py": one_class, "pkg/two.py": two_classes})
    assert [line for line, _ in _lint(root / "pkg/dpo.py")] == [7]
    assert _lint(root / "pkg/two.py") == []


def test_the_nearest_base_wins(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": BASE,
        "pkg/middle.py": '''\
            from .base import BaseTrainer


            class SafeTrainer(BaseTrainer):
                def _wrap(self, model):
                    if model is None:
                        return None
                    return super()._wrap(model)
            ''',
        "pkg/dpo.py": '''\
            from .middle import SafeTrainer


            class DPOTrainer(SafeTrainer):
                def __init__(self, model, deepspeed_config, ref_model=None):
                    super().__init__(model, deepspeed_config)
                    self.ref_model = self._wrap(ref_model)
            ''',
    })
    assert _lint(root / "pkg/dpo.py") == []


def test_an_import_cycle_or_a_broken_module_is_unknown(tmp_path):
    """Silent where the project cannot answer; the module with an elif chain of imports is read."""
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": '''\
            from .b import init_engine
            from .broken import wrap
            from .compat import load


            def train(deepspeed_config, model=None):
                wrap(model, deepspeed_config)
                init_engine(model, deepspeed_config)
                return load(model, deepspeed_config)
            ''',
        "pkg/b.py": "from .a import init_engine\n",
        # An elif chain of imports in a helper module once crashed the module's summary.
        "pkg/compat.py": (
            "import sys\n\nif sys.platform == 'win32':\n    import ntpath as osp\n"
            "elif sys.version_info < (3, 9):\n    import posixpath as osp\nelse:\n    from posixpath import join\n\n\n"
            "def load(model, deepspeed_config):\n    import deepspeed\n\n    return deepspeed.initialize(model=model, deepspeed_config=deepspeed_config)\n"
        ),
        "pkg/broken.py": "def wrap(model, deepspeed_config:\n",
    })
    assert [line for line, _ in _lint(root / "pkg/a.py")] == [9]


CALLER = '''\
    from .engines import init_engine


    def evaluate(deepspeed_config, reward_model=None):
        return init_engine(reward_model, deepspeed_config)
    '''


def _run_trl003(root: Path) -> list[tuple[str, int]]:
    done = subprocess.run(
        [sys.executable, "-m", "trllint", "--preview", "--select", "TRL003", "--format", "json", "--exit-zero", "."],
        cwd=root, capture_output=True, text=True, check=True,
    )
    return sorted((Path(f["filename"]).name, f["line"]) for f in json.loads(done.stdout))


def test_the_result_cache_sees_the_helper_change(tmp_path):
    """The caller does not change; the helper gains a guard: a warm run must lint again."""
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/engines.py": HELPER,
        "pkg/evaluate.py": CALLER,
    })
    assert _run_trl003(root) == [("evaluate.py", 5)]
    assert _run_trl003(root) == [("evaluate.py", 5)]  # warm
    (root / "pkg/engines.py").write_text(GUARDED_HELPER, encoding="utf-8")
    assert _run_trl003(root) == []


def test_the_result_cache_sees_a_helper_change_of_the_same_size(tmp_path):
    """The helper's size stays; its content and mtime change: the stamp no longer holds, the
    content is read again, and the warm run lints the caller again."""
    guarded = textwrap.dedent(GUARDED_HELPER)
    unguarded = textwrap.dedent(HELPER)
    unguarded += "#" * (len(guarded) - len(unguarded) - 1) + "\n"
    assert len(unguarded) == len(guarded)
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/engines.py": unguarded,
        "pkg/evaluate.py": CALLER,
    })
    assert _run_trl003(root) == [("evaluate.py", 5)]
    assert _run_trl003(root) == [("evaluate.py", 5)]  # warm: the helper's stamp is recorded
    assert _run_trl003(root) == [("evaluate.py", 5)]  # warm: read from the stamp
    helper = root / "pkg/engines.py"
    before = helper.stat().st_mtime_ns
    helper.write_text(guarded, encoding="utf-8")
    os.utime(helper, ns=(before + 1_000_000_000, before + 1_000_000_000))  # a later mtime, whatever the clock
    assert _run_trl003(root) == []


def test_a_warm_run_reads_an_unchanged_helper_once_then_trusts_its_stamp(tmp_path, monkeypatch, capsys):
    """An imported module's content decides whether the caller's findings still hold; once its
    size and mtime are known with that content, later warm runs do not read it (one stat)."""
    from trllint.app.cli import main
    from trllint.semantic.project import fact_cache

    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/engines.py": HELPER,
        "pkg/evaluate.py": CALLER,
    })
    monkeypatch.chdir(root)
    helper = (root / "pkg/engines.py").resolve()
    reads: list[Path] = []
    real = fact_cache.read_module
    monkeypatch.setattr(fact_cache, "read_module", lambda path: reads.append(path) or real(path))
    args = ["--preview", "--select", "TRL003", "--format", "json", "--exit-zero", "--jobs", "1", "."]

    def warm_reads() -> int:
        reads.clear()
        main(args)
        assert [f["line"] for f in json.loads(capsys.readouterr().out)] == [5]
        return reads.count(helper)

    main(args)  # cold
    capsys.readouterr()
    assert warm_reads() == 1  # its digest checked, its stamp recorded
    assert warm_reads() == 0  # the stamp holds
    os.utime(helper)  # touched, content unchanged: read again, still a hit
    assert warm_reads() == 1
    assert warm_reads() == 0


def test_a_helper_module_that_never_spells_deepspeed_is_not_summarised(tmp_path, monkeypatch):
    """Its functions cannot reach deepspeed.initialize: the rule parses nothing of it."""
    from trllint.semantic.project import modules as project_module

    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/tokens.py": "def pad(batch, value=None):\n    return batch\n",
        "pkg/evaluate.py": "from .tokens import pad\n\n\ndef evaluate(batch=None):\n    return pad(batch)\n",
    })
    parsed = []
    real = project_module._parse
    monkeypatch.setattr(project_module, "_parse", lambda path, data: parsed.append(path) or real(path, data))
    assert _lint(root / "pkg/evaluate.py") == []
    assert parsed == []
