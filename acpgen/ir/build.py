"""Build the IR from a loaded schema.

Every `$defs` name is reserved before anything is converted. Each definition then goes through
an ordered cascade of small recognisers (`classify`): scalar alias, enum (closed or open),
nullable wrapper, tagged union, untagged union, struct. Object composition (`allOf`, properties
beside a union) is flattened into fields; a union reached through `allOf` becomes a flattened
field (the Rust `#[serde(flatten)]` shape).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acpgen.diagnostics import Diagnostics, pointer_join
from acpgen.ir import naming
from acpgen.ir.model import (
    NO_DEFAULT,
    Alias,
    Constraints,
    Enum,
    EnumMember,
    Field,
    Node,
    Struct,
    Tag,
    TypeRef,
    Union_,
    Variant,
)

RENAME_HINT = 'add `rename = {{ "{pointer}" = "NewName" }}` to the target in [tool.acpgen.targets.<name>]'
# Integer formats (Rust integer types) as the ranges a decoder enforces.
INT_RANGES = {"int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
              "int64": (-(2**63), 2**63 - 1), "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1),
              "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "null"}
KNOWN_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$defs", "definitions", "$ref", "$comment", "title", "description", "type",
        "properties", "required", "additionalProperties", "unevaluatedProperties", "items", "allOf",
        "anyOf", "oneOf", "not", "const", "enum", "default", "format", "minimum", "maximum",
        "minItems", "minLength", "discriminator", "examples", "deprecated", "readOnly", "writeOnly",
        "contentEncoding", "contentMediaType",
    }
)


@dataclass
class StableIndex:
    """What the stable file defines, so the unstable build can mark what only it adds."""

    nodes: set[str] = field(default_factory=set)
    fields: dict[str, set[str]] = field(default_factory=dict)
    members: dict[str, set[str | int]] = field(default_factory=dict)
    variants: dict[str, set[str]] = field(default_factory=dict)

    @staticmethod
    def of(nodes: Mapping[str, Node]) -> StableIndex:
        index = StableIndex(set(nodes))
        for node in nodes.values():
            if isinstance(node, Struct):
                index.fields[node.name] = {f.wire for f in node.fields}
            elif isinstance(node, Enum):
                index.members[node.name] = {m.value for m in node.members}
            elif isinstance(node, Union_):
                index.variants[node.name] = {v.type.name for v in node.variants}
        return index


def is_null_schema(s: Any) -> bool:
    return isinstance(s, dict) and s.get("type") == "null" and len(set(s) - {"title", "description"}) == 1


def union_alternatives(s: Mapping[str, Any]) -> list[Any] | None:
    alts = s.get("oneOf", s.get("anyOf"))
    return alts if isinstance(alts, list) and alts else None


def doc(s: Any) -> str:
    return s.get("description", "") if isinstance(s, dict) else ""


class Builder:
    def __init__(
        self,
        document: dict[str, Any],
        diags: Diagnostics,
        renames: Mapping[str, str] | None = None,
        stable: StableIndex | None = None,
        defaults: Mapping[str, Any] | None = None,
        hooks: Mapping[str, str] | None = None,
    ) -> None:
        self.document = document
        self.diags = diags
        self.renames = dict(renames or {})
        self.extra_defaults = dict(defaults or {})
        self.hooks = dict(hooks or {})
        self.stable = stable
        defs_key = "$defs" if "$defs" in document else "definitions"
        self.defs_key = defs_key
        raw_defs = document.get(defs_key, {})
        self.defs: dict[str, Any] = raw_defs if isinstance(raw_defs, dict) else {}
        self.nodes: dict[str, Node] = {}
        self.claims: dict[str, str] = {}  # python name -> pointer that claimed it
        self.def_class: dict[str, str] = {}
        self.def_types: dict[str, TypeRef] = {}
        self.flattening: list[str] = []
        self.inline_refs: list[str] = []
        self.used_renames: set[str] = set()
        self.field_pointers: set[str] = set()

    # -- names -----------------------------------------------------------------------------

    def claim(self, name: str, pointer: str) -> str:
        name = self.renames.get(pointer, name)
        if pointer in self.renames:
            self.used_renames.add(pointer)
        if name.endswith(tuple("0123456789")) and pointer not in self.renames:
            base = pointer.rsplit("/", 1)[-1]
            if not base.endswith(tuple("0123456789")):
                self.diags.warning("numbered-name", pointer, f"derived name {name!r} ends in a digit")
        if name in naming.RESERVED_CLASS_NAMES:
            self.diags.error(
                "reserved-name", pointer,
                f"the name {name!r} is used by the generated package itself",
                RENAME_HINT.format(pointer=pointer),
            )
        elif name in self.claims and self.claims[name] != pointer:
            other = self.claims[name]
            self.diags.error(
                "name-collision", pointer,
                f"{pointer} and {other} both want the Python name {name!r}",
                RENAME_HINT.format(pointer=pointer),
            )
        self.claims.setdefault(name, pointer)
        return name

    def claim_first(self, candidates: list[str], pointer: str) -> str:
        """The first candidate nobody holds yet (tag + union, then union + tag); else a collision."""
        if pointer not in self.renames:
            for name in candidates:
                if name not in self.claims and name not in naming.RESERVED_CLASS_NAMES:
                    return self.claim(name, pointer)
        return self.claim(candidates[0], pointer)

    def def_pointer(self, key: str) -> str:
        return pointer_join("", self.defs_key, key)

    # -- entry -----------------------------------------------------------------------------

    def build(self) -> None:
        for key in self.defs:
            self.def_class[key] = self.claim(naming.class_name(key), self.def_pointer(key))
        for key in sorted(self.defs):
            self.def_types[key] = self.define_def(key)
        for node in list(self.nodes.values()):
            if isinstance(node, Struct) and node.base:
                base = self.nodes[node.base]
                assert isinstance(base, Struct)
                self.nodes[node.name] = dataclasses.replace(node, fields=base.fields, keeps_extra=base.keeps_extra)
        unused = sorted(set(self.renames) - self.used_renames - set(self.field_pointers))
        for pointer in unused:
            self.diags.error("unknown-rename", pointer, "a rename names a JSON pointer that defines nothing",
                             "check the pointer against the schema (e.g. `#/$defs/Name`)")
        for key, table in (("defaults", self.extra_defaults), ("hooks", self.hooks)):
            for pointer in sorted(set(table) - self.field_pointers):
                self.diags.error(f"unknown-{key[:-1]}", pointer,
                                 f"`{key}` names a JSON pointer that is no property of an object type",
                                 "point it at a property, e.g. `/$defs/Name/properties/field`")

    def define_def(self, key: str) -> TypeRef:
        name = self.def_class[key]
        schema = self.defs[key]
        pointer = self.def_pointer(key)
        node = self.classify(name, schema, pointer, key)
        return TypeRef.named(node.name)

    def add(self, node: Node) -> Node:
        if self.stable is not None and node.name not in self.stable.nodes:
            node = dataclasses.replace(node, unstable=True)
        self.nodes[node.name] = node
        return node

    # -- the cascade -----------------------------------------------------------------------

    def classify(self, name: str, s: Any, pointer: str, def_name: str = "") -> Node:
        if not isinstance(s, dict) or not (set(s) - {"title", "description", "x-method", "x-side",
                                                      "x-docs-ignore", "$schema", "$comment"}):
            if s is False:
                self.diags.error("false-schema", pointer, "a `false` schema accepts nothing",
                                 "remove the definition or give it a type")
            return self.add(Alias(name, pointer, doc(s), TypeRef("any"), def_name))
        alts = union_alternatives(s)
        if "enum" in s or (alts and self.enum_like(alts)):
            return self.add(self.make_enum(name, s, pointer, def_name))
        if alts is not None:
            non_null = [a for a in alts if not is_null_schema(a)]
            if "properties" not in s and len(non_null) == 1 and len(alts) == 2:
                target = self.type_of(non_null[0], pointer_join(pointer, "anyOf", alts.index(non_null[0])), name)
                return self.add(Alias(name, pointer, doc(s), TypeRef.nullable(target), def_name))
            tag = self.detect_tag(alts)
            if tag:
                return self.add(self.tagged_union(name, s, alts, tag, pointer, def_name))
            return self.add(self.untagged_union(name, s, alts, pointer, def_name))
        all_of = s.get("allOf")
        if (
            isinstance(all_of, list) and len(all_of) == 1 and "properties" not in s
            and isinstance(all_of[0], dict) and "$ref" in all_of[0]
        ):
            return self.add(Alias(name, pointer, doc(s), self.type_of(all_of[0], pointer_join(pointer, "allOf", 0), name), def_name))
        if "properties" in s or isinstance(all_of, list):
            fields = self.object_fields(s, pointer, name)
            return self.add(Struct(name, pointer, doc(s), tuple(fields), def_name, keeps_extra=self.keeps_extra(s)))
        return self.add(Alias(name, pointer, doc(s), self.type_of(s, pointer, name), def_name))

    # -- enums -----------------------------------------------------------------------------

    @staticmethod
    def enum_like(alts: list[Any]) -> bool:
        consts = [a for a in alts if isinstance(a, dict) and "const" in a]
        rest = [a for a in alts if not (isinstance(a, dict) and "const" in a)]
        if not consts or len(rest) > 1:
            return False
        kinds = {type(a["const"]) for a in consts}
        if kinds not in ({str}, {int}):
            return False
        if rest:
            fallback = rest[0]
            wanted = "string" if kinds == {str} else "integer"
            return isinstance(fallback, dict) and fallback.get("type") == wanted and "properties" not in fallback
        return True

    def make_enum(self, name: str, s: dict[str, Any], pointer: str, def_name: str) -> Enum:
        members: list[EnumMember] = []
        open_ = False
        other: TypeRef | None = None
        if "enum" in s:
            values = [(v, "", "") for v in s["enum"]]
        else:
            values = []
            for index, alt in enumerate(union_alternatives(s) or []):
                if "const" in alt:
                    values.append((alt["const"], alt.get("title", ""), doc(alt)))
                else:
                    open_ = True
                    keyword = "oneOf" if "oneOf" in s else "anyOf"
                    other = self.type_of(alt, pointer_join(pointer, keyword, index), name + "Other")
        base = "int" if values and all(isinstance(v, int) and not isinstance(v, bool) for v, _, _ in values) else "str"
        seen: dict[str, object] = {}
        known = self.stable.members.get(name) if self.stable else None
        for value, title, description in values:
            if base == "str" and not isinstance(value, str):
                self.diags.error("mixed-enum", pointer, f"enum value {json.dumps(value)} is not a string like the others",
                                 "make every value of the enum the same JSON type")
                continue
            py = naming.member_name(value, title)
            if py in seen:
                self.diags.error("name-collision", pointer,
                                 f"enum values {seen[py]!r} and {value!r} both become member {py}",
                                 "rename one of the values in the schema")
                continue
            seen[py] = value
            unstable = known is not None and value not in known
            members.append(EnumMember(py, value, description, unstable))
        return Enum(name, pointer, doc(s), base, tuple(members), open_, def_name, other=other)  # type: ignore[arg-type]

    # -- unions ----------------------------------------------------------------------------

    def resolve_def(self, s: Any) -> tuple[str, Any] | None:
        """`{$ref: #/$defs/X}` or `{allOf: [{$ref}]}` -> (X, schema of X)."""
        if not isinstance(s, dict):
            return None
        ref = s.get("$ref")
        if ref is None and isinstance(s.get("allOf"), list) and len(s["allOf"]) == 1 and "properties" not in s:
            inner = s["allOf"][0]
            ref = inner.get("$ref") if isinstance(inner, dict) else None
        prefix = f"#/{self.defs_key}/"
        if isinstance(ref, str) and ref.startswith(prefix):
            key = ref[len(prefix):].replace("~1", "/").replace("~0", "~")
            if key in self.defs:
                return key, self.defs[key]
        return None

    def flat_properties(self, s: Any, depth: int = 0) -> dict[str, Any]:
        """Own properties plus those reached through `allOf` references."""
        if not isinstance(s, dict) or depth > 16:
            return {}
        props: dict[str, Any] = {}
        for member in s.get("allOf", []) if isinstance(s.get("allOf"), list) else []:
            target = self.resolve_def(member)
            props.update(self.flat_properties(target[1] if target else member, depth + 1))
        ref = self.resolve_def({"$ref": s["$ref"]}) if isinstance(s.get("$ref"), str) else None
        if ref:
            props.update(self.flat_properties(ref[1], depth + 1))
        own = s.get("properties")
        if isinstance(own, dict):
            props.update(own)
        return props

    def detect_tag(self, alts: list[Any]) -> str:
        flat = [self.flat_properties(a) for a in alts]
        candidates: list[str] = []
        for props in flat:
            for key, p in props.items():
                if isinstance(p, dict) and isinstance(p.get("const"), str) and key not in candidates:
                    candidates.append(key)
        for key in candidates:
            tagged, defaults, others, ok = [], [], [], True
            for alt, props in zip(alts, flat, strict=False):
                p = props.get(key)
                if isinstance(p, dict) and "const" in p:
                    tagged.append(p["const"])
                elif p is None or is_null_schema(p):
                    defaults.append(alt)
                elif isinstance(p, dict) and p.get("type") == "string" and isinstance(alt, dict) and (
                    "not" in alt or alt.get("additionalProperties") is True
                    or alt.get("unevaluatedProperties") is True
                ):
                    others.append(alt)
                else:
                    ok = False
            if ok and tagged and len(set(tagged)) == len(tagged) and len(defaults) <= 1 and len(others) <= 1:
                return key
        return ""

    def common_fields(self, s: dict[str, Any], pointer: str, owner: str) -> list[Field]:
        own = {k: v for k, v in s.items() if k not in ("anyOf", "oneOf")}
        return self.object_fields(own, pointer, owner) if "properties" in own or "allOf" in own else []

    def tagged_union(self, name: str, s: dict[str, Any], alts: list[Any], tag: str, pointer: str, def_name: str) -> Union_:
        keyword = "oneOf" if "oneOf" in s else "anyOf"
        variants: list[Variant] = []
        default = other = ""
        null_default = False
        known = tuple(
            p[tag]["const"] for p in (self.flat_properties(a) for a in alts)
            if isinstance(p.get(tag), dict) and "const" in p[tag]
        )
        stable_variants = self.stable.variants.get(name) if self.stable else None
        for index, alt in enumerate(alts):
            alt_pointer = pointer_join(pointer, keyword, index)
            tag_schema = self.flat_properties(alt).get(tag)
            title = alt.get("title", "") if isinstance(alt, dict) else ""
            payload = self.payload_def(s, alt, tag)
            if isinstance(tag_schema, dict) and "const" in tag_schema:
                value = tag_schema["const"]
                vname = self.claim_first(self.variant_names(value, name), alt_pointer)
                if payload:
                    # `{tag: const} + $ref X`: a subclass of X that adds only the tag.
                    struct = Struct(vname, alt_pointer, doc(alt), (), tag=Tag(tag, value), union=name,
                                    base=self.def_class[payload])
                else:
                    fields = self.variant_fields(s, alt, pointer, alt_pointer, vname, skip=tag)
                    struct = Struct(vname, alt_pointer, doc(alt), tuple(fields), tag=Tag(tag, value), union=name,
                                    keeps_extra=self.keeps_extra(alt))
                tag_value: str | None = value
            elif payload and (tag_schema is None or is_null_schema(tag_schema)):
                # A tagless `$ref X` is X itself: no second class for the same type.
                default, null_default = self.def_class[payload], tag_schema is not None
                unstable = stable_variants is not None and default not in stable_variants
                variants.append(Variant(TypeRef.named(default), None, title, unstable, doc(alt)))
                continue
            elif tag_schema is None or is_null_schema(tag_schema):
                vname = self.claim_first(self.variant_names(title or "default", name), alt_pointer)
                fields = self.variant_fields(s, alt, pointer, alt_pointer, vname, skip=tag)
                null_default = tag_schema is not None
                struct = Struct(vname, alt_pointer, doc(alt), tuple(fields), union=name, keeps_extra=self.keeps_extra(alt))
                default, tag_value = vname, None
            else:
                vname = self.claim_first(self.variant_names(title or "other", name), alt_pointer)
                struct = Struct(vname, alt_pointer, doc(alt), (), union=name, other_of=(tag, known),
                                common=self.common_struct(s, pointer, name, tag))
                other, tag_value = vname, None
            unstable = stable_variants is not None and vname not in stable_variants
            self.add(struct)
            variants.append(Variant(TypeRef.named(vname), tag_value, title, unstable))
        return Union_(name, pointer, doc(s), tuple(variants), tag, default, other, def_name,
                      null_tag_default=null_default, lenient_tag=bool(default) and self.lenient_tag(s, tag))

    # Keys a variant may carry and still be exactly its `$ref` plus the tag.
    PLAIN_VARIANT_KEYS = frozenset({"title", "description", "properties", "required", "allOf", "$ref", "type"})

    def payload_def(self, s: dict[str, Any], alt: Any, tag: str) -> str:
        """The `$defs` key X when the variant is `$ref X` plus (at most) its tag, X is an object type
        and the union has no properties of its own beside the tag; else ""."""
        if not isinstance(alt, dict) or set(alt) - self.PLAIN_VARIANT_KEYS or alt.get("type", "object") != "object":
            return ""
        props = alt.get("properties", {})
        if not isinstance(props, dict) or set(props) - {tag}:
            return ""
        if set(alt.get("required", [])) - {tag}:
            return ""
        common = s.get("properties")
        if "allOf" in s or (isinstance(common, dict) and set(common) - {tag}):
            return ""
        bare = {k: v for k, v in alt.items() if k in ("allOf", "$ref")}
        target = self.resolve_def(bare)
        if target is None or not self.is_object_def(target[1]):
            return ""
        return target[0]

    def is_object_def(self, d: Any) -> bool:
        """Whether `classify` makes a plain Struct of this `$defs` schema (as its last branches do)."""
        if not isinstance(d, dict) or "enum" in d or union_alternatives(d) is not None or "$ref" in d:
            return False
        all_of = d.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in d and isinstance(all_of[0], dict) and "$ref" in all_of[0]:
            return False
        return "properties" in d or isinstance(all_of, list)

    def common_struct(self, s: dict[str, Any], pointer: str, union: str, tag: str) -> str:
        """A private struct of the properties beside an open union, which its `other` variant
        (kept raw) checks as every variant does; "" when there are none."""
        name = f"_{union}Common"
        fields = [f for f in self.common_fields(s, pointer, name) if f.wire != tag]
        if not fields:
            return ""
        self.add(Struct(self.claim(name, pointer_join(pointer, "properties")), pointer, "", tuple(fields)))
        return name

    @staticmethod
    def lenient_tag(s: dict[str, Any], tag: str) -> bool:
        """The tag, as a common property, is `x-deserialize-default-on-error` (IdleStateUpdate's
        stopReason: "a malformed value is treated the same way" as an absent one)."""
        props = s.get("properties")
        prop = props.get(tag) if isinstance(props, dict) else None
        return isinstance(prop, dict) and prop.get("x-deserialize-default-on-error") is True

    @staticmethod
    def variant_names(label: str, union: str) -> list[str]:
        return [naming.pascal(label) + union, union + naming.pascal(label)]

    def variant_fields(self, s: dict[str, Any], alt: Any, pointer: str, alt_pointer: str, owner: str, skip: str | None) -> list[Field]:
        own = self.object_fields(alt, alt_pointer, owner, skip=skip) if isinstance(alt, dict) else []
        common = self.common_fields(s, pointer, owner)
        wires = {f.wire for f in own} | ({skip} if skip is not None else set())
        return own + [f for f in common if f.wire not in wires]

    def untagged_union(self, name: str, s: dict[str, Any], alts: list[Any], pointer: str, def_name: str) -> Union_:
        keyword = "oneOf" if "oneOf" in s else "anyOf"
        has_common = "properties" in s or "allOf" in s
        variants: list[Variant] = []
        for index, alt in enumerate(alts):
            alt_pointer = pointer_join(pointer, keyword, index)
            title = alt.get("title", "") if isinstance(alt, dict) else ""
            if has_common:
                vname = self.claim_first(self.variant_names(title or f"variant {chr(65 + index)}", name), alt_pointer)
                fields = self.variant_fields(s, alt, pointer, alt_pointer, vname, skip=None)
                self.add(Struct(vname, alt_pointer, doc(alt), tuple(fields), union=name, keeps_extra=self.keeps_extra(alt)))
                vtype = TypeRef.named(vname)
            else:
                vtype = self.type_of(alt, alt_pointer, name + naming.pascal(title or "variant"))
            variants.append(Variant(vtype, None, title))
        if any(v.type.kind == "nullable" for v in variants):
            self.diags.warning("nullable-variant", pointer, "a nullable variant inside a union; null is tried in order")
        return Union_(name, pointer, doc(s), tuple(variants), "", "", "", def_name)

    # -- objects ---------------------------------------------------------------------------

    def object_fields(self, s: Any, pointer: str, owner: str, skip: str | None = None, outer_required: frozenset[str] = frozenset()) -> list[Field]:
        if not isinstance(s, dict):
            return []
        required = outer_required | frozenset(r for r in s.get("required", []) if isinstance(r, str))
        fields: list[Field] = []
        all_of: list[Any] = s["allOf"] if isinstance(s.get("allOf"), list) else []
        for index, member in enumerate(all_of):
            member_pointer = pointer_join(pointer, "allOf", index)
            target = self.resolve_def(member)
            if target is not None:
                key, schema = target
                if key in self.flattening:
                    self.diags.error("allof-cycle", member_pointer,
                                     f"`allOf` reaches {key!r} again: {' -> '.join([*self.flattening, key])}",
                                     "break the cycle; a type cannot contain itself through allOf")
                    continue
                if union_alternatives(schema) is not None and not self.enum_like(union_alternatives(schema) or []):
                    fields.append(self.flatten_field(key, member_pointer))
                    continue
                self.flattening.append(key)
                try:
                    fields += self.object_fields(schema, self.def_pointer(key), owner, skip, required)
                finally:
                    self.flattening.pop()
            else:
                fields += self.object_fields(member, member_pointer, owner, skip, required)
        props = s.get("properties", {})
        if isinstance(props, dict):
            for key, p in props.items():
                if key == skip:
                    continue
                fields.append(self.make_field(key, p, key in required, pointer_join(pointer, "properties", key), owner))
        if union_alternatives(s) is not None and s is not None and "not" not in s:
            self.diags.warning("nested-union", pointer,
                               "a union nested inside an object variant is not flattened; its keys are ignored",
                               "give the inner union its own $defs entry and reference it with allOf")
        return self.dedupe(fields, owner)

    def keeps_extra(self, s: Any, depth: int = 0) -> bool:
        """`additionalProperties: true` on the object or on what it merges through `allOf`: the
        schema makes the other keys part of the value (McpError keeps inner error fields)."""
        if not isinstance(s, dict) or depth > 16:
            return False
        if s.get("additionalProperties") is True or s.get("unevaluatedProperties") is True:
            return True
        members: list[Any] = s["allOf"] if isinstance(s.get("allOf"), list) else []
        return any(self.keeps_extra(target[1] if (target := self.resolve_def(m)) else m, depth + 1) for m in members)

    def flatten_field(self, key: str, pointer: str) -> Field:
        py = self.renames.get(pointer, naming.snake(key))
        self.field_pointers.add(pointer)
        return Field("", py, TypeRef.named(self.def_class[key]), True, False, doc(self.defs[key]), pointer, flatten=True)

    def dedupe(self, fields: list[Field], owner: str) -> list[Field]:
        out: list[Field] = []
        wires: set[str] = set()
        pys: dict[str, Field] = {}
        for f in fields:
            if f.wire and f.wire in wires:
                continue
            if f.py in pys:
                other = pys[f.py]
                self.diags.error(
                    "field-collision", f.pointer,
                    f"properties {other.wire!r} ({other.pointer}) and {f.wire!r} of {owner} both become attribute {f.py!r}",
                    RENAME_HINT.format(pointer=f.pointer).replace("NewName", "new_name"),
                )
                continue
            wires.add(f.wire)
            pys[f.py] = f
            out.append(f)
        return out

    def make_field(self, key: str, p: Any, required: bool, pointer: str, owner: str) -> Field:
        self.field_pointers.add(pointer)
        if pointer in self.renames:
            self.used_renames.add(pointer)
        py = self.renames.get(pointer, naming.snake(key))
        if not py.isidentifier():
            self.diags.error("bad-rename", pointer, f"{py!r} is not a Python identifier", "pick a valid name")
        t = self.type_of(p, pointer, owner + naming.pascal(key))
        nullable = t.kind == "nullable"
        if nullable and t.item is not None:
            t = t.item
        default = p.get("default", NO_DEFAULT) if isinstance(p, dict) else NO_DEFAULT
        if pointer in self.extra_defaults:
            default = self.extra_defaults[pointer]
            self.used_renames.add(pointer)
        if t.kind == "literal" and default is NO_DEFAULT:
            default = t.const
        unstable = (
            self.stable is not None and owner in self.stable.fields and key not in self.stable.fields[owner]
        )
        flags = p if isinstance(p, dict) else {}
        return Field(
            key, py, t, required, nullable, doc(p), pointer, default,
            default_on_error=flags.get("x-deserialize-default-on-error") is True,
            default_on_null=flags.get("x-deserialize-default-on-null") is True,
            skip_invalid_items=flags.get("x-deserialize-skip-invalid-items") is True,
            unstable=unstable,
            hook=self.hooks.get(pointer, ""),
        )

    # -- type expressions ------------------------------------------------------------------

    def type_of(self, p: Any, pointer: str, hint: str) -> TypeRef:
        if p is True or p == {}:
            return TypeRef("any")
        if not isinstance(p, dict):
            self.diags.error("bad-schema", pointer, f"expected a schema object, found {p!r}", "use an object or `true`")
            return TypeRef("any")
        if "$ref" in p:
            return self.ref_type(p["$ref"], pointer)
        all_of = p.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in p and "type" not in p:
            return self.type_of(all_of[0], pointer_join(pointer, "allOf", 0), hint)
        alts = union_alternatives(p)
        if alts is not None and "properties" not in p:
            keyword = "oneOf" if "oneOf" in p else "anyOf"
            non_null = [a for a in alts if not is_null_schema(a)]
            if len(non_null) < len(alts):
                if len(non_null) == 1:
                    return TypeRef.nullable(self.type_of(non_null[0], pointer_join(pointer, keyword, alts.index(non_null[0])), hint))
                inner = {k: v for k, v in p.items() if k not in ("anyOf", "oneOf")} | {keyword: non_null}
                return TypeRef.nullable(self.inline(hint, inner, pointer))
            return self.inline(hint, p, pointer)
        if "const" in p:
            return TypeRef("literal", const=p["const"])
        if "enum" in p:
            values = [v for v in p["enum"] if v is not None]
            base = TypeRef("literal", const=values[0]) if len(values) == 1 else self.inline(hint, {**p, "enum": values}, pointer)
            return TypeRef.nullable(base) if None in p["enum"] else base
        types = p.get("type")
        if isinstance(types, list):
            rest = [t for t in types if t != "null"]
            if not rest:
                return TypeRef("null")
            if len(rest) == 1:
                base = self.type_of({**p, "type": rest[0]}, pointer, hint)
            else:
                shared = {k: v for k, v in p.items() if k not in ("type", "description", "title")}
                base = self.inline(hint, {"description": doc(p), "anyOf": [{**shared, "type": t} for t in rest]}, pointer)
            return TypeRef.nullable(base) if "null" in types else base
        low, high = INT_RANGES.get(p.get("format", ""), (None, None)) if types == "integer" else (None, None)
        constraints = Constraints(p.get("minimum", low), p.get("maximum", high), p.get("minItems"), p.get("minLength"))
        if types in _SCALARS:
            return TypeRef(_SCALARS[types], constraints=constraints)  # type: ignore[arg-type]
        if types == "array" or "items" in p:
            items = p.get("items", True)
            return TypeRef.list_of(self.type_of(items, pointer_join(pointer, "items"), hint + "Item"), constraints)
        if types == "object" or "properties" in p or "additionalProperties" in p or "allOf" in p:
            if "properties" in p or "allOf" in p:
                return self.inline(hint, p, pointer)
            extra = p.get("additionalProperties", True)
            if isinstance(extra, dict) and extra:
                return TypeRef("map", item=self.type_of(extra, pointer_join(pointer, "additionalProperties"), hint + "Value"))
            return TypeRef("object")
        return TypeRef("any")

    def inline(self, hint: str, s: dict[str, Any], pointer: str) -> TypeRef:
        name = self.claim(hint, pointer)
        if name in self.nodes:
            return TypeRef.named(name)
        node = self.classify(name, s, pointer)
        return TypeRef.named(node.name)

    def ref_type(self, ref: Any, pointer: str) -> TypeRef:
        target = self.resolve_def({"$ref": ref})
        if target is not None:
            return TypeRef.named(self.def_class[target[0]])
        if not isinstance(ref, str) or not ref.startswith("#/"):
            self.diags.error("unsupported-ref", pointer_join(pointer, "$ref"),
                             f"only references inside the document are supported, not {ref!r}",
                             "bundle the referenced schema into `$defs`")
            return TypeRef("any")
        if ref in self.inline_refs:
            self.diags.error("ref-cycle", pointer_join(pointer, "$ref"), f"{ref!r} refers back to itself",
                             "move the recursive part into `$defs` so it gets a name")
            return TypeRef("any")
        node: Any = self.document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        self.inline_refs.append(ref)
        try:
            return self.type_of(node, ref[1:], naming.pascal(ref.rsplit("/", 1)[-1]))
        finally:
            self.inline_refs.pop()


SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def check_keywords(node: Any, diags: Diagnostics, pointer: str = "", seen: set[str] | None = None) -> None:
    """Warn (once per keyword) about schema keywords the generated codecs do not enforce."""
    seen = set() if seen is None else seen
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in KNOWN_KEYWORDS and not key.startswith("x-") and key not in seen:
                seen.add(key)
                diags.warning("unsupported-keyword", pointer_join(pointer, key),
                              f"keyword {key!r} is not enforced by the generated codecs",
                              "the value is accepted without this check")
            if key in ("const", "default", "enum", "examples", "discriminator"):  # data, not schemas
                continue
            if key in SCHEMA_MAPS and isinstance(value, dict):
                # Names here are property (or definition) names, not keywords.
                for name, schema in value.items():
                    check_keywords(schema, diags, pointer_join(pointer, key, name), seen)
            else:
                check_keywords(value, diags, pointer_join(pointer, key), seen)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            check_keywords(value, diags, pointer_join(pointer, index), seen)
