"""Python source fragments for the templates: the one place that turns a TypeRef into an
annotation, a decode expression or an encode expression, and records the helper functions
(list, map and nullable decoders) those expressions call.

Templates lay fragments out; they never decide what a fragment is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from acpgen.ir.model import Alias, Enum, Field, Node, Package, Struct, TypeRef, Union_
from acpgen.ir.naming import snake

SCALAR_ANN = {"str": "str", "int": "int", "float": "float", "bool": "bool", "null": "None",
              "any": "JsonValue", "object": "dict[str, JsonValue]"}
SCALAR_WORD = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean",
               "null": "null", "object": "an object"}


def decoder_name(key: str) -> str:
    """`list_ContentBlock` -> `_dec_list_content_block` (function names are snake_case)."""
    return "_dec_" + "_".join(snake(part).rstrip("_") for part in key.split("_") if part)


def constant_name(name: str) -> str:
    return snake(name).rstrip("_").upper()


@dataclass(frozen=True)
class Helper:
    """A generated module-level decoder for a composite type (list, map, nullable)."""

    name: str
    kind: str  # list | list_skip | map | opt
    ann: str  # annotation of the result
    item: Decode
    min_items: int | None = None


@dataclass(frozen=True)
class Decode:
    """How to decode one value held in a local: an inline check or a call."""

    check: str = ""  # condition that is true when the local is invalid (inline scalars)
    expected: str = ""  # what the error says was expected
    call: str = ""  # expression template with {x}, for everything else
    accept: str = ""  # condition that is true when the local is valid (inline scalars)

    def expr(self, local: str) -> str:
        return self.call.format(x=local) if self.call else local


@dataclass
class Emitter:
    package: Package
    helpers: dict[str, Helper] = field(default_factory=dict)

    # -- resolution ------------------------------------------------------------------------

    def node(self, t: TypeRef) -> Node:
        return self.package.node(t.name)

    def resolve(self, t: TypeRef) -> TypeRef:
        """Follow aliases to the type that decides the codec."""
        seen = 0
        while t.kind == "named" and isinstance(self.node(t), Alias) and seen < 64:
            t = self.node(t).target  # type: ignore[union-attr]
            seen += 1
        return t

    # -- annotations -----------------------------------------------------------------------

    def ann(self, t: TypeRef) -> str:
        if t.kind in SCALAR_ANN:
            return SCALAR_ANN[t.kind]
        if t.kind == "literal":
            return f"Literal[{t.const!r}]"
        if t.kind == "named":
            node = self.node(t)
            if isinstance(node, Enum) and node.open:
                return f"{node.name} | {node.base}"
            return node.name
        assert t.item is not None
        if t.kind == "list":
            return f"list[{self.ann(t.item)}]"
        if t.kind == "map":
            return f"dict[str, {self.ann(t.item)}]"
        return f"{self.ann(t.item)} | None"

    def field_ann(self, f: Field) -> str:
        out = self.ann(f.type)
        nullable = f.nullable or out == "None"
        parts = [] if out == "None" else [out]
        if not f.required and not f.has_default:
            parts.append("Unset")
        if nullable:
            parts.append("None")
        return " | ".join(parts)

    # -- decoding --------------------------------------------------------------------------

    def key(self, t: TypeRef) -> str:
        c = t.constraints
        bounds = "".join(f"_{n}{v}".replace("-", "m").replace(".", "p") for n, v in (
            ("min", c.minimum), ("max", c.maximum), ("items", c.min_items), ("len", c.min_length)) if v is not None)
        if t.kind == "named":
            return t.name + bounds
        if t.kind == "literal":
            return "lit_" + re.sub(r"\W", "_", str(t.const)) + bounds
        if t.item is not None:
            return {"list": "list_", "map": "map_", "nullable": "opt_"}[t.kind] + self.key(t.item) + bounds
        return t.kind + bounds

    def decode(self, t: TypeRef) -> Decode:
        r = self.resolve(t)
        if r.kind == "named":
            node = self.node(r)
            if isinstance(node, Struct):
                return Decode(call=f"{node.name}.from_dict({{x}})")
            return Decode(call=f"{decoder_name(node.name)}({{x}})")
        if r.kind == "any":
            return Decode()
        if r.kind in ("str", "int", "float", "bool", "null", "object", "literal"):
            return self.scalar(r)
        assert r.item is not None
        name = decoder_name(self.key(r))
        if name not in self.helpers:
            kind = {"list": "list", "map": "map", "nullable": "opt"}[r.kind]
            self.helpers[name] = Helper(name, kind, self.ann(r), self.decode(r.item), r.constraints.min_items)
        return Decode(call=f"{name}({{x}})")

    def decode_skipping(self, t: TypeRef) -> Decode:
        """A list decoder that drops (and reports) the items that fail."""
        r = self.resolve(t)
        if r.kind != "list" or r.item is None:
            return self.decode(t)
        name = decoder_name("skip_" + self.key(r))
        if name not in self.helpers:
            self.helpers[name] = Helper(name, "list_skip", self.ann(r), self.decode(r.item), r.constraints.min_items)
        return Decode(call=f"{name}({{x}})")

    def scalar(self, t: TypeRef) -> Decode:
        """An inline check: `check` is true for an invalid value, `accept` for a valid one."""
        c = t.constraints
        if t.kind == "literal":
            kind = type(t.const).__name__
            const = repr(t.const).replace("{", "{{").replace("}", "}}")  # these are str.format templates
            return Decode(f"type({{x}}) is not {kind} or {{x}} != {const}", repr(t.const),
                          accept=f"type({{x}}) is {kind} and {{x}} == {const}")
        base = {
            "str": ("type({x}) is not str", "type({x}) is str"),
            "int": ("type({x}) is not int", "type({x}) is int"),
            "float": ("(type({x}) is not float and type({x}) is not int)", "(type({x}) is float or type({x}) is int)"),
            "bool": ("type({x}) is not bool", "type({x}) is bool"),
            "null": ("{x} is not None", "{x} is None"),
            "object": ("not isinstance({x}, dict)", "isinstance({x}, dict)"),
        }
        bad, good = base[t.kind]
        word = SCALAR_WORD[t.kind]
        if t.kind in ("int", "float"):
            if c.minimum is not None and c.maximum is not None:
                bad += f" or not {c.minimum!r} <= {{x}} <= {c.maximum!r}"
                good += f" and {c.minimum!r} <= {{x}} <= {c.maximum!r}"
                word += f" from {c.minimum} to {c.maximum}"
            elif c.minimum is not None:
                bad += f" or {{x}} < {c.minimum!r}"
                good += f" and {{x}} >= {c.minimum!r}"
                word += f" of at least {c.minimum}"
            elif c.maximum is not None:
                bad += f" or {{x}} > {c.maximum!r}"
                good += f" and {{x}} <= {c.maximum!r}"
                word += f" of at most {c.maximum}"
        if t.kind == "str" and c.min_length:
            bad += f" or len({{x}}) < {c.min_length}"
            good += f" and len({{x}}) >= {c.min_length}"
            word += f" of at least {c.min_length} characters"
        if t.kind == "float" and bad.startswith("(") and " or " not in bad[bad.index(")"):]:
            bad, good = bad[1:-1], good[1:-1]
        return Decode(bad, word, accept=good)

    # -- fields ----------------------------------------------------------------------------

    def default_expr(self, f: Field) -> str:
        """Source for the field's schema default, evaluated fresh each time it is used."""
        value = f.default
        r = self.resolve(f.type)
        if r.kind in ("str", "int", "float", "bool", "literal", "null", "any") and not isinstance(value, (list, dict)):
            return repr(value)
        if value is None and f.nullable:
            return "None"
        if r.kind == "list" and value == []:
            return "[]"
        if r.kind in ("map", "object") and value == {}:
            return "{}"
        return self.decode(f.type).expr(repr(value))

    def fallback(self, f: Field) -> str:
        """What `x-deserialize-default-on-error` puts in place of an invalid value ("" = none)."""
        if f.has_default:
            return self.default_expr(f)
        if f.nullable:
            return "None"
        if self.resolve(f.type).kind == "list":
            return "[]"
        if not f.required:
            return "UNSET"
        return ""

    def init_default(self, f: Field) -> tuple[str, str]:
        """How `__init__` takes the field when it is left out: (the default in the signature, the
        expression stored instead when that default is UNSET but the field has a schema default).

        An immutable default (`False`, `'other'`) sits in the signature; a default that must be
        built fresh for each object (`[]`, a nested object) is UNSET in the signature and built in
        the body, as a dataclass `default_factory` would."""
        if f.required:
            return "", ""
        if not f.has_default:
            return "UNSET", ""
        expr = self.default_expr(f)
        if re.fullmatch(r"[-\w.'\" ]*", expr):
            return expr, ""
        return "UNSET", expr

    # -- encoding --------------------------------------------------------------------------

    def encode(self, t: TypeRef, v: str, depth: int = 0) -> str:
        r = self.resolve(t)
        if r.kind == "named":
            node = self.node(r)
            if isinstance(node, Struct):
                return f"{v}.to_dict()"
            if isinstance(node, Enum):
                # `_value_` is the member's value as a plain attribute; `.value` goes through a
                # descriptor and costs about twice as much per field.
                return f"({v}._value_ if isinstance({v}, {node.name}) else {v})" if node.open else f"{v}._value_"
            if isinstance(node, Union_) and all(
                self.resolve(var.type).kind == "named" and isinstance(self.node(self.resolve(var.type)), Struct)
                for var in node.variants
            ):
                return f"{v}.to_dict()"
            return f"encode_value({v})"
        if r.kind == "nullable" and r.item is not None:
            # The same value, guarded: encode it under its own name, not a fresh loop variable.
            inner = self.encode(r.item, v, depth)
            return v if inner == v else f"(None if {v} is None else {inner})"
        if r.kind in ("list", "map") and r.item is not None:
            i = f"i{depth}"
            inner = self.encode(r.item, i, depth + 1)
            if inner == i:
                return v
            if r.kind == "list":
                return f"[{inner} for {i} in {v}]"
            return f"{{k{depth}: {inner} for k{depth}, {i} in {v}.items()}}"
        return v
