"""`inexact`: the first place in a definition whose keyword the typed decoder does not judge exactly."""

from __future__ import annotations

from acpgen.ir.checks import inexact

EXACT = {"type": "object", "properties": {"a": {"type": "string", "x-note": 1}, "gone": False}, "required": ["a"]}


def test_an_exact_definition_has_none() -> None:
    assert inexact(EXACT, "/$defs/X") is None


def test_the_first_inexact_keyword_is_located() -> None:
    assert inexact({"type": "string", "pattern": "^a"}, "/$defs/X") == "/$defs/X/pattern"
    assert inexact({"anyOf": [EXACT, {"type": "number", "multipleOf": 2}]}, "/$defs/X") == "/$defs/X/anyOf/1/multipleOf"
    assert inexact({"type": "object", "properties": {"a/b": {"const": 1.5}}}, "/$defs/X") == "/$defs/X/properties/a~1b/const"
    assert inexact(False, "/$defs/X") == "/$defs/X"


def test_a_false_schema_is_exact_only_as_a_property_that_must_be_absent() -> None:
    assert inexact({"type": "object", "properties": {"p": False}}, "/$defs/X") is None
    assert inexact({"type": "array", "items": False}, "/$defs/X") == "/$defs/X/items"
    # a property named "properties" whose `not` is false: a false subschema, not an absent key
    assert inexact({"type": "object", "properties": {"properties": {"type": "object", "not": False}}}, "/$defs/X") \
        == "/$defs/X/properties/properties/not"
