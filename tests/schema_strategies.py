"""Hypothesis strategies for every `$defs` entry of a schema, built with hypothesis-jsonschema.

hypothesis-jsonschema inlines every `$ref` and re-canonicalises each property schema on every
object it draws, so a whole envelope (SessionNotification reaches 78 definitions) takes minutes
for ten examples. Here each definition is generated from its own shape only and composed from
its parts:

- A reference that stands for a whole value (a property, an array item, a union alternative of a
  node with no other constraint) is replaced by a placeholder string; after the draw, each
  placeholder is filled with a draw from the referenced definition's own (cached) strategy.
- A reference merged with its siblings (an `allOf` member, an alternative of a union beside
  `properties`) is inlined, so the definitions a type reaches through composition are in its
  schema and nothing else is.
- Free-form objects (`additionalProperties: true` and nothing else, such as `_meta`) come from a
  small JSON strategy instead of hypothesis-jsonschema's unbounded one.
- Annotations (descriptions, titles, `x-*`) are stripped: they do not constrain values.

Every composed instance is checked against the original schema (the full definition with the
definitions it reaches, by `jsonschema`), so a composition that is not valid (say, a value that
matches two `oneOf` alternatives) is filtered out rather than trusted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import FormatChecker

PLACEHOLDER = "\x00acpgen-part:"
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "discriminator", "$comment",
                         "deprecated", "readOnly", "writeOnly"})
UNIONS = ("anyOf", "oneOf")
# Integer formats the generated decoders enforce as ranges (Rust integer types).
INT_FORMATS = {"int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "int32": (-(2**31), 2**31 - 1),
               "int64": (-(2**63), 2**63 - 1), "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1),
               "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}

_scalar = (st.none() | st.booleans() | st.integers(-(2**53), 2**53)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
JSON = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
FREE_OBJECT = st.dictionaries(st.text(max_size=8), JSON, max_size=3)


def refs_in(node: Any) -> Iterator[str]:
    """Every `$ref` string below `node` (values of `const`/`default`/`enum` are data, not schema)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for key, value in node.items():
            if key not in ("const", "default", "enum", "examples"):
                yield from refs_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs_in(value)


def format_checker() -> FormatChecker:
    """Integer formats as ranges; every other format (uri, date-time, ...) stays unchecked, as in
    the generated decoders, which keep such strings as they are."""
    checker = FormatChecker(formats=())
    for name, (low, high) in INT_FORMATS.items():
        checker.checks(name)(lambda value, low=low, high=high: not isinstance(value, int)
                             or isinstance(value, bool) or low <= value <= high)
    return checker


def is_json_int(checker: Any, value: Any) -> bool:
    """JSON Schema's `integer` accepts 1.0; serde (and the generated decoders) do not."""
    return type(value) is int


ValidatorClass = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", is_json_int),
)


class SchemaStrategies:
    """Strategies, reachability and validators for the `$defs` of one schema document."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.defs_key = "$defs" if "$defs" in document else "definitions"
        self.defs: dict[str, Any] = document.get(self.defs_key, {})
        self.prefix = f"#/{self.defs_key}/"
        self._strategies: dict[str, st.SearchStrategy[Any]] = {}
        self._validators: dict[str, Any] = {}
        self.checker = format_checker()

    # -- definitions a type reaches ----------------------------------------------------------

    def def_of(self, ref: str) -> str | None:
        if ref.startswith(self.prefix):
            name = ref[len(self.prefix):].replace("~1", "/").replace("~0", "~")
            return name if name in self.defs else None
        return None

    def reach(self, name: str) -> set[str]:
        """`name` and every definition its schema reaches through `$ref`, transitively."""
        seen = {name}
        todo = [name]
        while todo:
            for ref in refs_in(self.defs[todo.pop()]):
                target = self.def_of(ref)
                if target is not None and target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    def reduced_schema(self, name: str) -> dict[str, Any]:
        """The definition as a document holding only the definitions it reaches."""
        return {self.defs_key: {k: self.defs[k] for k in sorted(self.reach(name))},
                "$ref": f"{self.prefix}{name}"}

    def validator(self, name: str) -> Any:
        """A validator of the definition against the schema itself (integer formats as ranges)."""
        if name not in self._validators:
            self._validators[name] = self.validator_for({"$ref": f"{self.prefix}{name}"})
        return self._validators[name]

    def validator_for(self, node: Any) -> Any:
        """A validator of any sub-schema of the document (its `$ref`s resolve in the document)."""
        root = {self.defs_key: self.defs, "allOf": [node]}
        return ValidatorClass(root, format_checker=self.checker)

    # -- composition -------------------------------------------------------------------------

    def whole_value_ref(self, node: Any) -> str | None:
        """`{$ref: X}` or `{allOf: [{$ref: X}]}` with nothing else that constrains: X."""
        if not isinstance(node, dict):
            return None
        constraining = {k for k in node if k not in ANNOTATIONS and not k.startswith("x-")}
        if constraining == {"$ref"}:
            return self.def_of(node["$ref"])
        if constraining == {"allOf"} and isinstance(node["allOf"], list) and len(node["allOf"]) == 1:
            return self.whole_value_ref(node["allOf"][0])
        return None

    def merged_part(self, node: Any) -> Any:
        """A member of `allOf` (or an alternative beside other constraints): inline references."""
        name = self.whole_value_ref(node)
        return self.shape(self.defs[name]) if name is not None else self.shape(node)

    def shape(self, node: Any) -> Any:
        """`node` without annotations, with whole-value references as placeholders."""
        if isinstance(node, list):
            return [self.shape(v) for v in node]
        if not isinstance(node, dict):
            return node
        name = self.whole_value_ref(node)
        if name is not None:
            return {"const": PLACEHOLDER + name}
        keys = {k for k in node if k not in ANNOTATIONS and not k.startswith("x-")}
        if node.get("additionalProperties") is True and not keys & {"properties", "allOf", "not", *UNIONS}:
            kind = "object_or_null" if node.get("type") == ["object", "null"] else "object"
            return {"const": PLACEHOLDER + "@" + kind}
        # A union alternative merges with the node's other constraints unless there are none.
        merging = bool(keys - {*UNIONS})
        out: dict[str, Any] = {}
        for key in sorted(keys):
            value = node[key]
            if key in ("const", "enum"):
                out[key] = value
            elif key == "allOf" or (key in UNIONS and merging):
                out[key] = [self.merged_part(m) for m in value]
            elif key == "properties" and isinstance(value, dict):
                out[key] = {k: self.shape(v) for k, v in value.items()}
            else:
                out[key] = self.shape(value)
        return out

    def strategy(self, name: str) -> st.SearchStrategy[Any]:
        """Valid instances of the definition `name` (cached). Parts are looked up when drawn, so a
        recursive definition is fine."""
        if name not in self._strategies:
            self._strategies[name] = self._build(name)
        return self._strategies[name]

    def _build(self, name: str) -> st.SearchStrategy[Any]:
        base = from_schema(self.shape(self.defs[name]))
        fill = self.filler()
        valid = self.validator(name).is_valid
        return st.composite(lambda draw: fill(draw, draw(base)))().filter(valid)

    def filler(self) -> Callable[[Any, Any], Any]:
        free = {"object": FREE_OBJECT, "object_or_null": st.none() | FREE_OBJECT}

        def fill(draw: Any, value: Any) -> Any:
            if isinstance(value, str) and value.startswith(PLACEHOLDER):
                part = value[len(PLACEHOLDER):]
                return draw(free[part[1:]] if part.startswith("@") else self.strategy(part))
            if isinstance(value, list):
                return [fill(draw, v) for v in value]
            if isinstance(value, dict):
                return {k: fill(draw, v) for k, v in value.items()}
            return value

        return fill


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
