"""Functional tests of the generated codecs: each test builds a tiny inline schema into a package
under tmp_path, imports it and checks decode/encode against the wire semantics of DESIGN.md s.4."""

from __future__ import annotations

import importlib
import json
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from acpgen.config import Target
from acpgen.pipeline import build

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def make(tmp_path: Path, defs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Generate a package from `$defs` into tmp_path and import it under a unique name."""
    pkg = "codec_" + uuid.uuid4().hex[:12]
    schema = {"$schema": DRAFT, "title": "test", "$defs": defs}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    target = Target(
        name=pkg, schema=path, output=tmp_path / pkg, package=pkg,
        include_unstable=False, find_unstable=False, command="test",
    )
    result = build(target)
    assert result.ok, [str(d) for d in result.diagnostics]
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return importlib.import_module(pkg)


@pytest.fixture
def gen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    def _gen(defs: dict[str, Any]) -> ModuleType:
        return make(tmp_path, defs, monkeypatch)

    return _gen


def raises_at(pkg: ModuleType, path: str, fn: Any, *args: Any) -> Any:
    with pytest.raises(pkg.ValidationError) as info:
        fn(*args)
    assert info.value.path == path, str(info.value)
    return info.value


META = {"type": ["object", "null"], "additionalProperties": True}


# -- names ---------------------------------------------------------------------------------------


def test_wire_names_and_snake_case_attributes(gen: Any) -> None:
    p = gen({
        "Session": {
            "type": "object",
            "properties": {
                "sessionId": {"type": "string"},
                "maxTokenCount": {"type": "integer"},
                "_meta": META,
            },
            "required": ["sessionId"],
        }
    })
    value = p.decode("Session", {"sessionId": "s1", "maxTokenCount": 3, "_meta": {"k": [1]}})
    assert isinstance(value, p.Session)
    assert value.session_id == "s1"
    assert value.max_token_count == 3
    assert value.meta == {"k": [1]}
    assert p.encode(value) == {"sessionId": "s1", "maxTokenCount": 3, "_meta": {"k": [1]}}
    built = p.Session(session_id="s2", meta={"x": 1})
    assert built.to_dict() == {"sessionId": "s2", "_meta": {"x": 1}}


def test_keyword_property_names_get_trailing_underscore(gen: Any) -> None:
    p = gen({
        "Edge": {
            "type": "object",
            "properties": {"class": {"type": "string"}, "from": {"type": "string"}},
            "required": ["class", "from"],
        }
    })
    value = p.Edge.from_dict({"class": "a", "from": "b"})
    assert value.class_ == "a"
    assert value.from_ == "b"
    assert p.Edge(class_="x", from_="y").to_dict() == {"class": "x", "from": "y"}


# -- presence ------------------------------------------------------------------------------------


def test_unset_none_and_value_are_three_states(gen: Any) -> None:
    p = gen({
        "Patch": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "title": {"type": ["string", "null"]},
            },
            "required": ["id"],
        }
    })
    absent = p.Patch.from_dict({"id": "a"})
    assert absent.title is p.UNSET
    assert absent.to_dict() == {"id": "a"}
    null = p.Patch.from_dict({"id": "a", "title": None})
    assert null.title is None
    assert null.to_dict() == {"id": "a", "title": None}
    value = p.Patch.from_dict({"id": "a", "title": "t"})
    assert value.title == "t"
    assert value.to_dict() == {"id": "a", "title": "t"}
    # Constructed in Python: UNSET by default.
    assert p.Patch(id="b").to_dict() == {"id": "b"}
    assert p.Patch(id="b", title=None).to_dict() == {"id": "b", "title": None}


def test_required_missing_raises_with_key_in_path(gen: Any) -> None:
    p = gen({
        "Thing": {
            "type": "object",
            "properties": {"sessionId": {"type": "string"}},
            "required": ["sessionId"],
        }
    })
    err = raises_at(p, "sessionId", p.decode, "Thing", {})
    assert "missing" in err.message
    # A non-nullable optional-less field rejects null too.
    raises_at(p, "sessionId", p.decode, "Thing", {"sessionId": None})


def test_validation_error_is_value_error_and_str_starts_with_path(gen: Any) -> None:
    p = gen({
        "Thing": {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        }
    })
    assert issubclass(p.ValidationError, ValueError)
    with pytest.raises(ValueError) as info:
        p.decode("Thing", {"count": "three"})
    err = info.value
    assert isinstance(err, p.ValidationError)
    assert err.path == "count"
    assert str(err).startswith("count")
    assert err.message in str(err)


# -- tagged unions -------------------------------------------------------------------------------


CONTENT_DEFS: dict[str, Any] = {
    "TextContent": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "ImageContent": {
        "type": "object",
        "properties": {"data": {"type": "string"}, "mimeType": {"type": "string"}},
        "required": ["data", "mimeType"],
    },
    "Block": {
        "oneOf": [
            {
                "type": "object",
                "properties": {"type": {"type": "string", "const": "text"}},
                "required": ["type"],
                "allOf": [{"$ref": "#/$defs/TextContent"}],
            },
            {
                "type": "object",
                "properties": {"type": {"type": "string", "const": "image"}},
                "required": ["type"],
                "allOf": [{"$ref": "#/$defs/ImageContent"}],
            },
        ]
    },
}


def test_tagged_union_decodes_each_variant_and_encodes_tag(gen: Any) -> None:
    p = gen(CONTENT_DEFS)
    text = p.decode("Block", {"type": "text", "text": "hi"})
    assert type(text) is p.TextBlock
    assert text.text == "hi"
    assert not hasattr(text, "type")
    image = p.decode("Block", {"type": "image", "data": "AA==", "mimeType": "image/png"})
    assert type(image) is p.ImageBlock
    assert image.mime_type == "image/png"
    # The tag is written without the user passing it.
    assert p.TextBlock(text="x").to_dict() == {"type": "text", "text": "x"}
    assert p.encode(p.ImageBlock(data="d", mime_type="m")) == {"type": "image", "data": "d", "mimeType": "m"}
    assert p.encode(image) == {"type": "image", "data": "AA==", "mimeType": "image/png"}


def test_closed_union_unknown_tag_is_error_at_tag(gen: Any) -> None:
    p = gen(CONTENT_DEFS)
    err = raises_at(p, "type", p.decode, "Block", {"type": "audio", "data": "x"})
    assert "audio" in err.message
    raises_at(p, "type", p.decode, "Block", {"text": "no tag"})


def test_tagged_union_error_inside_variant_has_path(gen: Any) -> None:
    p = gen(CONTENT_DEFS)
    raises_at(p, "mimeType", p.decode, "Block", {"type": "image", "data": "x"})
    raises_at(p, "text", p.decode, "Block", {"type": "text", "text": 5})


def test_one_payload_shared_by_two_tags(gen: Any) -> None:
    p = gen({
        "Chunk": {
            "type": "object",
            "properties": {"content": {"type": "string"}},
            "required": ["content"],
        },
        "Update": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"type": "string", "const": "user_chunk"}},
                    "required": ["kind"],
                    "allOf": [{"$ref": "#/$defs/Chunk"}],
                },
                {
                    "type": "object",
                    "properties": {"kind": {"type": "string", "const": "agent_chunk"}},
                    "required": ["kind"],
                    "allOf": [{"$ref": "#/$defs/Chunk"}],
                },
            ]
        },
    })
    user = p.decode("Update", {"kind": "user_chunk", "content": "a"})
    agent = p.decode("Update", {"kind": "agent_chunk", "content": "b"})
    assert type(user) is p.UserChunkUpdate
    assert type(agent) is p.AgentChunkUpdate
    assert (user.content, agent.content) == ("a", "b")
    assert p.encode(user) == {"kind": "user_chunk", "content": "a"}
    assert p.AgentChunkUpdate(content="c").to_dict() == {"kind": "agent_chunk", "content": "c"}
    # The payload itself stays usable as its own type.
    assert p.decode("Chunk", {"content": "z"}) == p.Chunk(content="z")


SERVER_DEFS: dict[str, Any] = {
    "Stdio": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
    "Http": {
        "type": "object",
        "properties": {"url": {"type": "string"}},
        "required": ["url"],
    },
    "Server": {
        "anyOf": [
            {
                "type": "object",
                "properties": {"type": {"type": "string", "const": "http"}},
                "required": ["type"],
                "allOf": [{"$ref": "#/$defs/Http"}],
            },
            {"title": "stdio", "allOf": [{"$ref": "#/$defs/Stdio"}]},
        ]
    },
}


def test_default_variant_when_tag_absent(gen: Any) -> None:
    p = gen(SERVER_DEFS)
    stdio = p.decode("Server", {"command": "run"})
    assert type(stdio) is p.Stdio  # a tagless `$ref` variant is the `$defs` class itself
    assert not hasattr(p, "StdioServer")
    assert stdio.command == "run"
    assert p.encode(stdio) == {"command": "run"}
    http = p.decode("Server", {"type": "http", "url": "u"})
    assert type(http) is p.HttpServer and issubclass(p.HttpServer, p.Http)  # the `$defs` class + the tag
    assert p.encode(http) == {"type": "http", "url": "u"}
    # Absent tag, but the default variant's payload is wrong: error inside it.
    raises_at(p, "command", p.decode, "Server", {})


OPEN_DEFS: dict[str, Any] = {
    "Form": {
        "type": "object",
        "properties": {"fields": {"type": "array", "items": {"type": "string"}}},
        "required": ["fields"],
    },
    "Mode": {
        "anyOf": [
            {
                "type": "object",
                "properties": {"mode": {"type": "string", "const": "form"}},
                "required": ["mode"],
                "allOf": [{"$ref": "#/$defs/Form"}],
            },
            {
                "title": "other",
                "type": "object",
                "properties": {"mode": {"type": "string"}},
                "required": ["mode"],
                "additionalProperties": True,
                "not": {
                    "anyOf": [
                        {"type": "object", "properties": {"mode": {"const": "form"}}, "required": ["mode"]}
                    ]
                },
            },
        ]
    },
}


def test_open_union_unknown_tag_keeps_raw(gen: Any) -> None:
    p = gen(OPEN_DEFS)
    raw = {"mode": "_custom", "deep": {"a": [1, None]}, "n": 2}
    other = p.decode("Mode", raw)
    assert type(other) is p.OtherMode
    assert other.raw == raw
    assert other.tag == "_custom"
    assert p.encode(other) == raw
    form = p.decode("Mode", {"mode": "form", "fields": ["a"]})
    assert type(form) is p.FormMode
    assert p.encode(form) == {"mode": "form", "fields": ["a"]}


def test_open_union_known_tag_with_invalid_payload_is_error(gen: Any) -> None:
    p = gen(OPEN_DEFS)
    raises_at(p, "fields", p.decode, "Mode", {"mode": "form"})
    raises_at(p, "fields[1]", p.decode, "Mode", {"mode": "form", "fields": ["a", 2]})
    # The Other class refuses a known tag on its own too.
    raises_at(p, "mode", p.OtherMode.from_dict, {"mode": "form"})


def test_common_properties_beside_one_of_belong_to_every_variant(gen: Any) -> None:
    defs = json.loads(json.dumps(CONTENT_DEFS))
    defs["Block"]["properties"] = {"_meta": META, "priority": {"type": "integer"}}
    defs["Block"]["required"] = ["priority"]
    p = gen(defs)
    text = p.decode("Block", {"type": "text", "text": "t", "priority": 1, "_meta": {"a": 1}})
    image = p.decode("Block", {"type": "image", "data": "d", "mimeType": "m", "priority": 2})
    assert (text.priority, text.meta) == (1, {"a": 1})
    assert (image.priority, image.meta) == (2, p.UNSET)
    assert p.encode(text) == {"type": "text", "text": "t", "priority": 1, "_meta": {"a": 1}}
    assert p.encode(image) == {"type": "image", "data": "d", "mimeType": "m", "priority": 2}
    raises_at(p, "priority", p.decode, "Block", {"type": "text", "text": "t"})


# -- enums ---------------------------------------------------------------------------------------


def test_closed_enum_rejects_unknown_value(gen: Any) -> None:
    p = gen({
        "Kind": {"oneOf": [{"const": "read"}, {"const": "edit"}]},
        "Call": {
            "type": "object",
            "properties": {"kind": {"$ref": "#/$defs/Kind"}},
            "required": ["kind"],
        },
    })
    assert p.decode("Kind", "read") is p.Kind.READ
    assert p.encode(p.Kind.EDIT) == "edit"
    with pytest.raises(p.ValidationError):
        p.decode("Kind", "delete")
    raises_at(p, "kind", p.decode, "Call", {"kind": "delete"})
    assert p.decode("Call", {"kind": "edit"}).kind is p.Kind.EDIT
    assert p.Call(kind=p.Kind.READ).to_dict() == {"kind": "read"}


def test_open_enum_keeps_unknown_string(gen: Any) -> None:
    p = gen({
        "Stop": {
            "anyOf": [
                {"const": "end_turn", "title": "EndTurn"},
                {"const": "refusal"},
                {"type": "string", "title": "other"},
            ]
        },
        "Result": {
            "type": "object",
            "properties": {"stop": {"$ref": "#/$defs/Stop"}},
            "required": ["stop"],
        },
    })
    assert p.decode("Stop", "end_turn") is p.Stop.END_TURN
    unknown = p.decode("Stop", "_vendor_stop")
    assert unknown == "_vendor_stop"
    assert p.encode(unknown) == "_vendor_stop"
    result = p.decode("Result", {"stop": "later"})
    assert result.stop == "later"
    assert p.encode(result) == {"stop": "later"}
    assert p.encode(p.decode("Result", {"stop": "refusal"})) == {"stop": "refusal"}
    raises_at(p, "stop", p.decode, "Result", {"stop": 3})


def test_integer_open_enum(gen: Any) -> None:
    p = gen({
        "Code": {
            "anyOf": [
                {"const": -32700, "title": "Parse error"},
                {"const": -32601, "title": "Method not found"},
                {"type": "integer", "title": "other"},
            ]
        },
        "Error": {
            "type": "object",
            "properties": {"code": {"$ref": "#/$defs/Code"}},
            "required": ["code"],
        },
    })
    known = p.decode("Code", -32601)
    assert known is p.Code.METHOD_NOT_FOUND
    assert p.encode(known) == -32601
    err = p.decode("Error", {"code": 42})
    assert err.code == 42
    assert p.encode(err) == {"code": 42}
    assert p.decode("Error", {"code": -32700}).code is p.Code.PARSE_ERROR
    raises_at(p, "code", p.decode, "Error", {"code": "42"})
    raises_at(p, "code", p.decode, "Error", {"code": True})


# -- x-deserialize-* -----------------------------------------------------------------------------


def test_default_on_error(gen: Any) -> None:
    p = gen({
        "Level": {"oneOf": [{"const": "low"}, {"const": "high"}]},
        "Prefs": {
            "type": "object",
            "properties": {
                "level": {
                    "allOf": [{"$ref": "#/$defs/Level"}],
                    "default": "low",
                    "x-deserialize-default-on-error": True,
                },
                "title": {"type": ["string", "null"], "x-deserialize-default-on-error": True},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-deserialize-default-on-error": True,
                },
                "needed": {"type": "string", "x-deserialize-default-on-error": True},
                "strict": {"type": "integer"},
            },
            "required": ["needed"],
        },
    })
    prefs = p.decode("Prefs", {"needed": "n", "level": "bogus", "title": 7, "tags": ["a", 2]})
    assert prefs.level is p.Level.LOW
    assert prefs.title is None
    assert prefs.tags == []
    assert prefs.needed == "n"
    good = p.decode("Prefs", {"needed": "n", "level": "high", "title": "t", "tags": ["a"]})
    assert (good.level, good.title, good.tags) == (p.Level.HIGH, "t", ["a"])
    # A missing required key is still an error, and unannotated fields stay strict.
    raises_at(p, "needed", p.decode, "Prefs", {})
    raises_at(p, "strict", p.decode, "Prefs", {"needed": "n", "strict": "x"})


def test_default_on_error_reaches_beneath_the_value(gen: Any) -> None:
    p = gen({
        "Inner": {
            "type": "object",
            "properties": {"value": {"type": "integer"}},
            "required": ["value"],
        },
        "Outer": {
            "type": "object",
            "properties": {
                "inner": {
                    "anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}],
                    "x-deserialize-default-on-error": True,
                },
            },
        },
    })
    assert p.decode("Outer", {"inner": {"value": "bad"}}).inner is None
    assert p.decode("Outer", {"inner": {"value": 1}}).inner == p.Inner(value=1)
    assert p.decode("Outer", {}).inner is p.UNSET


def test_skip_invalid_items_drops_and_reports(gen: Any) -> None:
    p = gen({
        "Item": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
        "Listing": {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/Item"},
                    "x-deserialize-skip-invalid-items": True,
                },
                "ids": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "x-deserialize-skip-invalid-items": True,
                },
            },
            "required": ["items"],
        },
    })
    seen: list[tuple[str, int, Any]] = []

    def hook(owner: str, index: int, error: Any) -> None:
        seen.append((owner, index, error))

    previous = p.set_skip_hook(hook)
    try:
        listing = p.decode("Listing", {
            "items": [{"name": "a"}, {"name": 1}, {}, {"name": "d"}],
            "ids": [1, "2", 3],
        })
    finally:
        restored = p.set_skip_hook(previous)
    assert restored is hook
    assert listing.items == [p.Item(name="a"), p.Item(name="d")]
    assert listing.ids == [1, 3]
    assert [index for _, index, _ in seen] == [1, 2, 1]
    assert all(isinstance(error, p.ValidationError) for _, _, error in seen)
    assert all(isinstance(owner, str) and owner for owner, _, _ in seen)
    assert seen[0][2].path == "name"
    # A value that is not an array at all is still an error.
    raises_at(p, "items", p.decode, "Listing", {"items": "nope"})


def test_skip_invalid_items_default_hook_logs(gen: Any, caplog: pytest.LogCaptureFixture) -> None:
    p = gen({
        "Listing": {
            "type": "object",
            "properties": {
                "ids": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "x-deserialize-skip-invalid-items": True,
                },
            },
        },
    })
    with caplog.at_level("WARNING"):
        assert p.decode("Listing", {"ids": [1, "x"]}).ids == [1]
    assert any("dropped" in r.getMessage() for r in caplog.records)


# -- objects, scalars ----------------------------------------------------------------------------


def test_unknown_keys_ignored(gen: Any) -> None:
    p = gen({
        "Thing": {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
        }
    })
    value = p.decode("Thing", {"a": "x", "futureField": {"n": 1}, "_other": None})
    assert value == p.Thing(a="x")
    assert p.encode(value) == {"a": "x"}


def test_bool_is_not_int(gen: Any) -> None:
    p = gen({
        "Counter": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "flag": {"type": "boolean"}},
            "required": ["n"],
        }
    })
    raises_at(p, "n", p.decode, "Counter", {"n": True})
    raises_at(p, "flag", p.decode, "Counter", {"n": 1, "flag": 1})
    raises_at(p, "n", p.decode, "Counter", {"n": 1.5})
    assert p.decode("Counter", {"n": 0, "flag": False}) == p.Counter(n=0, flag=False)


def test_integer_format_range(gen: Any) -> None:
    p = gen({
        "Limits": {
            "type": "object",
            "properties": {
                "port": {"type": "integer", "format": "uint16"},
                "offset": {"type": "integer", "format": "int8"},
                "big": {"type": "integer", "format": "uint64"},
            },
            "required": ["port"],
        }
    })
    raises_at(p, "port", p.decode, "Limits", {"port": 300000})
    raises_at(p, "port", p.decode, "Limits", {"port": -1})
    raises_at(p, "offset", p.decode, "Limits", {"port": 1, "offset": 128})
    raises_at(p, "big", p.decode, "Limits", {"port": 1, "big": -1})
    ok = p.decode("Limits", {"port": 65535, "offset": -128, "big": 2**64 - 1})
    assert (ok.port, ok.offset, ok.big) == (65535, -128, 2**64 - 1)


def test_number_accepts_int_literal_unchanged(gen: Any) -> None:
    p = gen({
        "Cost": {
            "type": "object",
            "properties": {"amount": {"type": "number", "format": "double"}},
            "required": ["amount"],
        }
    })
    value = p.decode("Cost", {"amount": 3})
    assert value.amount == 3 and type(value.amount) is int
    assert p.encode(value) == {"amount": 3}
    assert json.dumps(p.encode(value)) == '{"amount": 3}'
    assert p.decode("Cost", {"amount": 2.5}).amount == 2.5
    raises_at(p, "amount", p.decode, "Cost", {"amount": "3"})
    raises_at(p, "amount", p.decode, "Cost", {"amount": True})


def test_nested_error_path(gen: Any) -> None:
    p = gen({
        "Inner": {
            "type": "object",
            "properties": {"value": {"type": "integer"}},
            "required": ["value"],
        },
        "Entry": {
            "type": "object",
            "properties": {"inner": {"$ref": "#/$defs/Inner"}},
            "required": ["inner"],
        },
        "Root": {
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Entry"}}},
            "required": ["items"],
        },
    })
    good = {"inner": {"value": 1}}
    err = raises_at(p, "items[1].inner.value", p.decode, "Root", {"items": [good, {"inner": {"value": "x"}}]})
    assert str(err).startswith("items[1].inner.value")
    raises_at(p, "items[0].inner.value", p.decode, "Root", {"items": [{"inner": {}}]})
    raises_at(p, "items[2].inner", p.decode, "Root", {"items": [good, good, {"inner": 3}]})
    root = p.decode("Root", {"items": [good]})
    assert root.items[0].inner.value == 1


def test_all_of_flattens_ref_plus_own_properties(gen: Any) -> None:
    p = gen({
        "Base": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "_meta": META},
            "required": ["id"],
        },
        "Derived": {
            "type": "object",
            "allOf": [{"$ref": "#/$defs/Base"}],
            "properties": {"extraValue": {"type": "integer"}},
            "required": ["extraValue"],
        },
    })
    value = p.decode("Derived", {"id": "i", "extraValue": 2, "_meta": {}})
    assert type(value) is p.Derived
    assert (value.id, value.extra_value, value.meta) == ("i", 2, {})
    assert p.encode(value) == {"id": "i", "extraValue": 2, "_meta": {}}
    raises_at(p, "id", p.decode, "Derived", {"extraValue": 2})
    raises_at(p, "extraValue", p.decode, "Derived", {"id": "i"})


def test_map_decodes_values(gen: Any) -> None:
    p = gen({
        "Var": {
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        },
        "Env": {
            "type": "object",
            "properties": {
                "vars": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Var"}},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            },
            "required": ["vars"],
        },
    })
    env = p.decode("Env", {"vars": {"A": {"value": "1"}, "B": {"value": "2"}}, "counts": {"x": 1}})
    assert env.vars == {"A": p.Var(value="1"), "B": p.Var(value="2")}
    assert env.counts == {"x": 1}
    assert p.encode(env) == {"vars": {"A": {"value": "1"}, "B": {"value": "2"}}, "counts": {"x": 1}}
    raises_at(p, "vars.B.value", p.decode, "Env", {"vars": {"A": {"value": "1"}, "B": {"value": 2}}})
    raises_at(p, "counts.y", p.decode, "Env", {"vars": {}, "counts": {"y": "1"}})


def test_schema_default_fills_absent_optional_field(gen: Any) -> None:
    p = gen({
        "Opts": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "default": "auto"},
                "retries": {"type": "integer", "default": 3},
                "labels": {"type": "array", "items": {"type": "string"}, "default": []},
            },
        }
    })
    opts = p.decode("Opts", {})
    assert (opts.mode, opts.retries, opts.labels) == ("auto", 3, [])
    opts.labels.append("mutated")
    assert p.decode("Opts", {}).labels == []  # each decode gets a fresh default
    assert p.Opts().retries == 3 and p.Opts().labels == []
    given = p.decode("Opts", {"mode": "manual", "retries": 0, "labels": ["x"]})
    assert (given.mode, given.retries, given.labels) == ("manual", 0, ["x"])
    assert p.encode(given) == {"mode": "manual", "retries": 0, "labels": ["x"]}


# -- registry ------------------------------------------------------------------------------------


def test_decode_by_def_name_and_types_registry(gen: Any) -> None:
    defs = json.loads(json.dumps(CONTENT_DEFS))
    defs["Role"] = {"enum": ["user", "assistant"]}
    defs["Name"] = {"type": "string"}
    p = gen(defs)
    assert set(p.TYPES) == set(defs)
    assert p.TYPES["TextContent"] is p.TextContent
    assert p.TYPES["Role"] is p.Role
    assert p.decode("Role", "assistant") is p.Role.ASSISTANT
    assert type(p.decode("Block", {"type": "text", "text": "t"})) is p.TextBlock
    assert p.decode("Name", "n") == "n"
    with pytest.raises(KeyError):
        p.decode("Nope", {})


# -- regressions found while writing these tests -------------------------------------------------


def test_list_of_nullable_structs_round_trips(gen: Any) -> None:
    defs = json.loads(json.dumps(CONTENT_DEFS))
    defs["Holder"] = {
        "type": "object",
        "properties": {
            "blocks": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/Block"}, {"type": "null"}]}},
            "byName": {
                "type": "object",
                "additionalProperties": {"anyOf": [{"$ref": "#/$defs/TextContent"}, {"type": "null"}]},
            },
            "one": {"anyOf": [{"$ref": "#/$defs/Block"}, {"type": "null"}]},
        },
    }
    p = gen(defs)
    wire = {
        "blocks": [None, {"type": "text", "text": "x"}],
        "byName": {"a": None, "b": {"text": "y"}},
        "one": None,
    }
    holder = p.decode("Holder", wire)
    assert holder.blocks == [None, p.TextBlock(text="x")]
    assert holder.by_name == {"a": None, "b": p.TextContent(text="y")}
    assert p.encode(holder) == wire


def test_min_items_error_message_is_formatted(gen: Any) -> None:
    p = gen({
        "Batch": {
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "integer"}, "minItems": 2}},
            "required": ["ids"],
        }
    })
    err = raises_at(p, "ids", p.decode, "Batch", {"ids": [1]})
    assert err.message == "expected at least 2 items, got 1"
    assert p.decode("Batch", {"ids": [1, 2]}).ids == [1, 2]


def test_additional_properties_true_keeps_the_other_keys(gen: Any) -> None:
    # `additionalProperties: true` beside properties (ACP's McpError) makes the other keys data.
    p = gen({
        "Inner": {"type": "object", "properties": {"code": {"type": "integer"}}, "required": ["code"],
                  "additionalProperties": True},
        "Plain": {"type": "object", "properties": {"code": {"type": "integer"}}, "required": ["code"]},
    })
    wire = {"code": 1, "detail": {"x": [1, None]}, "_meta": None}
    inner = p.decode("Inner", wire)
    assert inner.unknown_fields == {"detail": {"x": [1, None]}, "_meta": None}
    assert p.encode(inner) == wire
    assert p.encode(p.decode("Plain", wire)) == {"code": 1}


def test_open_integer_enum_keeps_the_fallbacks_format_range(gen: Any) -> None:
    p = gen({"Code": {"anyOf": [{"const": -32700, "title": "Parse error"},
                                {"title": "Other", "type": "integer", "format": "int32"}]}})
    assert p.decode("Code", -32700) is p.Code.PARSE_ERROR
    assert p.decode("Code", 7) == 7
    with pytest.raises(p.ValidationError, match="from -2147483648 to 2147483647"):
        p.decode("Code", 2**40)


def test_a_default_on_error_tag_that_is_malformed_selects_the_default_variant(gen: Any) -> None:
    p = gen({"Idle": {
        "type": "object",
        "properties": {"stopReason": {"type": ["string", "null"], "x-deserialize-default-on-error": True}},
        "anyOf": [
            {"type": "object", "properties": {"stopReason": {"const": "end_turn"}}, "required": ["stopReason"]},
            {"title": "none", "type": "object", "properties": {"stopReason": {"type": "null"}}},
        ],
    }})
    assert type(p.decode("Idle", {"stopReason": "end_turn"})).__name__ == "EndTurnIdle"
    for malformed in (0, [], {"x": 1}, None):
        assert type(p.decode("Idle", {"stopReason": malformed})).__name__ == "NoneIdle"
    assert type(p.decode("Idle", {})).__name__ == "NoneIdle"


def test_an_open_unions_other_variant_checks_the_common_properties(gen: Any) -> None:
    p = gen({"Request": {
        "type": "object", "required": ["message"], "properties": {"message": {"type": "string"}},
        "anyOf": [
            {"type": "object", "properties": {"mode": {"const": "form"}}, "required": ["mode"]},
            {"title": "other", "type": "object", "properties": {"mode": {"type": "string"}}, "required": ["mode"],
             "not": {"anyOf": [{"properties": {"mode": {"const": "form"}}, "required": ["mode"]}]},
             "additionalProperties": True},
        ],
    }})
    wire = {"mode": "_custom", "message": "hi", "extra": [1]}
    assert p.encode(p.decode("Request", wire)) == wire
    raises_at(p, "message", p.decode, "Request", {"mode": "_custom", "message": 0})
    raises_at(p, "message", p.decode, "Request", {"mode": "_custom"})


def test_to_dict_locals_never_hide_a_name_its_expressions_use(gen: Any) -> None:
    """`to_dict` reads each optional field once into a local (`if (meta := self.meta) is not
    UNSET:`); a field named like a name the method calls (`encode_value`, `type`, the loop
    variables `i0` / `k0`, `out`) gets a local of its own, and every field still encodes."""
    value = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    pkg = gen({
        "Value": value,
        "Thing": {"type": "object", "properties": {
            "encodeValue": {"type": "string"}, "type": {"type": "string"}, "out": {"type": "string"},
            "i0": {"type": "string"}, "k0": {"type": "string"}, "value": {"type": "string"},
            "content": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Value"}},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Value"}},
            "tags": {"type": "object", "additionalProperties": {"type": "array", "items": {"$ref": "#/$defs/Value"}}},
        }},
    })
    wire = {"encodeValue": "e", "type": "t", "out": "o", "i0": "i", "k0": "k", "value": "v",
            "content": {"a": "x", "b": 2}, "items": ["y", 3], "tags": {"t": ["z", 4]}}
    thing = pkg.Thing.from_dict(wire)
    assert thing.to_dict() == wire
    assert json.dumps(thing.to_dict()) == json.dumps(wire)  # the wire order too
    assert pkg.Thing.from_dict({"items": []}).to_dict() == {"items": []}
