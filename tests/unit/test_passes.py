"""Unit tests of the IR and render passes, table-driven: naming, the union recognisers (the tag,
enum-like alternatives, the `$ref` payload of a variant) and the per-field decode plan."""

from __future__ import annotations

from typing import Any

import pytest

from acpgen.diagnostics import Diagnostics
from acpgen.ir import naming
from acpgen.ir.build import Builder
from acpgen.ir.model import Field, Package, TypeRef
from acpgen.render.codegen import Emitter, Imports, annotation


@pytest.mark.parametrize(("text", "snake", "pascal"), [
    ("sessionId", "session_id", "SessionId"),
    ("_meta", "meta", "Meta"),
    ("HTTPHeaders", "http_headers", "HTTPHeaders"),
    ("agent_message_chunk", "agent_message_chunk", "AgentMessageChunk"),
    ("class", "class_", "Class"),
    ("type", "type", "Type"),
    ("list", "list", "List"),  # builtins are attributes as they are (class bodies alias them)
    ("str", "str", "Str"),
    ("id", "id", "Id"),
    ("field", "field", "Field"),  # dataclasses' `field` is aliased in class bodies as well
    ("from", "from_", "From"),  # the one escape: keywords ...
    ("match", "match_", "Match"),  # ... soft keywords ...
    ("toDict", "to_dict_", "ToDict"),  # ... and the members every class has
    ("tag", "tag_", "Tag"),
    ("self", "self_", "Self"),
    ("1st", "f_1st", "Value1st"),
    ("", "field", ""),  # the placeholder for a name with no letters or digits
])
def test_snake_and_pascal(text: str, snake: str, pascal: str) -> None:
    assert naming.snake(text) == snake
    assert naming.pascal(text) == pascal


@pytest.mark.parametrize(("key", "name"), [
    ("PromptRequest", "PromptRequest"),
    ("prompt-request", "PromptRequest"),
    ("None", "None_"),
    ("KeyError", "KeyError_"),  # a builtin: type checkers read a later class of that name as the builtin
    ("BytesWarning", "BytesWarning_"),
    ("O", "O_"),
    ("lowercase", "Lowercase"),
    # Names the generated modules use for themselves are not reserved: they import them under aliases.
    ("Literal", "Literal"),
    ("Model", "Model"),
    ("RequestError", "RequestError"),
    ("TYPE_CHECKING", "TYPE_CHECKING"),
])
def test_class_names(key: str, name: str) -> None:
    assert naming.class_name(key) == name


@pytest.mark.parametrize(("rename", "ok"), [
    ("Prompt", True), ("日本", True), ("Literal", True), ("RequestError", True),
    ("prompt", False), ("str", False), ("_Prompt", False), ("KeyError", False), ("class", False), ("O", False),
])
def test_a_class_rename_must_be_a_class_name(rename: str, ok: bool) -> None:
    """Lowercase and `_` names are the generated code's locals, builtins and private helpers."""
    b = Builder({"$defs": {"A": OBJ}}, Diagnostics("test.json"), {"/$defs/A": rename})
    b.build()
    assert [d.code for d in b.diags.items if d.level == "error"] == ([] if ok else ["bad-rename"])


def builder(defs: dict[str, Any]) -> Builder:
    return Builder({"$defs": defs}, Diagnostics("test.json"))


def tagged(tag: str, value: str, ref: str = "", **extra: Any) -> dict[str, Any]:
    alt: dict[str, Any] = {"type": "object", "properties": {tag: {"const": value}}, "required": [tag], **extra}
    if ref:
        alt["allOf"] = [{"$ref": f"#/$defs/{ref}"}]
    return alt


OBJ = {"type": "object", "properties": {"x": {"type": "string"}}}


@pytest.mark.parametrize(("alts", "tag"), [
    ([tagged("type", "a", "A"), tagged("type", "b", "B")], "type"),
    ([tagged("kind", "a"), {"allOf": [{"$ref": "#/$defs/A"}]}], "kind"),  # a default variant
    ([tagged("type", "a"), tagged("type", "a")], ""),  # the same value twice: no tag
    ([{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], ""),  # nothing constant
    ([tagged("type", "a"), {"properties": {"type": {"type": "string"}}, "not": {}}], "type"),  # open
    ([tagged("type", "a"), {"properties": {"type": {"type": "integer"}}}], ""),
])
def test_detect_tag(alts: list[Any], tag: str) -> None:
    assert builder({"A": OBJ, "B": OBJ}).detect_tag(alts) == tag


@pytest.mark.parametrize(("alts", "enum_like"), [
    ([{"const": "a"}, {"const": "b"}], True),
    ([{"const": "a"}, {"type": "string", "title": "other"}], True),  # an open enum
    ([{"const": 1}, {"const": 2}], True),
    ([{"const": 1}, {"const": "b"}], False),
    ([{"const": "a"}, {"type": "integer"}], False),
    ([{"const": "a"}, {"type": "string"}, {"type": "string"}], False),
    ([OBJ, OBJ], False),
])
def test_enum_like(alts: list[Any], enum_like: bool) -> None:
    assert Builder.enum_like(alts) is enum_like


UNION = {"oneOf": []}


@pytest.mark.parametrize(("union", "alt", "payload"), [
    (UNION, tagged("type", "a", "A"), "A"),  # `{tag} + $ref A`: a subclass of A adds the tag
    (UNION, {"title": "stdio", "allOf": [{"$ref": "#/$defs/A"}]}, "A"),  # tagless: A itself
    (UNION, {"$ref": "#/$defs/A"}, "A"),
    (UNION, tagged("type", "a", "A", description="its own prose"), "A"),
    (UNION, tagged("type", "a"), ""),  # inline: a class of its own
    (UNION, {**tagged("type", "a", "A"), "properties": {"type": {"const": "a"}, "y": {}}}, ""),  # more fields
    (UNION, {**tagged("type", "a", "A"), "additionalProperties": False}, ""),
    ({"oneOf": [], "properties": {"sessionId": {"type": "string"}}}, tagged("type", "a", "A"), ""),  # common
    (UNION, tagged("type", "a", "E"), ""),  # an enum is no object type
    (UNION, tagged("type", "a", "U"), ""),  # nor is a union
    (UNION, tagged("type", "a", "Missing"), ""),
])
def test_payload_of_a_variant(union: dict[str, Any], alt: dict[str, Any], payload: str) -> None:
    b = builder({"A": OBJ, "E": {"enum": ["x", "y"]}, "U": {"anyOf": [OBJ, {"type": "string"}]}})
    assert b.payload_def(union, alt, "type") == payload


def field(wire: str, t: TypeRef, required: bool = True, **kw: Any) -> Field:
    return Field(wire, naming.snake(wire), t, required, kw.pop("nullable", False), "", "", **kw)


STR = TypeRef("str")
PKG = Package("p", (), "", (), (), ())


@pytest.mark.parametrize(("f", "lines", "names"), [
    (field("name", STR), [
        "name = data['name']",
        "if type(name) is not str:",
        "    raise expected('a string', name, 'name')",
    ], {"expected"}),
    (field("note", STR, required=False), [
        "note = data.get('note', UNSET)",
        "if note is not UNSET and (type(note) is not str):",
        "    raise expected('a string', note, 'note')",
    ], {"UNSET", "expected"}),
    (field("flag", TypeRef("bool"), required=False, default=False, default_on_error=True), [
        "flag = data.get('flag', UNSET)",
        "if flag is UNSET or type(flag) is not bool:",
        "    flag = False",
    ], {"UNSET"}),
    (field("n", TypeRef("int"), nullable=True), [
        "n = data['n']",
        "if n is not None and (type(n) is not int):",
        "    raise expected('an integer', n, 'n')",
    ], {"expected"}),
    (field("tags", TypeRef.list_of(STR)), [
        "try:",
        "    tags = _dec_list_str(data['tags'])",
        "except ValidationError as e:",
        "    raise e.at('tags') from None",
    ], {"ValidationError"}),
    (field("tags", TypeRef.list_of(STR), required=False, default_on_null=True, default=[]), [
        "tags = data.get('tags', UNSET)",
        "if tags is UNSET:",
        "    tags = []",
        "elif tags is None:",
        "    tags = []",
        "else:",
        "    try:",
        "        tags = _dec_list_str(tags)",
        "    except ValidationError as e:",
        "        raise e.at('tags') from None",
    ], {"UNSET", "ValidationError", "field"}),
])
def test_field_plan_decode_statements(f: Field, lines: list[str], names: set[str]) -> None:
    e = Emitter(PKG)
    plan = e.field_plan(f, "Owner", f.py, "")
    assert e.decode_statements(plan) == lines
    assert names <= e.imports.names


@pytest.mark.parametrize(("f", "default"), [
    (field("name", STR), ""),
    (field("note", STR, required=False), "UNSET"),
    (field("flag", TypeRef("bool"), required=False, default=False), "False"),
    (field("tags", TypeRef.list_of(STR), required=False, default=[]), "field(default_factory=list)"),
    (field("map", TypeRef("object"), required=False, default={}), "field(default_factory=dict)"),
    (field("kind", TypeRef("literal", const="x"), required=False, default="x"), "'x'"),
])
def test_field_plan_class_default(f: Field, default: str) -> None:
    assert Emitter(PKG).field_plan(f, "Owner", f.py, "").class_default == default


@pytest.mark.parametrize(("t", "text", "names"), [
    (STR, "str", set()),
    (TypeRef("any"), "JsonValue", {"JsonValue"}),
    (TypeRef("literal", const="a"), "Literal['a']", {"Literal"}),
    (TypeRef.list_of(TypeRef("object")), "list[dict[str, JsonValue]]", {"JsonValue"}),
    (TypeRef.nullable(TypeRef("int")), "int | None", set()),
])
def test_annotation_records_what_it_prints(t: TypeRef, text: str, names: set[str]) -> None:
    imports = Imports()
    assert annotation({}, t, imports.use) == text
    assert imports.names == names


def test_imports_are_grouped_and_type_checking_only_names_kept_apart() -> None:
    imports = Imports()
    for name in ("UNSET", "Final", "Self", "field", "Model", "Callable", "expected"):
        imports.use(name)
    assert imports.lines() == (
        "from collections.abc import Callable\n"
        "from typing import TYPE_CHECKING, Final\n\n"
        "from ._codec import UNSET, Model, expected, field\n\n"
        "if TYPE_CHECKING:\n"
        "    from typing_extensions import Self"
    )
