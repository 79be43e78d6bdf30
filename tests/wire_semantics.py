"""What a correct codec does with a message, computed from the schema alone (DESIGN.md section 4),
independently of the generated code: the normalisations a round trip may apply, and where a
decode error must point.

Normalisations (each a named function; nothing else may differ after `encode(decode(x))`):
- `materialise_defaults`: a key that is absent and whose property has a schema `default` comes
  back present with that default ("when a key with a schema default is absent, decoding fills in
  the default and encoding writes it").
- `drop_unknown_keys`: a key the object's schema does not define is ignored ("Unknown keys:
  accepted and ignored by default"); objects that keep every key (`additionalProperties: true`,
  such as `_meta` and the `other` variant of an open union) and maps keep them.
- `null_tag_means_absent`: a `null` tag that selects a union's default variant (one whose schema
  allows the tag to be null or absent, like IdleStateUpdate's "none") comes back absent: the
  default variant is "the default when the tag is absent" and carries no tag of its own.

How a union value is matched, as the decoders do: a tagged union by its tag's `const` (an absent
or null tag selects the default variant, an unknown one the open union's fallback); an untagged
union by trying its alternatives in order.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from tests.schema_strategies import UNIONS, SchemaStrategies

LENIENT = "x-deserialize-default-on-error"
SKIP_ITEMS = "x-deserialize-skip-invalid-items"
NULL_DEFAULT = "x-deserialize-default-on-null"
NO_DEFAULT = object()


@dataclass
class ObjectView:
    """Everything the schema says about one object value: its properties (with every schema
    that defines each), whether unknown keys are kept, and the schema of map values."""

    properties: dict[str, list[Any]] = field(default_factory=dict)
    keeps_unknown: bool = False
    map_values: Any = None
    untagged: bool = False  # an untagged union was matched to find the properties
    null_tag: str | None = None  # a null tag selected the default variant

    def schema_of(self, key: str) -> Any:
        if key in self.properties:
            return self.properties[key][0]
        return self.map_values if self.map_values is not None else True

    def default_of(self, key: str) -> Any:
        for schema in self.properties.get(key, []):
            if isinstance(schema, dict) and "default" in schema:
                return schema["default"]
        return NO_DEFAULT

    @property
    def free(self) -> bool:
        """No property is defined: the value is a plain JSON object, kept as it is."""
        return self.keeps_unknown or (not self.properties and self.map_values is None)


def drop_unknown_keys(view: ObjectView, value: dict[str, Any]) -> dict[str, Any]:
    if view.free or view.map_values is not None:
        return dict(value)
    return {k: v for k, v in value.items() if k in view.properties}


def null_tag_means_absent(view: ObjectView, value: dict[str, Any]) -> dict[str, Any]:
    if view.null_tag is None or view.keeps_unknown:
        return value
    return {k: v for k, v in value.items() if k != view.null_tag}


def materialise_defaults(view: ObjectView, value: dict[str, Any], normalise: Any) -> dict[str, Any]:
    out = dict(value)
    for key in view.properties:
        default = view.default_of(key)
        if key not in out and default is not NO_DEFAULT:
            out[key] = normalise(view.schema_of(key), copy.deepcopy(default))
    return out


class WireSemantics:
    def __init__(self, strategies: SchemaStrategies) -> None:
        self.s = strategies

    # -- schema navigation -------------------------------------------------------------------

    def resolve(self, node: Any) -> Any:
        """Follow `$ref`s and single-member `allOf` wrappers to the schema that shapes the value."""
        for _ in range(64):
            if not isinstance(node, dict):
                return node
            ref = node.get("$ref")
            if isinstance(ref, str) and self.s.def_of(ref) is not None and not (set(node) & {"properties", "allOf", *UNIONS}):
                node = self.s.defs[self.s.def_of(ref)]  # type: ignore[index]
                continue
            name = self.s.whole_value_ref(node)
            if name is None:
                return node
            node = self.s.defs[name]
        return node

    def flat_properties(self, node: Any) -> dict[str, Any]:
        """Properties of `node` and of what it merges through `allOf` (not through unions)."""
        node = self.resolve(node)
        if not isinstance(node, dict):
            return {}
        out: dict[str, Any] = {}
        for member in node.get("allOf", []):
            out.update(self.flat_properties(member))
        out.update(node.get("properties", {}))
        return out

    def tag_of(self, alternatives: list[Any]) -> str | None:
        for alt in alternatives:
            for key, prop in self.flat_properties(alt).items():
                if isinstance(prop, dict) and isinstance(prop.get("const"), str):
                    return key
        return None

    def is_null(self, node: Any) -> bool:
        node = self.resolve(node)
        return isinstance(node, dict) and node.get("type") == "null"

    def select(self, alternatives: list[Any], value: Any) -> tuple[Any, bool, str | None]:
        """The alternative a decoder picks for `value`, whether the union is untagged, and the tag
        when a null tag picked the default variant."""
        if value is None:
            for alt in alternatives:
                if self.is_null(alt):
                    return alt, False, None
        tag = self.tag_of(alternatives)
        if tag is not None and isinstance(value, dict):
            props = [self.flat_properties(a).get(tag) for a in alternatives]
            wanted = value.get(tag)
            for alt, prop in zip(alternatives, props, strict=True):
                if isinstance(prop, dict) and "const" in prop and prop["const"] == wanted:
                    return alt, False, None
            if wanted is None:
                for alt, prop in zip(alternatives, props, strict=True):
                    if prop is None or self.is_null(prop):
                        return alt, False, (tag if tag in value else None)
            for alt, prop in zip(alternatives, props, strict=True):
                if isinstance(prop, dict) and "const" not in prop and not self.is_null(prop):
                    return alt, False, None
            return None, False, None
        for alt in alternatives:
            if not self.is_null(alt) and self.s.validator_for(alt).is_valid(value):
                return alt, True, None
        return None, True, None

    def object_view(self, node: Any, value: dict[str, Any], view: ObjectView | None = None) -> ObjectView:
        view = view or ObjectView()
        node = self.resolve(node)
        if not isinstance(node, dict) or not (set(node) - {"type"}):
            view.keeps_unknown = True
            return view
        for key, prop in (node.get("properties") or {}).items():
            view.properties.setdefault(key, []).append(prop)
        extra = node.get("additionalProperties")
        if extra is True or node.get("unevaluatedProperties") is True:
            view.keeps_unknown = True
        elif isinstance(extra, dict) and extra:
            view.map_values = extra
        for member in node.get("allOf", []):
            self.object_view(member, value, view)
        for keyword in UNIONS:
            if isinstance(node.get(keyword), list):
                alt, untagged, null_tag = self.select(node[keyword], value)
                view.untagged |= untagged
                view.null_tag = view.null_tag or null_tag
                if alt is not None:
                    self.object_view(alt, value, view)
        return view

    def value_node(self, node: Any, value: Any) -> Any:
        """The schema that decides `value`: unions without sibling properties resolved."""
        node = self.resolve(node)
        for _ in range(64):
            if not isinstance(node, dict) or "properties" in node or "allOf" in node:
                return node
            alternatives = next((node[k] for k in UNIONS if isinstance(node.get(k), list)), None)
            if alternatives is None:
                return node
            alt, _, _ = self.select(alternatives, value)
            if alt is None:
                return node
            node = self.resolve(alt)
        return node

    # -- the round trip's expected value -----------------------------------------------------

    def normalise(self, node: Any, value: Any) -> Any:
        """`value` as `encode(decode(value))` must return it."""
        if isinstance(value, list):
            shape = self.value_node(node, value)
            items = shape.get("items", True) if isinstance(shape, dict) else True
            return [self.normalise(items, v) for v in value]
        if not isinstance(value, dict):
            return value
        view = self.object_view(node, value)
        if view.free:
            return value
        kept = null_tag_means_absent(view, drop_unknown_keys(view, value))
        out = {k: self.normalise(view.schema_of(k), v) for k, v in kept.items()}
        return materialise_defaults(view, out, self.normalise)

    def normalise_def(self, name: str, value: Any) -> Any:
        return self.normalise(self.s.defs[name], value)
