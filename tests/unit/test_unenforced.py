"""`unenforced`: every keyword the codecs accept without checking, located, in document order."""

from __future__ import annotations

from acpgen.ir.build import unenforced

DOCUMENT = {
    "$defs": {
        "A": {"type": "object", "not": {"required": ["x"]}},
        "B": {"anyOf": [{"not": {}}, {"type": "string"}]},  # `not` of an alternative: the tag's
        "C": {"type": "object", "unevaluatedProperties": False},
        "D": {"type": "object", "unevaluatedProperties": True},
        "E": {"type": "integer", "format": "int32"},
        "F": {"type": "string", "format": "int32"},
        "G": {"type": ["number", "null"], "format": "double"},
        "H": {"type": "string", "format": "uri"},
        "I": {"minimum": 0},
        "J": {"$ref": "#/$defs/E", "minimum": 0},
        "K": {"properties": {"p": {"type": "string"}}},
        "L": {"items": {"type": "string"}},
        "M": {"required": ["p"]},
        "N": {"allOf": [{"$ref": "#/$defs/K"}], "required": ["p"]},
        "O": {"type": "integer", "format": "float"},
        "P": {"const": {"not": {}}, "default": {"format": "uri"}},  # data, not schemas
    },
}


def test_each_unenforced_keyword_is_found_where_it_is() -> None:
    found = [(pointer, keyword) for pointer, keyword, _ in unenforced(DOCUMENT, [], False, [])]
    assert found == [
        ("/$defs/A/not", "not"),
        ("/$defs/A/not/required", "required"),  # below `not` too
        ("/$defs/C/unevaluatedProperties", "unevaluatedProperties"),
        ("/$defs/F/format", "format"),
        ("/$defs/H/format", "format"),
        ("/$defs/I/minimum", "minimum"),
        ("/$defs/K/properties", "properties"),
        ("/$defs/L/items", "items"),
        ("/$defs/M/required", "required"),
        ("/$defs/O/format", "format"),
    ]
