"""The compiled meta-schema check never calls a document valid that jsonschema rejects, and it does
call the real ACP schemas valid (that is the whole speed-up). Local `$ref` resolution agrees with
`referencing`."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from acpgen.diagnostics import Diagnostics
from acpgen.load.loader import (
    check_meta_schema,
    check_refs,
    resolves_locally,
    resolves_with_referencing,
)
from acpgen.load.metaschema import certainly_valid, meta_check
from tests.conftest import ROOT

SCHEMAS = sorted((ROOT / "schema").glob("*/*.json"))
SCHEMAS = [p for p in SCHEMAS if p.name != "SOURCES.json"]
META = Draft202012Validator(Draft202012Validator.META_SCHEMA)

KEYWORDS = ["type", "properties", "required", "items", "allOf", "anyOf", "oneOf", "not", "$ref",
            "$defs", "enum", "const", "minimum", "exclusiveMinimum", "minItems", "maxLength", "pattern",
            "additionalProperties", "propertyNames", "uniqueItems", "$id", "$anchor", "dependencies",
            "definitions", "$vocabulary", "description", "default", "format", "multipleOf",
            "dependentRequired", "prefixItems", "contains", "if", "deprecated", "examples", "x-side"]
JUNK = [None, True, False, 0, 1, -1, 1.0, 2.5, "", "string", "object", "^[a", [], ["string"],
        ["string", "string"], [1], {}, {"type": "string"}, {"a": 1}, [{"type": 3}]]


def test_real_schemas_take_the_fast_path() -> None:
    assert meta_check("https://json-schema.org/draft/2020-12/schema") is not None
    for path in SCHEMAS:
        document = json.loads(path.read_text())
        assert certainly_valid(document), path


def subschemas(node: Any, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        out.append(node)
        for key, value in node.items():
            if key not in ("const", "default", "enum", "examples"):
                subschemas(value, out)
    elif isinstance(node, list):
        for value in node:
            subschemas(value, out)
    return out


def test_mutations_never_pass_when_jsonschema_rejects() -> None:
    """Break real definitions one keyword at a time: whenever the fast check says valid,
    jsonschema must agree; and it must catch most breakages itself (else it is no faster)."""
    document = json.loads((ROOT / "schema" / "v1" / "schema.json").read_text())
    defs = sorted(document["$defs"].items())
    rng = random.Random(20261130)
    invalid = caught = 0
    for _ in range(300):
        name, definition = rng.choice(defs)
        doc = {"$defs": {name: copy.deepcopy(definition)}}
        target = rng.choice(subschemas(doc["$defs"][name], []))
        target[rng.choice(KEYWORDS)] = copy.deepcopy(rng.choice(JUNK))
        fast = certainly_valid(doc)
        valid = META.is_valid(doc)
        assert not (fast and not valid), json.dumps(doc)[:500]
        if not valid:
            invalid += 1
            caught += not fast
    assert invalid > 50 and caught == invalid


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False) | st.sampled_from(["", "a", "string", "#x", "^["]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from([*KEYWORDS, "a"]), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYWORDS), json_values, max_size=5))
def test_arbitrary_documents(document: dict[str, Any]) -> None:
    if certainly_valid(document):
        assert META.is_valid(document)


def test_errors_still_come_from_jsonschema_with_pointers() -> None:
    diags = Diagnostics("s.json")
    check_meta_schema({"$defs": {"A": {"properties": {"x": {"minItems": -1}}}}}, diags)
    assert [d.pointer for d in diags.items] == ["/$defs/A/properties/x/minItems"]
    assert diags.items[0].code == "not-a-json-schema"


@pytest.mark.parametrize("ref", ["#", "#/$defs/A", "#/$defs/A/properties/x", "#/$defs/B~1C", "#/$defs/L/anyOf/1",
                                 "#/$defs/Missing", "#/$defs/L/anyOf/2", "#/$defs/L/anyOf/01", "#/$defs/A%20",
                                 "#/$defs/A%2fB", "#anchor", "other.json#/x", "#/$defs/L/anyOf/-1"])
def test_local_resolution_agrees_with_referencing(ref: str) -> None:
    document = {"$defs": {"A": {"properties": {"x": {}}}, "B/C": {}, "A ": {}, "A/B": {},
                          "L": {"anyOf": [{}, {"$anchor": "anchor"}]}}}
    if resolves_locally(document, ref):
        assert resolves_with_referencing(document, ref)
    diags = Diagnostics()
    check_refs({**document, "$ref": ref}, diags)
    assert bool(diags.errors) == (not resolves_with_referencing(document, ref))
