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
from urllib.parse import unquote

from acpgen.diagnostics import Diagnostics, pointer_join, shown_pointer
from acpgen.ir import checks, naming
from acpgen.ir.companion import accepts_all_of
from acpgen.ir.model import (
    NO_CONSTRAINTS,
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
from acpgen.runtime._validate import KEYWORDS as VALIDATED
from acpgen.runtime._validate import SchemaChecker


def rename_hint(pointer: str, new: str = "NewName") -> str:
    """The config line that renames what `pointer` names, as valid TOML (the pointer a basic string)."""
    key = json.dumps(pointer, ensure_ascii=False).replace("\x7f", "\\u007f")
    return f'add `rename = {{ {key} = "{new}" }}` to the target in [tool.acpgen.targets.<name>]'


# Integer formats (Rust integer types) as the ranges a decoder enforces.
INT_RANGES = {"int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
              "int64": (-(2**63), 2**63 - 1), "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1),
              "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}
MAX_TYPE_NESTING = 128  # nested array / map levels in one type (see Builder.nested)
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


# Keywords that only annotate (no effect on which values are valid) and the object keywords that
# make `$ref` + siblings a composition.
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly",
                         "$comment"})
OBJECT_KEYWORDS = frozenset({"properties", "allOf", "required", "additionalProperties", "anyOf", "oneOf"})


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


def type_array_as_union(s: dict[str, Any], types: list[Any]) -> dict[str, Any]:
    """`{type: [a, b, ...], ...}` as the union it means: one alternative per type, each with the
    other keywords (a single type stays a plain schema)."""
    if len(types) == 1:
        return {**s, "type": types[0]}
    shared = {k: v for k, v in s.items() if k not in ("type", "description", "title")}
    outer: dict[str, Any] = {k: s[k] for k in ("description", "title") if k in s}
    return {**outer, "anyOf": [{**shared, "type": t} if t != "null" else {"type": "null"} for t in types]}


def ref_fragment(ref: str) -> str:
    """The JSON pointer of a local `#...` reference, percent-escapes decoded (RFC 6901 section 6)."""
    return unquote(ref[1:])


_UNRESOLVED = object()


def schema_at(schema: Any, pointer: str, at: str) -> Any:
    """The value at JSON pointer `at` inside `schema`, which sits at `pointer`."""
    node = schema
    for part in at[len(pointer):].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


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
        reference: bool = False,
        census: tuple[bool, bool] | None = None,
    ) -> None:
        self.document = document
        # A reference build (the stable file beside its unstable companion) makes the nodes the
        # companion is compared with and nothing else: its diagnostics are dropped (the companion,
        # a superset, reports the same places), so the checks that only report (patterns, the
        # defaults' values, where a definition needs its schema's check) are skipped.
        self.reference = reference
        self.diags = diags
        self.too_deep_reported = False
        self.absent: dict[str, list[str]] = {}  # struct name -> keys whose schema is `false`
        self.renames = dict(renames or {})
        self.extra_defaults = dict(defaults or {})
        self.hooks = dict(hooks or {})
        self.stable = stable
        defs_key = "$defs" if "$defs" in document else "definitions"
        self.defs_key = defs_key
        raw_defs = document.get(defs_key, {})
        self.defs: dict[str, Any] = raw_defs if isinstance(raw_defs, dict) else {}
        # Whether any definition may declare another dialect or hold a pattern `re` cannot read: the
        # walks that find where run only then (`census`: what the loader found, else a walk here).
        self.census = census if census is not None else checks.dialects_and_patterns(document)
        self.nodes: dict[str, Node] = {}
        self.claims: dict[str, str] = {}  # python name -> pointer that claimed it
        self.by_pointer: dict[str, str] = {}  # pointer -> the python name it got
        self.def_class: dict[str, str] = {}
        self.def_types: dict[str, TypeRef] = {}
        self.flattening: list[str] = []
        self.inline_refs: list[str] = []
        self.used_renames: set[str] = set()
        self.field_pointers: set[str] = set()
        self._checker: SchemaChecker | None = None
        self._strict: SchemaChecker | None = None
        # Set while a definition is built when a part of it is typed as any JSON value because its
        # Python type would reject values the schema accepts: the definition is then checked.
        self.loosened = False

    # -- names -----------------------------------------------------------------------------

    def claim(self, name: str, pointer: str, given: bool = False) -> str:
        """The Python name of the type defined at `pointer`. A `$defs` key or a `rename` is given:
        a clash with another given name (or a reserved one) is an error naming both pointers. A
        derived name that is taken gets the first free numeric suffix instead."""
        if pointer in self.renames:
            name, given = self.renames[pointer], True
            self.used_renames.add(pointer)
            if not naming.is_class_name(name):
                self.diags.error("bad-rename", pointer,
                                 f"{name!r} is not a class name: an identifier that is no keyword or builtin and "
                                 "does not start with a lowercase letter or `_` (the generated code's own names)",
                                 "pick a CapWords name, e.g. `MyType`")
        elif pointer in self.by_pointer:
            return self.by_pointer[pointer]
        if given:
            if name in self.claims and self.claims[name] != pointer:
                other = self.claims[name]
                self.diags.error(
                    "name-collision", pointer,
                    f"{pointer} and {other} both want the Python name {name!r}",
                    rename_hint(pointer),
                )
        else:
            name = self.free_name(name, pointer)
        self.claims.setdefault(name, pointer)
        self.by_pointer.setdefault(pointer, name)
        return name

    def free_name(self, name: str, pointer: str) -> str:
        """`name`, or `name2`, `name3`, ... when a type already holds it (or it is a builtin's)."""
        if name not in self.claims and name not in naming.BUILTIN_CLASS_NAMES:
            return name
        for number in range(2, len(self.claims) + 3):
            candidate = f"{name}{number}"
            if candidate not in self.claims:
                holder = self.claims.get(name, "a Python builtin")
                self.diags.warning(
                    "name-suffixed", pointer,
                    f"the derived name {name!r} is taken by {holder}; this type is named {candidate!r}",
                    rename_hint(pointer),
                )
                return candidate
        raise AssertionError("unreachable: one of len(claims) + 1 candidates is free")

    def first_free(self, candidates: list[str]) -> str:
        """The first candidate nobody holds yet, else the first (which `claim` then suffixes)."""
        return next((name for name in candidates if name not in self.claims and name not in naming.BUILTIN_CLASS_NAMES),
                    candidates[0])

    def claim_first(self, candidates: list[str], pointer: str) -> str:
        """The first candidate nobody holds yet (`<Label><Union>`, then `<Label><Union>Variant`,
        see `naming.variant_names`); else the first one with a numeric suffix."""
        return self.claim(candidates[0] if pointer in self.renames else self.first_free(candidates), pointer)

    def def_pointer(self, key: str) -> str:
        return pointer_join("", self.defs_key, key)

    # -- entry -----------------------------------------------------------------------------

    def build(self) -> None:
        # Names the schema gives first; then the ones the generator made (a reserved name escaped
        # as `None_`, `Definition` for a key with no letters), which take the next free name.
        made: list[tuple[str, str]] = []
        for key in self.defs:
            name, escaped = naming.class_name_escaped(key)
            if escaped and self.def_pointer(key) not in self.renames:
                made.append((key, name))
            else:
                self.def_class[key] = self.claim(name, self.def_pointer(key), given=True)
        for key, name in made:
            self.def_class[key] = self.claim(name, self.def_pointer(key))
        self.def_class = {key: self.def_class[key] for key in self.defs}
        for key in sorted(self.defs):
            self.def_types[key] = self.define_def(key)
        for node in list(self.nodes.values()):
            if isinstance(node, Struct) and node.base:
                base = self.nodes[node.base]
                assert isinstance(base, Struct)
                self.nodes[node.name] = dataclasses.replace(node, fields=base.fields, keeps_extra=base.keeps_extra)
        self.unshadow_classes()
        unused = sorted(set(self.renames) - self.used_renames - set(self.field_pointers))
        for pointer in unused:
            self.diags.error("unknown-rename", pointer, "a rename names a JSON pointer that defines nothing",
                             "check the pointer against the schema (e.g. `#/$defs/Name`)")
        for key, table in (("defaults", self.extra_defaults), ("hooks", self.hooks)):
            for pointer in sorted(set(table) - self.field_pointers):
                self.diags.error(f"unknown-{key[:-1]}", pointer,
                                 f"`{key}` names a JSON pointer that is no property of an object type",
                                 "point it at a property, e.g. `/$defs/Name/properties/field`")

    def unshadow_classes(self) -> None:
        """An attribute named like a class of the module (a property `日本` of type `日本`) would
        shadow that class in its own class body's annotations: it gets a trailing `_`."""
        classes = set(self.nodes)
        for name, node in list(self.nodes.items()):
            if not isinstance(node, Struct) or not any(f.py in classes for f in node.fields):
                continue
            taken = {f.py for f in node.fields}
            fields = []
            for f in node.fields:
                if f.py in classes and f.pointer not in self.renames:
                    py = f.py + "_"
                    while py in taken or py in classes:
                        py += "_"
                    taken.add(py)
                    f = dataclasses.replace(f, py=py)
                fields.append(f)
            self.nodes[name] = dataclasses.replace(node, fields=tuple(fields))

    def define_def(self, key: str) -> TypeRef:
        """The definition's node: typed; typed and checked against its schema where the types say
        less than the schema; or the JSON value, checked, where the types would say something
        else (see acpgen/ir/checks.py)."""
        name = self.def_class[key]
        schema = self.defs[key]
        pointer = self.def_pointer(key)
        nested_dialect, bad_pattern = self.census
        if nested_dialect and (dialect := checks.foreign_dialect(schema, pointer)) is not None:
            self.diags.error("unsupported-dialect", dialect,
                             f"this schema declares the dialect {schema_at(schema, pointer, dialect)!r}: its vocabularies "
                             "may change what keywords mean, and only draft 2020-12 is understood",
                             "remove `$schema` from the definition, or bundle it as a 2020-12 schema")
            return TypeRef.named(self.add(Alias(name, pointer, doc(schema), TypeRef("any"), key)).name)
        for at, reason in checks.bad_patterns(schema, pointer) if bad_pattern and not self.reference else ():
            self.diags.error("bad-pattern", at, f"Python's regular expressions cannot read this pattern: {reason}",
                             "write it in the syntax both ECMA-262 and Python's `re` read (no \\p{...} classes)")
        marks = (len(self.nodes), len(self.claims), len(self.by_pointer), len(self.diags.items))
        self.loosened = False
        node = self.classify(name, schema, pointer, key)
        found = self.diags.items[marks[3]:]
        errors = [d for d in found if d.level == "error"]
        untypable = all(checks.untypable(d.code, d.pointer, pointer) for d in errors)
        if (untypable if errors else checks.narrower(schema)) and not self.checker().unresolved(pointer):
            reason = (f"{errors[0].code} at #{errors[0].pointer}: {errors[0].message}" if errors else
                      "the schema accepts more JSON types than a Python type of it would")
            self.undo(marks)
            self.claims.setdefault(name, pointer)
            self.by_pointer.setdefault(pointer, name)
            self.diags.warning(
                "checked-json", pointer,
                f"typed as any JSON value, checked against this schema ({reason})",
                "nothing is lost on the wire; give the definition a `type` the Python types can say for a typed class")
            return TypeRef.named(self.add(Alias(name, pointer, doc(schema), TypeRef("any"), key, check=pointer)).name)
        if errors:
            return TypeRef.named(node.name)
        if self.reference:
            return TypeRef.named(node.name)  # whether it is checked changes nothing the companion reads
        if self.loosened or checks.inexact(schema, pointer) is not None \
                or any(d.code in checks.ENFORCED_BY_CHECK for d in found):
            self.diags.items[marks[3]:] = [d for d in found if d.code not in checks.ENFORCED_BY_CHECK]
            if isinstance(node, Struct) and checks.declares_keys(schema):
                node = dataclasses.replace(node, keeps_extra=True)
            node = self.nodes[node.name] = dataclasses.replace(node, check=pointer)
        return TypeRef.named(node.name)

    def undo(self, marks: tuple[int, int, int, int]) -> None:
        """Forget the nodes, names and diagnostics a definition's typed build added after `marks`."""
        tables: tuple[dict[str, Any], ...] = (self.nodes, self.claims, self.by_pointer)
        for table, mark in zip(tables, marks, strict=False):
            for added in list(table)[mark:]:
                del table[added]
        del self.diags.items[marks[3]:]

    def checker(self) -> SchemaChecker:
        """The validator that judges checked definitions, over this document (built once)."""
        if self._checker is None:
            self._checker = SchemaChecker(self.document)
        return self._checker

    def add(self, node: Node) -> Node:
        if self.stable is not None and node.name not in self.stable.nodes:
            node = dataclasses.replace(node, unstable=True)
        if isinstance(node, Struct) and self.absent.get(node.name):
            node = dataclasses.replace(node, absent=tuple(dict.fromkeys(self.absent[node.name])))
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
        types = s.get("type")
        if isinstance(types, list) and union_alternatives(s) is None and "enum" not in s and "const" not in s:
            return self.classify(name, type_array_as_union(s, types), pointer, def_name)
        alts = union_alternatives(s)
        if isinstance(s.get("enum"), list) and not [v for v in s["enum"] if v is not None]:
            return self.add(Alias(name, pointer, doc(s), self.type_of(s, pointer, name), def_name))
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
            self.check_required(s, fields, pointer, None)
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
        kept: list[tuple[str | int, str, str]] = []
        kept_values: set[str | int] = set()
        for value, title, description in values:
            if base == "str" and not isinstance(value, str):
                self.diags.error("mixed-enum", pointer, f"enum value {json.dumps(value)} is not a string like the others",
                                 "make every value of the enum the same JSON type")
                continue
            if value not in kept_values:  # a repeated value is one member
                kept_values.add(value)
                kept.append((value, title, description))
        # A name the value gives (`"value"` -> VALUE) is claimed before any invented one (`""` ->
        # VALUE), so the invented name takes the suffix; members keep the schema's order.
        names = {i: naming.member_name_and_source(v, t) for i, (v, t, _) in enumerate(kept)}
        claimed: dict[int, str] = {}
        for index in sorted(names, key=lambda i: not names[i][1]):
            value, title, description = kept[index]
            py = base_py = names[index][0]
            number = 2
            while py in seen:
                py, number = f"{base_py}_{number}", number + 1
            if py != base_py:
                self.diags.warning("member-suffixed", pointer,
                                   f"enum values {seen[base_py]!r} and {value!r} both make the member name {base_py}; "
                                   f"{value!r} is member {py}", "the wire values are unaffected")
            seen[py] = value
            claimed[index] = py
        for index, (value, _, description) in enumerate(kept):
            unstable = known is not None and value not in known
            members.append(EnumMember(claimed[index], value, description, unstable))
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
        prefix = f"/{self.defs_key}/"
        fragment = ref_fragment(ref) if isinstance(ref, str) and ref.startswith("#") else ""
        if fragment.startswith(prefix) and "/" not in fragment[len(prefix):]:
            key = fragment[len(prefix):].replace("~1", "/").replace("~0", "~")
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
                    if key not in {n for n, _ in self.required_names(alt)}:
                        ok = False  # an optional tag does not say which variant an untagged value is
                    tagged.append(p["const"])
                elif (p is None or is_null_schema(p)) and not self.scalar_or_array(alt):
                    defaults.append(alt)
                elif isinstance(p, dict) and p.get("type") == "string" and isinstance(alt, dict) and (
                    "not" in alt or true_schema(alt.get("additionalProperties"))
                    or alt.get("unevaluatedProperties") is True
                ):
                    others.append(alt)
                else:
                    ok = False
            if ok and tagged and len(set(tagged)) == len(tagged) and len(defaults) <= 1 and len(others) <= 1:
                return key
        return ""

    def scalar_or_array(self, alt: Any) -> bool:
        """An alternative whose values are no objects (an array of blocks beside tagged blocks): it
        cannot be a tagged union's default variant, so such a union is untagged (tried in order)."""
        target = self.resolve_def(alt) if isinstance(alt, dict) and set(alt) <= {"$ref", "description", "title"} else None
        schema = target[1] if target is not None else alt
        kind = schema.get("type") if isinstance(schema, dict) else None
        return kind in ("array", "string", "number", "integer", "boolean") or (
            isinstance(schema, dict) and "items" in schema and kind is None)

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
        lenient = bool(default) and self.lenient_tag(s, tag)
        kept = bool(default) and not other and not lenient and bool(known)
        if kept:
            # The default variant is the one without the tag. An object whose tag is present with a
            # value this schema does not list (codex's AuthMethod `type: env_var`) is kept whole
            # as an `Other...` value, not read as the default (which would drop its tag and every key
            # the default does not name); the default variant must still accept it, as the schema
            # reads it. A schema saying a malformed tag means the default (`lenient_tag`) keeps that.
            other_pointer = pointer_join(pointer, "x-acpgen-other")
            other = self.claim_first(self.variant_names("other", name), other_pointer)
            self.add(Struct(other, other_pointer, f"An object of `{name}` whose `{tag}` is none of the values "
                            "this schema lists: kept whole (`raw`), its tag in `tag`.", (), union=name,
                            other_of=(tag, known), common=default))
            unstable = stable_variants is not None and other not in stable_variants
            variants.append(Variant(TypeRef.named(other), None, "", unstable))
        return Union_(name, pointer, doc(s), tuple(variants), tag, default, other, def_name,
                      null_tag_default=null_default, lenient_tag=lenient, kept_other=kept)

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

    def holds_non_objects(self, ref: Any) -> bool:
        """Whether `ref` names a union with an alternative that is no object with properties (a
        map, a string): beside `properties` it cannot be a flattened field of a class."""
        target = self.resolve_def({"$ref": ref})
        alts = union_alternatives(target[1]) if target is not None and isinstance(target[1], dict) else None
        return alts is not None and not self.enum_like(alts) and not all(self.object_alternative(a) for a in alts)

    def object_alternative(self, alt: Any) -> bool:
        """Whether a union alternative decodes as a class (a struct, or a reference to one)."""
        target = self.resolve_def(alt) if isinstance(alt, dict) and "$ref" in alt else None
        if target is not None:
            return self.is_object_def(target[1]) or union_alternatives(target[1]) is not None
        return isinstance(alt, dict) and ("properties" in alt or "allOf" in alt)

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
        name = self.claim(f"_{union}Common", pointer_join(pointer, "properties"))
        fields = [f for f in self.common_fields(s, pointer, name) if f.wire != tag]
        if not fields:
            return ""
        self.add(Struct(name, pointer, "", tuple(fields)))
        return name

    @staticmethod
    def lenient_tag(s: dict[str, Any], tag: str) -> bool:
        """The tag, as a common property, is `x-deserialize-default-on-error` (IdleStateUpdate's
        stopReason: "a malformed value is treated the same way" as an absent one)."""
        props = s.get("properties")
        prop = props.get(tag) if isinstance(props, dict) else None
        return isinstance(prop, dict) and prop.get("x-deserialize-default-on-error") is True

    def variant_label(self, alts: list[Any], index: int, pointer: str, named: bool) -> str:
        """The label an anonymous variant's name is built from (`naming.variant_label`); a
        positional one is a warning when it names a class (`named`, or an inline object)."""
        def ref_name(alt: Any) -> str | None:
            target = self.resolve_def(alt)
            return target[0] if target else None

        label, source = naming.variant_label(alts, index, self.flat_properties, ref_name)
        alt = alts[index]
        makes_class = named or (isinstance(alt, dict) and ("properties" in alt or union_alternatives(alt) is not None))
        if source == "position" and makes_class and pointer not in self.renames:
            self.diags.warning(
                "positional-name", pointer,
                "nothing in this union variant gives it a name (no title, $ref, tag const or distinguishing property), "
                "so its class is named by its position",
                rename_hint(pointer),
            )
        return label

    @staticmethod
    def variant_names(label: str, union: str) -> list[str]:
        return naming.variant_names(label, union)

    def variant_fields(self, s: dict[str, Any], alt: Any, pointer: str, alt_pointer: str, owner: str, skip: str | None) -> list[Field]:
        own = self.object_fields(alt, alt_pointer, owner, skip=skip) if isinstance(alt, dict) else []
        common = self.common_fields(s, pointer, owner)
        wires = {f.wire for f in own} | ({skip} if skip is not None else set())
        fields = own + [f for f in common if f.wire not in wires]
        self.check_required(alt, fields, alt_pointer, skip)
        return fields

    def required_names(self, s: Any, depth: int = 0) -> list[tuple[str, str]]:
        """(name, pointer of the `required` list) for every name `s` requires, through allOf."""
        if not isinstance(s, dict) or depth > 16:
            return []
        out: list[tuple[str, str]] = []
        for member in s.get("allOf", []) if isinstance(s.get("allOf"), list) else []:
            target = self.resolve_def(member)
            out += self.required_names(target[1] if target else member, depth + 1)
        if isinstance(s.get("$ref"), str) and (target := self.resolve_def({"$ref": s["$ref"]})):
            out += self.required_names(target[1], depth + 1)
        if isinstance(s.get("required"), list):
            out += [(r, "") for r in s["required"] if isinstance(r, str)]
        return out

    def check_required(self, s: Any, fields: list[Field], pointer: str, skip: str | None) -> None:
        """A required name no property declares: its presence is not checked (weaker), so warn."""
        if any(f.flatten for f in fields):
            return  # the keys of a flattened union are not fields here
        wires = {f.wire for f in fields} | ({skip} if skip else set())
        missing = sorted({name for name, _ in self.required_names(s)} - wires)
        if missing:
            self.diags.warning(
                "required-undeclared", pointer_join(pointer, "required"),
                f"`required` names {', '.join(map(repr, missing))}, which no `properties` declares: "
                "the decoder does not check that the key is present, and its value is not kept",
                "declare the property (any schema, e.g. `true`) or remove it from `required`",
            )

    def untagged_union(self, name: str, s: dict[str, Any], alts: list[Any], pointer: str, def_name: str) -> Union_:
        keyword = "oneOf" if "oneOf" in s else "anyOf"
        has_common = "properties" in s or "allOf" in s
        variants: list[Variant] = []
        for index, alt in enumerate(alts):
            alt_pointer = pointer_join(pointer, keyword, index)
            title = alt.get("title", "") if isinstance(alt, dict) else ""
            label = self.variant_label(alts, index, alt_pointer, named=has_common)
            if has_common:
                vname = self.claim_first(self.variant_names(label, name), alt_pointer)
                fields = self.variant_fields(s, alt, pointer, alt_pointer, vname, skip=None)
                self.add(Struct(vname, alt_pointer, doc(alt), tuple(fields), union=name, keeps_extra=self.keeps_extra(alt)))
                vtype = TypeRef.named(vname)
            else:
                vtype = self.type_of(alt, alt_pointer, self.first_free(self.variant_names(label, name)))
            variants.append(Variant(vtype, None, title))
        if any(v.type.kind == "nullable" for v in variants):
            self.diags.warning("nullable-variant", pointer, "a nullable variant inside a union; null is tried in order")
        if keyword == "oneOf" and len(alts) > 1:
            # An inner union (inner_union_field) is located at its keyword already.
            at = pointer if set(s) == {keyword} and pointer.endswith("/" + keyword) else pointer_join(pointer, keyword)
            self.diags.warning(
                "oneOf-not-exclusive", at,
                "keyword `oneOf` without a tag is decoded as the first alternative that accepts the value: that no "
                "other alternative also accepts it is not checked",
                "give each alternative a distinguishing `const` property, or write `anyOf`",
            )
        return Union_(name, pointer, doc(s), tuple(variants), "", "", "", def_name)

    # -- objects ---------------------------------------------------------------------------

    def object_fields(self, s: Any, pointer: str, owner: str, skip: str | None = None, outer_required: frozenset[str] = frozenset()) -> list[Field]:
        if not isinstance(s, dict):
            return []
        required = outer_required | frozenset(
            r for r in (s["required"] if isinstance(s.get("required"), list) else []) if isinstance(r, str))
        fields: list[Field] = []
        all_of: list[Any] = s["allOf"] if isinstance(s.get("allOf"), list) else []
        members = [(member, pointer_join(pointer, "allOf", index)) for index, member in enumerate(all_of)]
        if isinstance(s.get("$ref"), str):  # `$ref` beside `properties`: both apply, as in allOf
            members.insert(0, ({"$ref": s["$ref"]}, pointer))
        if isinstance(s.get("additionalProperties"), dict) and s["additionalProperties"] and "properties" in s:
            self.diags.warning(
                "additional-properties-unchecked", pointer_join(pointer, "additionalProperties"),
                "keys beyond the listed properties are accepted without this schema's check, and not kept",
                "list the keys as properties, or set keep_unknown to keep them (still unchecked)",
            )
        for member, member_pointer in members:
            target = self.resolve_def(member)
            if target is not None:
                key, schema = target
                if key in self.flattening:
                    self.diags.error("allof-cycle", member_pointer,
                                     f"`allOf` reaches {key!r} again: {' -> '.join([*self.flattening, key])}",
                                     "break the cycle; a type cannot contain itself through allOf")
                    continue
                if union_alternatives(schema) is not None and not self.enum_like(union_alternatives(schema) or []):
                    if not all(self.object_alternative(a) for a in union_alternatives(schema) or []):
                        self.diags.error(
                            "flatten-not-object", member_pointer,
                            f"the union {key!r} has alternatives that are no objects with properties (a map, a "
                            "string, ...): an object cannot hold it as a flattened field",
                            "give every alternative `properties`, or reference the union from a property")
                        continue
                    fields.append(self.flatten_field(key, member_pointer))
                    continue
                self.flattening.append(key)
                try:
                    fields += self.object_fields(schema, self.def_pointer(key), owner, skip, required)
                finally:
                    self.flattening.pop()
            elif isinstance(member, dict) and set(member) == {"$ref"}:
                fields += self.ref_fields(member["$ref"], member_pointer, owner, skip, required)
            else:
                fields += self.object_fields(member, member_pointer, owner, skip, required)
        props = s.get("properties", {})
        if isinstance(props, dict):
            for key, p in props.items():
                if key == skip:
                    continue
                if p is False:  # valid JSON Schema: the key must be absent
                    if key in required:
                        self.diags.error("false-schema", pointer_join(pointer, "properties", key),
                                         f"property {key!r} is required, but its schema `false` accepts no value",
                                         "drop it from `required`, or give it a schema")
                    self.absent.setdefault(owner, []).append(key)
                    continue
                fields.append(self.make_field(key, p, key in required, pointer_join(pointer, "properties", key), owner))
        if union_alternatives(s) is not None and "not" not in s:
            fields += self.inner_union_field(s, pointer, owner, {f.py for f in fields})
        return self.dedupe(fields, owner)

    def local_target(self, ref: str, pointer: str) -> Any:
        """The schema a local `#/...` reference points at, or _UNRESOLVED (with an error)."""
        node: Any = self.document
        try:
            for part in ref_fragment(ref)[1:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            self.diags.error("unresolvable-ref", pointer_join(pointer, "$ref"),
                             f"`$ref` {ref!r} does not resolve to anything in this document",
                             "point it at an existing definition such as `#/$defs/Name`")
            return _UNRESOLVED
        return node

    def ref_fields(self, ref: Any, pointer: str, owner: str, skip: str | None, required: frozenset[str]) -> list[Field]:
        """The fields of a `$ref` member that names no `$defs` entry: of the schema it points at
        inside the document (a reference cycle or an unresolvable one is an error)."""
        if not isinstance(ref, str) or not ref.startswith("#/"):
            self.diags.error("unsupported-ref", pointer_join(pointer, "$ref"),
                             f"only references inside the document are supported, not {ref!r}",
                             "bundle the referenced schema into `$defs`")
            return []
        if ref in self.inline_refs:
            self.diags.error("ref-cycle", pointer_join(pointer, "$ref"), f"{ref!r} refers back to itself",
                             "move the recursive part into `$defs` so it gets a name")
            return []
        fragment = ref_fragment(ref)
        node = self.local_target(ref, pointer)
        if node is _UNRESOLVED:
            return []
        self.inline_refs.append(ref)
        try:
            return self.object_fields(node, fragment, owner, skip, required)
        finally:
            self.inline_refs.pop()

    def inner_union_field(self, s: dict[str, Any], pointer: str, owner: str, taken: set[str]) -> list[Field]:
        """An object (a union variant, an `allOf` member) that has `oneOf` / `anyOf` of its own
        beside its properties: its value is also one of those alternatives. The alternatives become
        a union of their own (`<Owner>OneOf`, renamable at the keyword's pointer) and the object a
        flattened field of it (`one_of`, as `allOf` with a union `$ref` is): decoding reads the
        same object as that union, encoding merges the member's keys in. Alternatives that are not
        objects could not be merged into one: an error."""
        keyword = "oneOf" if "oneOf" in s else "anyOf"
        union_pointer = pointer_join(pointer, keyword)
        alts = s[keyword]
        odd = [i for i, a in enumerate(alts) if not self.plain_object(a)]
        if odd:
            self.diags.error(
                "nested-union", pointer_join(union_pointer, odd[0]),
                f"this object has `{keyword}` alternatives beside its properties, and alternative {odd[0]} is not "
                "an object without alternatives of its own, so its keys cannot be merged into the object",
                "make each alternative an object (`properties`, `required`, or a `$ref` to an object type)",
            )
            return []
        # Each alternative describes the same object: an object, whether or not it says `type`.
        objects = [a if not isinstance(a, dict) or "type" in a or "$ref" in a else {"type": "object", **a} for a in alts]
        t = self.inline(owner + naming.pascal(keyword), {keyword: objects}, union_pointer)
        py, number = naming.snake(keyword), 2
        while py in taken:
            py, number = f"{naming.snake(keyword)}_{number}", number + 1
        description = (f"Which of the `{keyword}` alternatives this object also is: their keys sit beside the "
                       "others on the wire.")
        return [Field("", py, t, True, False, description, union_pointer, flatten=True)]

    def plain_object(self, a: Any) -> bool:
        """An object schema with no alternatives of its own (inline, or a `$ref` to an object type)."""
        if not isinstance(a, dict) or union_alternatives(a) is not None or "enum" in a or "const" in a:
            return False
        if "$ref" in a:  # a `$ref` to an object type, maybe with more properties beside it
            target = self.resolve_def({"$ref": a["$ref"]})
            return target is not None and self.is_object_def(target[1]) and a.get("type", "object") == "object"
        return a.get("type", "object") == "object" and bool({"properties", "required", "allOf", "type"} & set(a))

    def keeps_extra(self, s: Any, depth: int = 0) -> bool:
        """`additionalProperties: true` on the object or on what it merges through `allOf`: the
        schema makes the other keys part of the value (McpError keeps inner error fields)."""
        if not isinstance(s, dict) or depth > 16:
            return False
        if true_schema(s.get("additionalProperties")) or true_schema(s.get("unevaluatedProperties")):
            return True
        members: list[Any] = s["allOf"] if isinstance(s.get("allOf"), list) else []
        return any(self.keeps_extra(target[1] if (target := self.resolve_def(m)) else m, depth + 1) for m in members)

    def flatten_field(self, key: str, pointer: str) -> Field:
        py = self.renames.get(pointer, naming.snake(key))
        self.field_pointers.add(pointer)
        return Field("", py, TypeRef.named(self.def_class[key]), True, False, doc(self.defs[key]), pointer, flatten=True)

    def placeholder_names(self, fields: list[Field], owner: str) -> list[Field]:
        """Attribute names the generator made give way to the ones the schema gives: a property
        whose wire name has no letters or digits (`_`, `""`, `-`) gets `field`, a keyword or
        reserved one an escaped name (`class` -> `class_`); when that is taken, the first free
        `field_2`, `class_2`, ... (with a warning for an escaped name)."""
        placeholders = [f for f in fields if not f.flatten and naming.snake_escaped(f.wire)[1]
                        and f.pointer not in self.renames]
        placeholders.sort(key=lambda f: not naming.words(f.wire))  # escaped names before nameless ones
        if not placeholders:
            return fields
        used = {f.py for f in fields if all(f is not p for p in placeholders)}
        renamed: dict[int, Field] = {}
        wires: dict[str, str] = {}  # a wire name seen twice (allOf) keeps its first attribute
        for f in placeholders:
            if f.wire in wires:
                renamed[id(f)] = dataclasses.replace(f, py=wires[f.wire])
                continue
            name, number = f.py, 2
            while name in used:
                name, number = f"{f.py}{'' if f.py.endswith('_') else '_'}{number}", number + 1
            if name != f.py and naming.words(f.wire):
                self.diags.warning(
                    "field-suffixed", f.pointer,
                    f"property {f.wire!r} of {owner} escapes to {f.py!r}, which another property holds; "
                    f"its attribute is {name!r}",
                    rename_hint(f.pointer, "new_name"))
            used.add(name)
            wires[f.wire] = name
            renamed[id(f)] = dataclasses.replace(f, py=name)
        return [renamed.get(id(f), f) for f in fields]

    def dedupe(self, fields: list[Field], owner: str) -> list[Field]:
        fields = self.placeholder_names(fields, owner)
        out: list[Field] = []
        wires: dict[str, int] = {}  # wire name -> index in out
        pys: dict[str, Field] = {}
        for f in fields:
            if f.wire and f.wire in wires:
                kept = out[wires[f.wire]]
                narrower = intersection(kept, f)
                if narrower is not None:
                    out[wires[f.wire]] = narrower
                elif (kept.type, kept.nullable) != (f.type, f.nullable):
                    self.diags.error(
                        "conflicting-property", f.pointer,
                        f"property {f.wire!r} of {owner} is defined twice with different types: here and at "
                        f"{shown_pointer(kept.pointer)}; a value cannot satisfy both as the generated class would need",
                        "give both definitions the same schema (or drop one)",
                    )
                elif f.required and not kept.required:
                    out[wires[f.wire]] = dataclasses.replace(kept, required=True)
                continue
            if f.py in pys:
                other = pys[f.py]
                self.diags.error(
                    "field-collision", f.pointer,
                    f"properties {other.wire!r} ({shown_pointer(other.pointer)}) and {f.wire!r} of {owner} both become attribute {f.py!r}",
                    rename_hint(f.pointer, "new_name"),
                )
                continue
            wires[f.wire] = len(out)
            pys[f.py] = f
            out.append(f)
        return out

    def make_field(self, key: str, p: Any, required: bool, pointer: str, owner: str) -> Field:
        self.field_pointers.add(pointer)
        if pointer in self.renames:
            self.used_renames.add(pointer)
        py = self.renames.get(pointer, naming.snake(key))
        if not naming.is_safe_identifier(py):
            self.diags.error("bad-rename", pointer, f"{py!r} is not a Python identifier (or is a keyword)",
                             "pick a valid name")
        t = self.type_of(p, pointer, owner + naming.pascal(key))
        nullable = t.kind == "nullable"
        if nullable and t.item is not None:
            t = t.item
        default = p.get("default", NO_DEFAULT) if isinstance(p, dict) else NO_DEFAULT
        if default is not NO_DEFAULT:
            default = self.checked_default(default, p, pointer_join(pointer, "default"), "the schema's")
        if pointer in self.extra_defaults:
            default = self.checked_default(self.extra_defaults[pointer], p, pointer, "the `defaults` entry")
            self.used_renames.add(pointer)
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
            encoding=encoding if isinstance(encoding := flags.get("contentEncoding"), str) else "",
        )

    def checked_default(self, value: Any, p: Any, pointer: str, source: str) -> Any:
        """A default must be a value of its property: an ill-typed one would make the generated
        constructor ill-typed (or decode valid input wrongly), so it is an error."""
        if self.reference:
            return value
        if self._strict is None:  # leniency annotations do not excuse a default: it is written as it is
            self._strict = SchemaChecker(self.document, lenient=False)
        problem = self._strict.problem(p, value)
        if problem is None:
            return value
        self.diags.error(
            "bad-default", pointer,
            f"{source} default {json.dumps(value)[:80]} is not a valid value of this property: {problem}",
            "fix the default (or the property's type)",
        )
        return NO_DEFAULT

    # -- type expressions ------------------------------------------------------------------

    def type_of(self, p: Any, pointer: str, hint: str) -> TypeRef:
        if p is True or p == {}:
            return TypeRef("any")
        if p is False:
            self.diags.error("false-subschema", pointer, "a `false` schema accepts no value here",
                             "remove the alternative (or the keyword) it stands for")
            return TypeRef("any")
        if not isinstance(p, dict):
            self.diags.error("bad-schema", pointer, f"expected a schema object, found {p!r}", "use an object or `true`")
            return TypeRef("any")
        if checks.narrower(p) or ("$ref" in p and not OBJECT_KEYWORDS.isdisjoint(p) and self.holds_non_objects(p["$ref"])):
            self.loosened = True  # the JSON value, which the definition's check judges
            return TypeRef("any")
        if "$ref" in p:
            if len(p) == 1:
                return self.ref_type(p["$ref"], pointer)
            siblings = sorted(k for k in p if k not in ANNOTATIONS and k != "$ref" and not k.startswith("x-"))
            if set(siblings) & OBJECT_KEYWORDS:
                # `$ref` beside object keywords is a conjunction (2020-12): both halves, as allOf.
                merged = {k: v for k, v in p.items() if k != "$ref"}
                merged["allOf"] = [{"$ref": p["$ref"]}, *(p["allOf"] if isinstance(p.get("allOf"), list) else [])]
                return self.inline(hint, merged, pointer)
            if siblings:
                self.diags.warning(
                    "ref-siblings-ignored", pointer,
                    f"{', '.join(siblings)} beside `$ref` {'is' if len(siblings) == 1 else 'are'} not enforced: "
                    "the value is decoded as the referenced type alone",
                    "move the keywords into the referenced definition (or into an allOf beside the $ref)",
                )
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
            return self.literal(p["const"], pointer_join(pointer, "const"))
        if "enum" in p and isinstance(p["enum"], list):
            values = [v for v in p["enum"] if v is not None]
            if not values:
                if p["enum"]:
                    return TypeRef("null")  # `[null]`: the one value null
                self.diags.error("empty-enum", pointer_join(pointer, "enum"), "an empty `enum` accepts no value at all",
                                 "list the allowed values, or remove the property")
                return TypeRef("any")
            base = self.literal(values[0], pointer_join(pointer, "enum", 0)) if len(values) == 1 else self.inline(hint, {**p, "enum": values}, pointer)
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
        limits = (p.get("minimum", low), p.get("maximum", high), p.get("minItems"), p.get("minLength"))
        constraints = NO_CONSTRAINTS if limits == (None, None, None, None) else Constraints(*limits)
        if types in _SCALARS:
            return TypeRef(_SCALARS[types], constraints=constraints)  # type: ignore[arg-type]
        if types == "array" or "items" in p:
            items = p.get("items", True)
            item_pointer = pointer_join(pointer, "items")
            return self.nested(TypeRef.list_of(self.type_of(items, item_pointer, hint + "Item"), constraints), pointer)
        if types == "object" or "properties" in p or "additionalProperties" in p or "allOf" in p:
            if "properties" in p or "allOf" in p:
                return self.inline(hint, p, pointer)
            extra = p.get("additionalProperties", True)
            if isinstance(extra, dict) and extra:
                value_pointer = pointer_join(pointer, "additionalProperties")
                return self.nested(TypeRef("map", item=self.type_of(extra, value_pointer, hint + "Value")), pointer)
            return TypeRef("object")
        return TypeRef("any")

    def nested(self, t: TypeRef, pointer: str) -> TypeRef:
        """An array or map type, unless its annotation (`list[list[...]]`) would nest more brackets
        than the generated code can hold: Python's parser allows 200 open brackets on one line (in
        a measurement 198 nested arrays built and imported, 199 did not), and the generated code
        wraps a type in a few more; past MAX_TYPE_NESTING levels it is a `too-deep` error at the
        schema where the limit is passed, reported once."""
        depth, inner = 0, t
        while inner.item is not None:
            depth += inner.kind in ("list", "map")
            inner = inner.item
        if depth <= MAX_TYPE_NESTING:
            return t
        if not self.too_deep_reported:
            self.too_deep_reported = True
            self.diags.error(
                "too-deep", pointer,
                f"this type nests arrays and maps more than {MAX_TYPE_NESTING} levels deep: its Python "
                "annotation would nest more brackets than Python can parse",
                "flatten the schema: give an inner level a name in `$defs` and reference it")
        return TypeRef("any")

    def literal(self, value: Any, pointer: str) -> TypeRef:
        """A `const`: a Literal for a string, integer, boolean or null; any other JSON value (an
        object, array or fraction) cannot be a Literal, so it is accepted as any value, with a warning."""
        if value is None:
            return TypeRef("null")
        if isinstance(value, (str, int)):
            return TypeRef("literal", const=value)
        self.diags.warning(
            "unsupported-const", pointer,
            f"a `const` that is {'a number with a fraction' if isinstance(value, float) else 'an object or array'} "
            "is not checked: any JSON value is accepted here (and kept as it is)",
            "use a string, integer or boolean const, or an enum of strings",
        )
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
        fragment = ref_fragment(ref)
        node = self.local_target(ref, pointer)
        if node is _UNRESOLVED:
            return TypeRef("any")
        self.inline_refs.append(ref)
        try:
            return self.type_of(node, fragment, naming.pascal(fragment.rsplit("/", 1)[-1]) or "Ref")
        finally:
            self.inline_refs.pop()


SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})


def export_aliases(nodes: Mapping[str, Node], diags: Diagnostics) -> tuple[tuple[str, str], ...]:
    """(class name, package-level name) for each model named like one of the package's own exports
    (`RequestError`, `UNSET`, `TYPES`): the class keeps its name in models.py, the package exports
    it with a trailing `_` (the first free one), and a warning says so."""
    out = []
    for name in sorted(n for n in nodes if n in naming.PACKAGE_EXPORTS):
        alias = naming.export_name(name, nodes)
        out.append((name, alias))
        diags.warning(
            "export-renamed", nodes[name].pointer,
            f"the class {name!r} has the name of one of the package's own exports: the package exports the class "
            f"as {alias!r} (`models.{name}` keeps the name)",
            rename_hint(nodes[name].pointer) + " to name the class yourself",
        )
    return tuple(out)


def true_schema(value: object) -> bool:
    """`true` or `{}`: the schema every value is valid against."""
    return value is True or (isinstance(value, dict) and not value)


def intersection(kept: Field, other: Field) -> Field | None:
    """Two definitions of one property (an `allOf` member narrowing another: `code: integer` and
    `code: {const: -32042}`, `data: any` and an object): the field for the values both accept when
    one of the two accepts every value of the other; None when neither contains the other."""
    required = kept.required or other.required
    nullable = kept.nullable and other.nullable
    if (kept.type, kept.nullable) == (other.type, other.nullable):
        return dataclasses.replace(kept, required=required)
    if accepts_all_of(kept.type, other.type) and (kept.nullable or not other.nullable):
        return dataclasses.replace(kept, type=other.type, required=required, nullable=nullable)
    if accepts_all_of(other.type, kept.type) and (other.nullable or not kept.nullable):
        return dataclasses.replace(kept, required=required, nullable=nullable)
    return None


def under(pointer: str, roots: tuple[str, ...]) -> bool:
    """Whether `pointer` is one of `roots` or lies below one."""
    return any(pointer == r or pointer.startswith(r + "/") for r in roots)


def check_keywords(node: Any, diags: Diagnostics, checked: tuple[str, ...] = ()) -> None:
    """Warn, once per keyword, about schema keywords the generated codecs do not enforce, naming
    every place the keyword appears (the first ones, and how many there are); the `checked`
    definitions' schemas judge their values, so nothing below them is named."""
    found: dict[str, list[str]] = {}
    unsupported_keywords(node, [], found)
    for key, pointers in found.items():
        if key in VALIDATED:  # a checked definition's schema enforces it; an unknown keyword stays reported
            pointers = [p for p in pointers if not under(p, checked)]
        if not pointers:
            continue
        shown = ", ".join("#" + p for p in pointers[1:UNSUPPORTED_SHOWN])
        more = len(pointers) - UNSUPPORTED_SHOWN
        where = "" if len(pointers) == 1 else (
            f" (at {len(pointers)} places; also {shown}" + (f" and {more} more" if more > 0 else "") + ")")
        diags.warning("unsupported-keyword", pointers[0],
                      f"keyword {key!r} is not enforced by the generated codecs{where}",
                      "the value is accepted without this check")


UNSUPPORTED_SHOWN = 5  # pointers named in one unsupported-keyword warning

# Keywords the codecs read but do not (fully) enforce at every place they may appear: each place a
# warning of its own, located at the keyword (the value is accepted without that check).
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples", "discriminator", "dependentRequired"})
_TYPED_KEYWORDS = {"minimum": "number", "maximum": "number", "minLength": "string", "minItems": "array"}
_COMPOSING = frozenset({"$ref", "allOf", "anyOf", "oneOf", "enum", "const"})  # beside them, a shape is not read alone


def asserted_format(name: str, declared: Any) -> bool:
    """Whether the codecs assert `format` in a schema of this `type`: integer formats (int32, uint64,
    ...) as ranges of an integer, `double` and `float` of a number."""
    types = declared if isinstance(declared, list) else (declared,)
    return (name in INT_RANGES and "integer" in types) or (name in ("double", "float") and "number" in types)


def check_unenforced(node: Any, diags: Diagnostics, checked: tuple[str, ...] = ()) -> None:
    """A located warning at every `not` (but the open variant's `not` of a tagged union, which the
    tag enforces), every `unevaluatedProperties` other than `true`, every numeric or length keyword
    in a schema without a `type` (only typed values are checked), object / array keywords without
    `type` (the value is read as that type only), and `required` with neither (unchecked)."""
    formats: list[tuple[str, str]] = []
    for pointer, keyword, message in unenforced(node, [], False, []):
        if keyword != "format" and under(pointer, checked):
            continue
        if keyword == "format":
            formats.append((pointer, message))
            continue
        diags.warning(f"{keyword}-unchecked", pointer, message, "the value is accepted without this check")
    if formats:
        names = ", ".join(sorted({name for _, name in formats}))
        shown = ", ".join("#" + p for p, _ in formats[1:UNSUPPORTED_SHOWN])
        more = len(formats) - UNSUPPORTED_SHOWN
        where = "" if len(formats) == 1 else (
            f" (at {len(formats)} places; also {shown}" + (f" and {more} more" if more > 0 else "") + ")")
        diags.warning("format-not-asserted", formats[0][0],
                      f"keyword `format` ({names}) is an annotation the generated codecs do not assert{where}",
                      "integer formats (int32, uint64, ...) are enforced as ranges; other values are accepted as "
                      "their type")


def unenforced(
    node: Any, path: list[str | int], alternative: bool, out: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """(pointer, keyword, message) of each unenforced use below the node at `path`, in document
    order, added to `out`; `alternative`: the node is an item of `anyOf` / `oneOf`. A pointer is
    built only for what is found (the walk visits every node of the document)."""
    if isinstance(node, dict):
        if "not" in node and not alternative:
            out.append((pointer_join("", *path, "not"), "not",
                        "keyword `not` is not enforced by the generated codecs: a value its subschema accepts is "
                        "not rejected"))
        if "unevaluatedProperties" in node and not true_schema(node["unevaluatedProperties"]):
            out.append((pointer_join("", *path, "unevaluatedProperties"), "unevaluatedProperties",
                        "keyword `unevaluatedProperties` is not enforced by the generated codecs: keys no other "
                        "keyword evaluates are accepted (kept only with keep_unknown), not checked"))
        declared = node.get("type")
        if isinstance(node.get("format"), str) and not asserted_format(node["format"], declared):
            out.append((pointer_join("", *path, "format"), "format", node["format"]))
        if declared is None and "$ref" not in node:
            for key, kind in _TYPED_KEYWORDS.items():
                if key in node:
                    out.append((pointer_join("", *path, key), key,
                                f"keyword `{key}` in a schema without `type` is not enforced by the generated codecs "
                                f"(it is checked only where the schema says `\"type\": \"{kind}\"`)"))
        if declared is None and node.keys().isdisjoint(_COMPOSING):
            shape = next((k for k in ("properties", "additionalProperties") if k in node), None)
            if shape is None and "items" in node:
                shape = "items"
            if shape is not None:
                kind = "an array" if shape == "items" else "an object"
                out.append((pointer_join("", *path, shape), shape,
                            f"keyword `{shape}` in a schema without `type`: the generated codec reads the value as "
                            f"{kind} and rejects the other JSON types, which this schema accepts"))
            elif "required" in node:
                out.append((pointer_join("", *path, "required"), "required",
                            "keyword `required` in a schema without `type` or `properties` is not enforced by the "
                            "generated codecs: an object without those keys is accepted"))
        for key, value in node.items():
            if key in _DATA_KEYWORDS or not isinstance(value, (dict, list)):
                continue
            path.append(key)
            if key in SCHEMA_MAPS and isinstance(value, dict):
                for name, schema in value.items():
                    path.append(name)
                    unenforced(schema, path, False, out)
                    path.pop()
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    path.append(index)
                    unenforced(item, path, key in ("anyOf", "oneOf"), out)
                    path.pop()
            else:
                unenforced(value, path, False, out)
            path.pop()
    return out


def unsupported_keywords(node: Any, path: list[str | int], found: dict[str, list[str]]) -> None:
    """keyword -> pointers (in document order) of each keyword the codecs do not enforce, below the
    node at `path` (a pointer is built only for what is found)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in KNOWN_KEYWORDS and not key.startswith("x-"):
                found.setdefault(key, []).append(pointer_join("", *path, key))
            if key in _DATA_KEYWORDS or not isinstance(value, (dict, list)):
                continue  # data (or property names), not schemas
            path.append(key)
            if key in SCHEMA_MAPS and isinstance(value, dict):
                # Names here are property (or definition) names, not keywords.
                for name, schema in value.items():
                    path.append(name)
                    unsupported_keywords(schema, path, found)
                    path.pop()
            else:
                unsupported_keywords(value, path, found)
            path.pop()
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, (dict, list)):
                path.append(index)
                unsupported_keywords(value, path, found)
                path.pop()
