"""acpgen/runtime/_validate.py on its own: the draft 2020-12 keywords a typed decoder cannot judge,
the errors it raises (with the path of the failing value), references by anchor and `$id`."""

from __future__ import annotations

from typing import Any

import pytest

from acpgen.runtime._codec import ValidationError
from acpgen.runtime._validate import SchemaChecker, json_equal


def check(schema: Any, value: Any) -> str | None:
    """None when valid, else the error text."""
    try:
        SchemaChecker({"$defs": {"T": schema}}).check("/$defs/T", value)
    except ValidationError as e:
        return str(e)
    return None


@pytest.mark.parametrize(("schema", "valid", "invalid"), [
    ({"not": {"type": "string"}}, 1, "x"),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, 1, 3),
    ({"properties": {"a": True}, "unevaluatedProperties": False}, {"a": 1}, {"a": 1, "b": 2}),
    ({"contains": {"const": 5}, "minContains": 2}, [5, 5], [5, 1]),
    ({"multipleOf": 0.0001}, 0.0075, 0.00751),
    ({"uniqueItems": True}, [1, True], [1, 1.0]),
    ({"dependentRequired": {"a": ["b"]}}, {"a": 1, "b": 2}, {"a": 1}),
    ({"if": {"const": 1}, "then": {"type": "integer"}, "else": {"type": "string"}}, "x", 2),
    ({"patternProperties": {"^x": {"type": "string"}}, "additionalProperties": False}, {"xa": "s"}, {"y": 1}),
    ({"prefixItems": [{"type": "string"}], "items": False}, ["a"], ["a", 1]),
    ({"type": "integer"}, 1.0, 1.5),
    ({"const": 0}, 0.0, False),
    ({"propertyNames": {"maxLength": 2}}, {"ab": 1}, {"abc": 1}),
])
def test_keywords(schema: Any, valid: Any, invalid: Any) -> None:
    assert check(schema, valid) is None
    assert check(schema, invalid) is not None


def test_the_error_names_the_path_of_the_failing_value() -> None:
    message = check({"properties": {"items": {"items": {"not": {"type": "null"}}}}}, {"items": [1, None]})
    assert message == "items[1]: matches the schema under `not`"
    assert check({"required": ["id"]}, {}) == "id: a required key is missing"


def test_anchors_ids_and_dynamic_references_resolve_within_the_document() -> None:
    doc = {"$defs": {
        "T": {"$id": "https://example.test/tree", "$dynamicAnchor": "node", "type": "object",
              "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}, "n": {"$ref": "#num"}}},
        "Num": {"$id": "https://example.test/num", "$anchor": "num", "type": "number"},
        "Strict": {"$id": "https://example.test/strict", "$dynamicAnchor": "node", "$ref": "tree",
                   "unevaluatedProperties": False},
    }}
    checker = SchemaChecker(doc)
    checker.check("/$defs/Strict", {"kids": [{"kids": []}]})
    with pytest.raises(ValidationError) as e:
        checker.check("/$defs/Strict", {"kids": [{"kid": []}]})  # the misspelling, caught one level down
    assert e.value.path == "kids[0].kid"
    assert checker.unresolved("/$defs/T") == ["#num"]  # `#num` is an anchor of another resource


def test_leniency_annotations_leave_the_value_to_the_typed_decoder() -> None:
    lenient = {"properties": {"a": {"type": "string", "x-deserialize-default-on-error": True}}, "not": {"const": 1}}
    assert check(lenient, {"a": 5}) is None


def test_json_equality() -> None:
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal([0], [False])
