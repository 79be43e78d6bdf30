"""The walks that only locate rare problems (a definition declaring another dialect, a pattern
Python's `re` cannot compile, a `$ref` that resolves to nothing) run only when one pointer-free
walk over the whole document says such a thing may be there (`checks.dialects_and_patterns`, or
the loader's `quick_scan`, whose result SchemaFile carries). Skipping them must never change a
build: these tests build every schema with the census the build uses and with the walks forced
on, and compare."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from acpgen.diagnostics import Diagnostics
from acpgen.ir import census
from acpgen.ir.build import Builder
from acpgen.ir.checks import dialects_and_patterns
from acpgen.load.loader import check_refs, quick_scan, read_schema_file
from acpgen.pipeline import run_deep

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = sorted([*ROOT.glob("schema/*/schema*.json"), *(ROOT / "tests" / "hostile").glob("*.json")])

# Rare things at every kind of place: a definition, a nested subschema, a list item, a
# patternProperties key, data (a default) that only looks like a schema.
SYNTHETIC: dict[str, dict[str, Any]] = {
    "nested dialect in a definition": {"$defs": {"A": {"$schema": "http://json-schema.org/draft-07/schema#",
                                                       "type": "object"}}},
    "nested dialect deep in a property": {"$defs": {"A": {"type": "object", "properties": {
        "x": {"anyOf": [{"type": "string"}, {"$schema": "https://example.com/other", "type": "integer"}]}}}}},
    "2020-12 declared again below": {"$defs": {"A": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                                                     "type": "string"}}},
    "bad pattern": {"$defs": {"A": {"type": "string", "pattern": "\\p{L}+"}}},
    "bad pattern key": {"$defs": {"A": {"type": "object", "patternProperties": {"[": {"type": "string"}}}}},
    "good patterns": {"$defs": {"A": {"type": "object", "patternProperties": {"^x-": {"type": "string"}},
                                      "properties": {"b": {"type": "string", "pattern": "^[a-z]+$"}}}}},
    "an unresolved reference": {"$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}}}},
    "a reference in data only": {"$defs": {"A": {"type": "object", "default": {"$ref": "#/nowhere"}}}},
    "references by index and escape": {"$defs": {"A~/B": {"type": "string"}, "C": {"anyOf": [
        {"$ref": "#/$defs/A~0~1B"}, {"$ref": "#/$defs/C/anyOf/0"}, {"$ref": "#/$defs/A%7E0%7E1B"}]}}},
    "an $id below the root": {"$defs": {"A": {"$id": "https://example.com/a", "$defs": {"B": {"type": "string"}},
                                              "properties": {"b": {"$ref": "#/$defs/B"}}}}},
    "a pattern in data only": {"$defs": {"A": {"type": "object", "default": {"pattern": "\\p{L}", "$schema": "x"},
                                               "properties": {"pattern": {"type": "string"}}}}},
}


def build(document: dict[str, Any], forced: tuple[bool, bool] | None) -> tuple[list[Any], dict[str, Any]]:
    diags = Diagnostics("schema.json")
    builder = Builder(copy.deepcopy(document), diags, census=forced)
    builder.build()
    return diags.items, builder.nodes


def parsed(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):  # a hostile file that is not JSON, or nested too deep
        return None


def cases() -> list[Any]:
    out = [pytest.param(parsed(p), id=p.relative_to(ROOT).as_posix()) for p in SCHEMAS]
    return out + [pytest.param(doc, id=name) for name, doc in SYNTHETIC.items()]


@pytest.mark.parametrize("document", cases())
def test_skipping_the_locating_walks_changes_nothing(document: Any) -> None:
    if not isinstance(document, dict):
        pytest.skip("not a JSON object: the loader refuses it before the IR")
    # deep: a build runs in run_deep's thread (deep_nesting.json nests 1,000 levels)
    assert run_deep(lambda: build(document, None)) == run_deep(lambda: build(document, (True, True)))


@pytest.mark.parametrize("document", cases())
def test_the_loader_finds_what_the_ir_walk_finds(document: Any, tmp_path: Path) -> None:
    if document is None:
        pytest.skip("not JSON")
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    loaded = run_deep(lambda: read_schema_file(path, Diagnostics()))
    if loaded is None:
        pytest.skip("the loader refuses this document (its error is what the build reports)")
    assert census(loaded) == run_deep(lambda: dialects_and_patterns(loaded.document))


@pytest.mark.parametrize(("name", "expected"), [
    ("nested dialect in a definition", (True, False)),
    ("nested dialect deep in a property", (True, False)),
    ("2020-12 declared again below", (True, False)),
    ("bad pattern", (False, True)),
    ("bad pattern key", (False, True)),
    ("good patterns", (False, False)),
    ("a pattern in data only", (True, True)),  # data counts too: a False is certain, a True may be data
])
def test_census_values(name: str, expected: tuple[bool, bool]) -> None:
    assert dialects_and_patterns(SYNTHETIC[name]) == expected


def test_the_rare_problems_are_still_reported() -> None:
    codes = {d.code for d in build(SYNTHETIC["nested dialect in a definition"], None)[0]}
    assert "unsupported-dialect" in codes
    codes = {d.code for d in build(SYNTHETIC["bad pattern"], None)[0]}
    assert "bad-pattern" in codes
    codes = {d.code for d in build(SYNTHETIC["bad pattern key"], None)[0]}
    assert "bad-pattern" in codes


@pytest.mark.parametrize("document", cases())
def test_the_reference_check_is_the_same_with_the_seen_references(document: Any) -> None:
    if not isinstance(document, dict):
        pytest.skip("not a JSON object")
    scan = run_deep(lambda: quick_scan(document))
    if scan.deep or scan.nested_id:
        pytest.skip("the reading walk does not pass its references on: the full check runs")
    fast, full = Diagnostics("s.json"), Diagnostics("s.json")
    run_deep(lambda: check_refs(copy.deepcopy(document), fast, scan.refs))
    run_deep(lambda: check_refs(copy.deepcopy(document), full))
    assert fast.items == full.items


def test_an_unresolved_reference_is_still_located() -> None:
    document = SYNTHETIC["an unresolved reference"]
    diags = Diagnostics("s.json")
    check_refs(document, diags, quick_scan(document).refs)
    assert [(d.code, d.pointer) for d in diags.items] == [("unresolvable-ref", "/$defs/A/properties/b/$ref")]
