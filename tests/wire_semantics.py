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
    via_untagged: set[str] = field(default_factory=set)  # properties an untagged union decodes
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
        untagged = not self.nullable_wrapper(alternatives)
        for alt in alternatives:
            if not self.is_null(alt) and self.s.validator_for(alt).is_valid(value):
                return alt, untagged, None
        return None, untagged, None

    def object_view(self, node: Any, value: dict[str, Any], view: ObjectView | None = None,
                    via_untagged: bool = False) -> ObjectView:
        """What the schema says about the object `value`. Properties of an untagged union (its
        alternatives' and the common ones beside it, which every alternative decodes) are noted:
        a failure in them is the union's failure."""
        view = view or ObjectView()
        node = self.resolve(node)
        if not isinstance(node, dict) or not (set(node) - {"type"}):
            view.keeps_unknown = True
            return view
        choices = [(node[k], self.select(node[k], value)) for k in UNIONS if isinstance(node.get(k), list)
                   and not self.is_enum(node[k])]
        via_untagged = via_untagged or any(untagged for _, (_, untagged, _) in choices)
        for key, prop in (node.get("properties") or {}).items():
            view.properties.setdefault(key, []).append(prop)
            if via_untagged:
                view.via_untagged.add(key)
        extra = node.get("additionalProperties")
        if extra is True or node.get("unevaluatedProperties") is True:
            view.keeps_unknown = True
        elif isinstance(extra, dict) and extra:
            view.map_values = extra
        for member in node.get("allOf", []):
            self.object_view(member, value, view, via_untagged)
        for alternatives, (alt, _, null_tag) in choices:
            view.null_tag = view.null_tag or null_tag
            if alt is not None:
                self.object_view(alt, value, view, via_untagged)
            tag = self.tag_of(alternatives)
            if tag is not None and not via_untagged:
                view.via_untagged.discard(tag)  # dispatched on before any variant is decoded
        return view

    def nullable_wrapper(self, alternatives: list[Any]) -> bool:
        """`[X, null]`: X or null, not a union (any other list of alternatives is one)."""
        return len(alternatives) == 2 and any(self.is_null(a) for a in alternatives)

    def is_enum(self, alternatives: list[Any]) -> bool:
        rest = [self.resolve(a) for a in alternatives if not self.is_null(a)]
        return all(isinstance(a, dict) and ("const" in a or set(a) <= {"type", "title", "description", "format"})
                   for a in rest)

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


# -- where a decode error must point, and when decoding must succeed anyway --------------------

Path_ = tuple[str | int, ...]


@dataclass
class Frame:
    """One step from the root to a location: the schema that held the value there (a property or
    an array's items) and what the decoder does on a failure beneath it."""

    holder: Any  # property schema (with its x- flags), or None for the root and array items
    boundary: bool  # an untagged union: a failure beneath is reported here, without a deeper path
    dropped_item: bool  # an item of an array whose property skips invalid items


def dotted(path: Path_) -> str:
    """A location in the generated ValidationError.path format: `prompt[1].resource.uri`."""
    out = ""
    for segment in path:
        out += f"[{segment}]" if isinstance(segment, int) else (f".{segment}" if out else str(segment))
    return out


class Oracle(WireSemantics):
    """Expected outcomes for mutated messages. Validity is JSON Schema validity with the tag
    dispatch of DESIGN.md section 4: a tagged union's variant without a tag (the default) is not
    a candidate when the tag names a known variant (`{"type": "boolean", "value": "x"}` is not a
    valid SetSessionConfigOptionRequest just because the tagless `value_id` variant would accept it)."""

    def __init__(self, strategies: SchemaStrategies) -> None:
        super().__init__(strategies)
        self.dispatch_defs = {k: self.dispatching(v) for k, v in strategies.defs.items()}
        self._validators: dict[str, Any] = {}

    def dispatching(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.dispatching(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: (v if k in ("const", "enum", "default", "examples") else self.dispatching(v)) for k, v in node.items()}
        for keyword in UNIONS:
            alternatives = node.get(keyword)
            if not isinstance(alternatives, list) or self.is_enum(alternatives):
                continue
            tag = self.tag_of(alternatives)
            if tag is None:
                continue
            props = [self.flat_properties(a).get(tag) for a in alternatives]
            known = [p["const"] for p in props if isinstance(p, dict) and "const" in p]
            out[keyword] = [self.default_when(alt, tag, known, self.is_null(prop)) if prop is None or self.is_null(prop)
                            else alt for alt, prop in zip(out[keyword], props, strict=True)]
        return out

    @staticmethod
    def default_when(alt: Any, tag: str, known: list[Any], null_allowed: bool) -> Any:
        """The default variant applies when the tag is absent, an unknown string, or (when its
        schema allows it) null; a known tag or a tag of another type never reaches it."""
        cases: list[Any] = [{"not": {"required": [tag]}},
                            {"properties": {tag: {"type": "string", "not": {"enum": known}}}}]
        if null_allowed:
            cases.append({"properties": {tag: {"type": "null"}}})
        return {"allOf": [alt], "anyOf": cases}

    def validator(self, name: str) -> Any:
        if name not in self._validators:
            from tests.schema_strategies import ValidatorClass

            root = {self.s.defs_key: self.dispatch_defs, "$ref": f"{self.s.prefix}{name}"}
            self._validators[name] = ValidatorClass(root, format_checker=self.s.checker)
        return self._validators[name]

    def untagged_union(self, node: Any) -> bool:
        node = self.resolve(node)
        for _ in range(64):
            if not isinstance(node, dict):
                return False
            alternatives = next((node[k] for k in UNIONS if isinstance(node.get(k), list)), None)
            if alternatives is None or self.is_enum(alternatives):
                return False
            if self.nullable_wrapper(alternatives) and "properties" not in node:
                node = self.resolve(next(a for a in alternatives if not self.is_null(a)))
                continue
            return self.tag_of(alternatives) is None
        return False

    def trail(self, name: str, value: Any, path: Path_) -> list[Frame]:
        """Frames for the root and each step of `path` into `value` (an instance of `name`)."""
        node: Any = self.s.defs[name]
        frames = [Frame(None, False, False)]
        holder_flags: Any = None
        for segment in path:
            frames[-1].boundary |= self.untagged_union(node)
            if isinstance(value, dict):
                view = self.object_view(node, value)
                frames[-1].boundary |= str(segment) in view.via_untagged
                node = view.schema_of(str(segment))
                frames.append(Frame(node, False, False))
                holder_flags = node
            else:
                shape = self.value_node(node, value)
                node = shape.get("items", True) if isinstance(shape, dict) else True
                skip = isinstance(holder_flags, dict) and holder_flags.get(SKIP_ITEMS) is True
                frames.append(Frame(None, False, skip))
                holder_flags = None
            value = value[segment]
        frames[-1].boundary |= self.untagged_union(node)
        return frames

    def lenient(self, frames: list[Frame], *, value_is_null: bool, missing_key: bool) -> bool:
        """Whether a failure at the last frame is absorbed (default-on-error above or at it, an
        item dropped by skip-invalid-items, null on a default-on-null property)."""
        for index, frame in enumerate(frames):
            last = index == len(frames) - 1
            holder = frame.holder if isinstance(frame.holder, dict) else {}
            if holder.get(LENIENT) is True and not (last and missing_key):
                return True
            if frame.dropped_item and not (last and missing_key):
                return True
        last_holder = frames[-1].holder if isinstance(frames[-1].holder, dict) else {}
        return value_is_null and last_holder.get(NULL_DEFAULT) is True and not missing_key

    def error_path(self, frames: list[Frame], path: Path_) -> Path_:
        """Where the decoder reports a failure at `path`: the outermost untagged union on the way
        (it says "matches no variant" for its whole value), else the location itself."""
        for index, frame in enumerate(frames[:-1] if frames else []):
            if frame.boundary:
                return path[:index]
        return path
