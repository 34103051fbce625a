"""LibCST's private names are used in one engine module only (trllint/core/cst/private.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "trllint" / "core" / "cst" / "private.py"

# The private members of LibCST the engine has needed so far.
PRIVATE_MEMBERS = {"_UNDEFINED_DEFAULT", "_metadata", "_gen", "_gen_impl", "_visit_and_replace_children", "_is_no_op",
                   "_computed"}


def _private_uses(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("libcst._"):
            found.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.startswith("libcst._")]
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_MEMBERS:
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, (ast.FunctionDef, ast.Name)) and getattr(node, "name", getattr(node, "id", "")) in PRIVATE_MEMBERS:
            found.append((node.lineno, getattr(node, "name", getattr(node, "id", ""))))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("libcst._"):
            found.append((node.lineno, repr(node.value)))
    return found


def test_private_names_only_in_libcst_private():
    offenders = []
    for path in sorted([*(REPO / "trllint").rglob("*.py"), *(REPO / "rules").rglob("*.py")]):
        if path == HOME or "cases" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{path.relative_to(REPO)}:{line}: {what}" for line, what in _private_uses(tree)]
    assert not offenders, "LibCST private names outside trllint/core/cst/private.py:\n" + "\n".join(offenders)


def test_the_check_finds_a_private_use():
    sample = "from libcst._metadata_dependent import _UNDEFINED_DEFAULT\nx = wrapper._metadata\n"
    assert sorted(_private_uses(ast.parse(sample))) == [
        (1, "from libcst._metadata_dependent import ..."), (2, "._metadata")
    ]


def test_each_use_says_why_and_what_would_replace_it():
    text = HOME.read_text(encoding="utf-8")
    uses = len(re.findall(r"^(?:def |class |from libcst\._)", text, flags=re.M))
    assert uses >= 4, "the count below would prove nothing"
    assert text.count("Why:") >= uses - 1 and text.count("Replace with:") >= uses, "every use says why, and names its public replacement"
