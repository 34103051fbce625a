"""The codes the engine reports itself, not a rule: what ``--explain`` prints for them."""

from __future__ import annotations

from trllint.core.findings import PARSE_ERROR, UNUSED_NOQA

TRL000_DOC = """\
# TRL000 unreadable-or-invalid-source

## What it finds

A file trllint cannot lint: Python that does not parse, a notebook that is not valid JSON, bytes
that are not text in the file's encoding, a file past the size limit. And syntax newer than the
project's target Python: `match` under a target of 3.9, `except*` under 3.10, an f-string that
reuses its quotes inside `{}` (`f"{row["name"]}"`, PEP 701) under 3.11.

The target is `target-version` in `[tool.trllint]` (`"py310"`, as in Ruff), else the lowest
version `requires-python` admits in the project's `pyproject.toml`, else the Python running
trllint (for a notebook, the newer Python it last ran on, if its metadata says so); the message
names the version the syntax needs and where the target came from.

In a notebook each code cell is checked as Jupyter runs it, after IPython's own syntax (`%magic`,
`%%cell magic`, `!shell`, `x = !cmd`, `obj?`, and a one-line cell such as `pip install x` or
`cd ..` that automagic runs): a cell that does not parse is one TRL000 in that cell, and the other
cells are still linted as one program without it.

## Why it breaks

A file that does not parse is not run at all (`SyntaxError: invalid syntax`), and a rule cannot
read it: nothing else is reported for it, so a broken file would otherwise pass a lint gate
silently. Syntax newer than the target fails on the oldest Python the project supports:

```
SyntaxError: f-string: unmatched '['
```

(Python 3.11 on `f"{row["name"]}"`, which 3.12 accepts). A file with newer syntax still parses,
so the rules still read it.

## Example

```python
# requires-python = ">=3.10"
print(f"{row["name"]}")
```

## Fixed

```python
print(f"{row['name']}")
```

## Fix safety

No fix: what the author meant is not known.

## Runtime proof

`python3.11 -c 'row = {"name": 1}; print(f"{row["name"]}")'` fails with the SyntaxError above.

Like any code, TRL000 can be named in `ignore` and `per-file-ignores` (and `--ignore`); a
selection that leaves it out still reports it, so that a broken file never passes unseen.
`--select TRL000` checks syntax alone. No `# noqa` comment silences it.
"""

TRL100_DOC = """\
# TRL100 unused-noqa

Status: on request: only a selection that names it runs it (`--extend-select TRL100`,
`extend-select = ["TRL100"]`, a prefix such as `TRL1`, or `ALL`), as Ruff's RUF100.

## What it finds

A `# noqa: TRLnnn` code that silences nothing on its line, as Ruff's RUF100 reads them: the
rule reported nothing there (the bug was fixed, the code moved), the rule is not enabled for the
file (this run did not select it, or `per-file-ignores` switches it off there: Ruff's
"non-enabled"), or no rule has the code (`TRL04`, misspelt). Only trllint's own codes are judged:
a bare `# noqa` and other tools' codes (`E501`, `F401`) are left alone. A code that silences a
preview finding is in use, preview on or not.

## Why it matters

A stale `# noqa` silences the next real finding on that line without anyone deciding to.

## Example

```python
self.log({"loss": loss.item()})  # noqa: TRL004
```

## Fixed

```python
self.log({"loss": loss.item()})
```

## Fix safety

Safe: the fix removes the stale codes (the whole comment when nothing else is in it), which
changes nothing the program does. A comment with text after its codes (`# noqa: TRL004 -- why`)
is reported without a fix: what to keep is the author's call.

`# noqa: TRL100` on the line silences it; `--ignore-noqa` turns every `# noqa` off, this check
with them.
"""

ENGINE_DOCS = {PARSE_ERROR[0]: (PARSE_ERROR[1], TRL000_DOC), UNUSED_NOQA[0]: (UNUSED_NOQA[1], TRL100_DOC)}


def engine_code(code_or_name: str) -> str | None:
    """The engine code a code or name spells (``TRL000``, ``unreadable-or-invalid-source``)."""
    key = code_or_name.strip()
    for code, (name, _) in ENGINE_DOCS.items():
        if key.upper() == code or key == name:
            return code
    return None
