"""Checked definitions on tiny schemas: a definition whose schema says more than its Python types is
judged by its schema before it is decoded; one the types cannot say is the JSON value, checked; keys
a schema gives meaning to beyond its properties are kept; overlapping union branches keep what the
value carries; an integer-valued number is an integer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_intersections import generate

STRUCT = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_keywords_beyond_the_types_are_enforced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg, codes = generate(tmp_path, monkeypatch, "chk_enforced", {
        "Tag": {"type": "string", "pattern": "^[a-z]+$", "not": {"const": "admin"}},
        "Pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
        "Either": {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
    })
    assert "unsupported-keyword" not in codes and "oneOf-not-exclusive" not in codes
    assert pkg.decode("Tag", "ok") == "ok"
    for bad in ("Admin", "admin"):
        with pytest.raises(pkg.ValidationError):
            pkg.decode("Tag", bad)
    assert pkg.decode("Pair", ["a", 1]) == ["a", 1]
    with pytest.raises(pkg.ValidationError, match=r"\[2\]"):
        pkg.decode("Pair", ["a", 1, 2])
    assert pkg.decode("Either", 1) == 1
    with pytest.raises(pkg.ValidationError, match="more than one `oneOf` alternative"):
        pkg.decode("Either", 3)  # an integer of at least 2: both alternatives accept it


def test_what_the_types_cannot_say_is_the_checked_json_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg, codes = generate(tmp_path, monkeypatch, "chk_json", {
        "Level": {"enum": ["low", 2, None]},
        "Loose": {"properties": {"n": {"type": "integer"}}},  # no `type`: any JSON value, objects checked
    })
    assert codes.count("checked-json") == 2
    assert [pkg.decode("Level", v) for v in ("low", 2, None)] == ["low", 2, None]
    with pytest.raises(pkg.ValidationError):
        pkg.decode("Level", "high")
    assert pkg.decode("Loose", 7) == 7 and pkg.decode("Loose", {"n": 1}) == {"n": 1}
    with pytest.raises(pkg.ValidationError, match="n: expected integer"):
        pkg.decode("Loose", {"n": "one"})


def test_keys_the_schema_gives_meaning_to_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env: dict[str, Any] = {**STRUCT, "patternProperties": {"^X-": {"type": "integer"}}, "required": ["name", "token"]}
    pkg, _ = generate(tmp_path, monkeypatch, "chk_kept", {"Env": env})
    wire = {"name": "a", "token": "t", "X-a": 1}
    assert pkg.encode(pkg.decode("Env", wire)) == wire
    with pytest.raises(pkg.ValidationError, match="token: a required key is missing"):
        pkg.decode("Env", {"name": "a"})
    with pytest.raises(pkg.ValidationError, match="X-a: expected integer"):
        pkg.decode("Env", {"name": "a", "token": "t", "X-a": "one"})


def test_overlapping_branches_keep_what_the_value_carries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}
    large = {"type": "object", "properties": {"kind": {"type": "string"}, "items": {"type": "array"}},
             "required": ["kind", "items"]}
    pkg, _ = generate(tmp_path, monkeypatch, "chk_widest", {
        "Small": small, "Large": large, "Result": {"anyOf": [{"$ref": "#/$defs/Small"}, {"$ref": "#/$defs/Large"}]},
    })
    wire = {"kind": "list", "items": [1, 2]}
    value = pkg.decode("Result", wire)
    assert type(value).__name__ == "Large" and pkg.encode(value) == wire
    assert type(pkg.decode("Result", {"kind": "x"})).__name__ == "Small"


def test_an_integer_valued_number_is_an_integer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg, _ = generate(tmp_path, monkeypatch, "chk_integral", {
        "Count": {"type": "integer"}, "Zero": {"const": 0}, "Code": {"enum": [1, 2]},
    })
    assert pkg.decode("Count", 3.0) == 3 and type(pkg.decode("Count", 3.0)) is int
    assert pkg.decode("Zero", 0.0) == 0 and pkg.decode("Code", 2.0) == 2
    for bad, name in ((True, "Count"), (False, "Zero"), (1.5, "Code")):
        with pytest.raises(pkg.ValidationError):
            pkg.decode(name, bad)
