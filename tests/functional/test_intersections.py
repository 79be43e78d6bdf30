"""`allOf` members that narrow a property intersect (MCP 2025-11-25: `Error.code: integer` and
`{"const": -32042}`, `data: any` and an object), and type aliases that name a cycle from outside it
(MCP 2026-07-28: `JSONArray` beside `JSONValue` -> `JSONObject` -> `JSONValue`) import, and
`additionalProperties: {}` keeps the extra keys as `true` does (MCP's Tool.inputSchema)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from acpgen.config import Target
from acpgen.pipeline import build

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def generate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, defs: dict[str, Any]) -> tuple[ModuleType, list[str]]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$schema": DRAFT, "$defs": defs}), encoding="utf-8")
    result = build(Target(name=package, schema=schema, output=tmp_path / package, package=package,
                          include_unstable=False, find_unstable=False, command="acpgen build schema.json"))
    assert result.ok, [d.render() for d in result.diagnostics]
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "-p", package],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return importlib.import_module(package), [d.code for d in result.diagnostics]


ERROR = {"type": "object", "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
         "required": ["code", "message"]}


def test_an_allof_member_narrowing_a_property_is_an_intersection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    narrowed = {"allOf": [{"$ref": "#/$defs/Error"}, {"type": "object", "properties": {
        "code": {"const": -32042, "type": "integer"},
        "data": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}},
        "required": ["data"]}]}
    pkg, codes = generate(tmp_path, monkeypatch, "narrowed_error", {"Error": ERROR, "UrlRequired": narrowed})
    assert "conflicting-property" not in codes
    good = {"code": -32042, "message": "go", "data": {"url": "https://example.org"}}
    assert pkg.encode(pkg.decode("UrlRequired", good)) == good
    for bad in ({**good, "code": -32000}, {**good, "data": "text"}, {"code": -32042, "message": "go"}):
        with pytest.raises(ValueError):
            pkg.decode("UrlRequired", bad)


def test_disjoint_types_in_allof_stay_a_conflict(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$schema": DRAFT, "$defs": {"Error": ERROR, "Bad": {"allOf": [
        {"$ref": "#/$defs/Error"}, {"type": "object", "properties": {"code": {"type": "string"}}}]}}}), encoding="utf-8")
    result = build(Target(name="bad", schema=schema, output=tmp_path / "bad", package="bad",
                          include_unstable=False, find_unstable=False, command="x"))
    assert not result.ok
    assert [d.pointer for d in result.diagnostics if d.code == "conflicting-property"] == ["/$defs/Bad/allOf/1/properties/code"]


def test_an_alias_naming_a_cycle_from_outside_it_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    defs = {
        "JSONValue": {"anyOf": [{"$ref": "#/$defs/JSONObject"}, {"type": "array", "items": {"$ref": "#/$defs/JSONValue"}},
                                {"type": "string"}]},
        "JSONArray": {"type": "array", "items": {"$ref": "#/$defs/JSONValue"}},
        "JSONObject": {"type": "object", "additionalProperties": {"$ref": "#/$defs/JSONValue"}},
    }
    pkg, _ = generate(tmp_path, monkeypatch, "json_cycle", defs)
    value = [{"a": ["b", {"c": "d"}]}, "e"]
    assert pkg.encode(pkg.decode("JSONArray", value)) == value


def test_additional_properties_empty_schema_keeps_extra_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    input_schema = {"type": "object", "properties": {"type": {"const": "object", "type": "string"}},
                    "required": ["type"], "additionalProperties": {}}
    pkg, _ = generate(tmp_path, monkeypatch, "empty_additional", {"InputSchema": input_schema})
    value = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert pkg.encode(pkg.decode("InputSchema", value)) == value


def test_unions_encode_by_their_variants_shared_expression_and_recursion_stays_generic(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A union of lists of object types encodes each item's `to_dict()` (no generic walk), a union
    of scalars passes through, and a union that contains itself (a JSON value) is left to the
    generic `encode_value`: looking into it must end (it once recursed until the build failed with
    `too-deep` on MCP's schema). The package passes `mypy --strict` and round-trips."""
    point = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    label = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    defs = {
        "Point": point, "Label": label,
        "Items": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Point"}},
                            {"type": "array", "items": {"$ref": "#/$defs/Label"}}]},
        "Id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "Value": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {"$ref": "#/$defs/Value"}},
                            {"type": "object", "additionalProperties": {"$ref": "#/$defs/Value"}}]},
        "Holder": {"type": "object", "properties": {"items": {"$ref": "#/$defs/Items"}, "id": {"$ref": "#/$defs/Id"},
                                                     "value": {"$ref": "#/$defs/Value"}}, "required": ["items", "id"]},
    }
    pkg, _ = generate(tmp_path, monkeypatch, "unions_alike", defs)
    source = (tmp_path / "unions_alike" / "models.py").read_text()
    assert '"items": [i0.to_dict() for i0 in self.items]' in source
    assert '"id": self.id' in source
    assert "encode_value(value)" in source  # the recursive union: the generic walk
    for wire in ({"items": [{"x": 1}, {"x": 2}], "id": 7, "value": [1, "a", {"k": [2.5]}]},
                 {"items": [{"text": "t"}], "id": "s"}):
        assert pkg.encode(pkg.decode("Holder", wire)) == wire
