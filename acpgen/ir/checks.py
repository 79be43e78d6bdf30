"""Which definitions the typed decoders cannot judge alone, so their schema judges the raw value.

A typed decoder checks what its Python type says. A definition whose schema says more (a keyword
the types cannot express, a `oneOf` whose exclusivity no tag decides, a `required` key no property
declares) is *checked*: its decoder first validates the raw value against the definition's schema
(acpgen/runtime/_validate.py), then decodes it. A definition whose typed form would reject values
the schema accepts (object keywords without `type`, an `allOf` of non-objects) or that the typed
models cannot express at all (a mixed enum, a `false` schema, a reference by anchor) is the JSON
value itself, checked: `typing` loses detail there, the wire loses nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import unquote

from acpgen.diagnostics import pointer_join

# Keywords the typed decoders enforce exactly (or that only annotate). Any other keyword, and the
# forms of these that `inexact` finds, make a definition checked.
TYPED = frozenset({
    "$schema", "$defs", "definitions", "$ref", "$comment", "title", "description", "type", "properties",
    "required", "additionalProperties", "items", "allOf", "anyOf", "oneOf", "not", "const", "enum", "default",
    "format", "minimum", "maximum", "minItems", "minLength", "discriminator", "examples", "deprecated",
    "readOnly", "writeOnly", "contentEncoding", "contentMediaType", "unevaluatedProperties",
})
# Errors of the typed build that a checked JSON value avoids: the schema is fine, its types are not.
# (A reference or allOf cycle stays an error: no validator finishes evaluating it; so do an empty
# enum and a required `false` property, which accept nothing by mistake rather than by design.)
UNTYPABLE = frozenset({"mixed-enum", "false-subschema", "unsupported-ref", "unresolvable-ref", "flatten-not-object"})


def untypable(code: str, at: str, pointer: str) -> bool:
    """Whether an error of the typed build at `at`, in the definition at `pointer`, is one a checked
    JSON value avoids: a code above, or the definition itself being `false` (it accepts nothing)."""
    return code in UNTYPABLE or (code == "false-schema" and at == pointer)
# Warnings of the typed build about checks it leaves out: a checked definition makes them moot.
ENFORCED_BY_CHECK = frozenset({
    "oneOf-not-exclusive", "required-undeclared", "ref-siblings-ignored", "unsupported-const", "nullable-variant",
    "additional-properties-unchecked",
})
_SUBSCHEMA = frozenset({"additionalProperties", "unevaluatedProperties", "items", "contains", "propertyNames", "not", "if",
                        "then", "else", "unevaluatedItems", "contentSchema"})
_SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_OBJECT_SHAPE = ("properties", "additionalProperties", "allOf")


def subschemas(s: dict[str, Any], pointer: str) -> Iterator[tuple[Any, str, bool]]:
    """(subschema, its pointer, whether it is an alternative of anyOf/oneOf)."""
    for key, value in s.items():
        if key in _SUBSCHEMA:
            yield value, pointer_join(pointer, key), False
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield sub, pointer_join(pointer, key, name), False
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                yield sub, pointer_join(pointer, key, index), key in ("anyOf", "oneOf")


def inexact(s: Any, pointer: str) -> str | None:
    """The pointer of the first place below `s` (references not followed) whose keyword the typed
    decoder does not judge exactly, or None."""
    found = _inexact(s, [], False)
    return None if found is None else pointer_join(pointer, *found)


# The typed keywords whose form `_inexact` looks at; the others are exact whatever their value.
_JUDGED = frozenset({"not", "unevaluatedProperties", "additionalProperties", "const", "enum", "minimum", "maximum",
                     "minLength", "minItems", "required"})


def _inexact(s: Any, path: list[str | int], alternative: bool) -> list[str | int] | None:
    """`inexact` below the node at `path` (relative): the path of what it finds (a pointer is built
    only for that; the walk visits every node of every definition)."""
    if s is False:
        return path
    if not isinstance(s, dict):
        return None
    for key, value in s.items():
        if key not in TYPED:
            if not key.startswith("x-"):
                return [*path, key]
            continue
        if key not in _JUDGED:
            continue
        if key == "not" and not (alternative and known_tags(value)):  # an open union's fallback: the tag decides
            return [*path, key]
        if key == "unevaluatedProperties" and value is not True and value != {}:
            return [*path, key]
        if key == "additionalProperties" and "properties" in s and value is not False and value is not True \
                and value != {}:  # beside properties: the struct's extra keys (alone it is a typed map)
            return [*path, key]
        if key in ("const", "enum") and not plain_values([value] if key == "const" else value):
            return [*path, key]
        if key in ("minimum", "maximum", "minLength", "minItems") and "type" not in s:
            return [*path, key]
        if key == "required" and "properties" not in s:
            return [*path, key]
    for key, value in s.items():
        if key in _SUBSCHEMA:
            found = _inexact(value, [*path, key], False)
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            found = None
            for name, sub in value.items():
                if sub is False and key == "properties":
                    continue  # a key that must be absent: the typed decoder rejects it (Struct.absent)
                if (found := _inexact(sub, [*path, key, name], False)) is not None:
                    break
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            found = None
            alternatives = key in ("anyOf", "oneOf")
            for index, sub in enumerate(value):
                if (found := _inexact(sub, [*path, key, index], alternatives)) is not None:
                    break
        else:
            continue
        if found is not None:
            return found
    return None


def known_tags(s: Any) -> bool:
    """`not: {anyOf: [{properties: {tag: {const: ...}}}, ...]}`: an open union's fallback variant
    excluding the known tags, which the tagged decoder enforces by dispatching on the tag."""
    if not isinstance(s, dict):
        return False
    alts = s.get("anyOf", [s])
    return isinstance(alts, list) and bool(alts) and all(
        isinstance(a, dict) and isinstance(a.get("properties"), dict)
        and any(isinstance(p, dict) and ("const" in p or "enum" in p) for p in a["properties"].values())
        for a in alts)


def plain_values(values: Any) -> bool:
    """Values a typed decoder compares exactly: strings, integers, booleans and null (a fraction,
    an object or an array is a `const` / `enum` the types cannot say)."""
    return isinstance(values, list) and all(v is None or isinstance(v, (str, int, bool)) for v in values)


def narrower(s: Any) -> bool:
    """Whether the typed form of `s` would reject values the schema accepts: object or array
    keywords with no `type` (nor a reference or alternatives that pin one)."""
    if not isinstance(s, dict) or "type" in s or "$ref" in s:
        return False
    if any(k in s for k in _OBJECT_SHAPE) and not pins_object(s):
        return True
    return "items" in s and not pins_type(s)




def pins_object(s: Any) -> bool:
    """Whether `s` admits objects only: `type: object`, a reference (a definition the typed build
    reads as its own type), every alternative or some `allOf` member doing so."""
    return pins(s, lambda node: node.get("type") == "object" or "$ref" in node)


def pins_type(s: Any) -> bool:
    """Whether `s` admits values of one JSON type family only, by `type`, `$ref`, `const`/`enum`,
    or through every alternative / some `allOf` member."""
    return pins(s, lambda node: any(k in node for k in ("type", "$ref", "const", "enum")))


def pins(s: Any, itself: Callable[[dict[str, Any]], bool]) -> bool:
    """`itself(s)`, or true of every `anyOf`/`oneOf` alternative, or of some `allOf` member."""
    if not isinstance(s, dict):
        return False
    if itself(s):
        return True
    alts = s.get("anyOf", s.get("oneOf"))
    if isinstance(alts, list) and alts and all(pins(a, itself) for a in alts):
        return True
    members = s.get("allOf")
    return isinstance(members, list) and any(pins(m, itself) for m in members)


def referenced(document: dict[str, Any], defs_key: str, roots: Iterable[str]) -> str:
    """The part of `document` the checked definitions need, as canonical JSON: their `$defs`
    entries and every entry a `#/...` reference in them reaches; the whole document when they use
    `$id`, anchors or other references (which resolve against the document as a whole)."""
    defs = document.get(defs_key) if isinstance(document.get(defs_key), dict) else {}
    assert isinstance(defs, dict)
    prefix = "/" + defs_key + "/"
    todo = [unescape(r[len(prefix):]) for r in roots]
    keep: set[str] = set()
    while todo:
        key = todo.pop()
        if key in keep or key not in defs:
            continue
        keep.add(key)
        for ref in references(defs[key]):
            if not ref.startswith("#" + prefix):
                return json.dumps(document, sort_keys=True, ensure_ascii=False)
            key = unescape(unquote(ref[len(prefix) + 1:]).split("/")[0])
            if key not in defs:
                return json.dumps(document, sort_keys=True, ensure_ascii=False)
            todo.append(key)
    return json.dumps({defs_key: {k: defs[k] for k in sorted(keep)}}, sort_keys=True, ensure_ascii=False)


def unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def references(node: Any) -> Iterator[str]:
    """Every `$ref` / `$dynamicRef` below `node`; a `$id` or anchor counts as a non-local one."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                yield value if key == "$ref" else "$dynamic"
            elif key in ("$id", "$anchor", "$dynamicAnchor"):
                yield "$" + key
            elif key not in ("const", "enum", "default", "examples"):
                yield from references(value)
    elif isinstance(node, list):
        for item in node:
            yield from references(item)


DIALECT = "https://json-schema.org/draft/2020-12/schema"


def foreign_dialect(s: Any, pointer: str) -> str | None:
    """The pointer of a `$schema` below `s` naming a dialect other than draft 2020-12 (an embedded
    resource may declare its own meta-schema, whose vocabularies neither codec knows), or None."""
    if not isinstance(s, dict):
        return None
    dialect = s.get("$schema")
    if isinstance(dialect, str) and dialect.rstrip("#") != DIALECT:
        return pointer_join(pointer, "$schema")
    for sub, sub_pointer, _ in subschemas(s, pointer):
        if (found := foreign_dialect(sub, sub_pointer)) is not None:
            return found
    return None


def declares_keys(s: Any) -> bool:
    """Whether an object schema gives meaning to keys beyond its `properties` (`patternProperties`,
    an `additionalProperties` schema, `required` names no property declares, `dependentSchemas`):
    those keys are data, so its class keeps them (and writes them back) whatever `keep_unknown` says."""
    if not isinstance(s, dict):
        return False
    extra = s.get("additionalProperties")
    declared: dict[str, Any] = s["properties"] if isinstance(s.get("properties"), dict) else {}
    required: list[Any] = s["required"] if isinstance(s.get("required"), list) else []
    return ("patternProperties" in s or "dependentSchemas" in s or any(r not in declared for r in required)
            or (extra is not None and not isinstance(extra, bool) and extra != {} and bool(declared)))


def dialects_and_patterns(document: Any) -> tuple[bool, bool]:
    """(a `$schema` somewhere below the root, a pattern Python's `re` cannot compile somewhere), from
    the loader's pointer-free reading walk (`quick_scan`). Every place counts, data included, so a
    False is certain: the per-definition walks that say where (`foreign_dialect`, `bad_patterns`)
    are skipped when it is (on the ACP schemas they built a pointer for every node of every
    definition to find nothing). A document read by the loader has the walk's findings already
    (SchemaFile.nested_dialect, .patterns): this is for one that did not come through it."""
    from acpgen.load.loader import quick_scan

    scan = quick_scan(document)
    if scan.deep:  # the walk stops at MAX_DEPTH: what lies deeper is unknown
        return True, True
    return census_of(scan.nested_dialect, scan.patterns)


def census_of(nested_dialect: bool, patterns: Iterable[str]) -> tuple[bool, bool]:
    """The Builder's census from what a reading walk found: a dialect below the root, and whether a
    pattern `re` cannot compile is among `patterns`."""
    return nested_dialect, not all(compiles(p) for p in patterns)


def compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def bad_patterns(s: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer, reason) of each `pattern` / `patternProperties` key below `s` that Python's `re`
    cannot compile (the checked decoder matches with it; ECMA-262 classes such as `\\p{L}` differ)."""
    if not isinstance(s, dict):
        return
    candidates = [(pointer_join(pointer, "pattern"), s["pattern"])] if isinstance(s.get("pattern"), str) else []
    if isinstance(s.get("patternProperties"), dict):
        candidates += [(pointer_join(pointer, "patternProperties", k), k) for k in s["patternProperties"]]
    for at, pattern in candidates:
        try:
            re.compile(pattern)
        except re.error as exc:
            yield at, str(exc)
    for sub, sub_pointer, _ in subschemas(s, pointer):
        yield from bad_patterns(sub, sub_pointer)
