"""The one place that turns IR types into generated code: annotations, decode plans (a check or a
call per value), field plans, encode expressions, and the statements of a field's decode.

Everything here is built as a structured value first (`Check`, `Call`, `FieldPlan`) and printed by
one function each; nothing is printed and then taken apart again. Every name a printed expression
needs is recorded in `Imports` by the function that prints it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cmp_to_key

from acpgen.ir.model import Alias, Enum, Field, Node, Package, Struct, TypeRef, Union_, value
from acpgen.ir.naming import BODY_BUILTINS, snake

SCALAR_ANN = {"str": "str", "int": "int", "float": "float", "bool": "bool", "null": "None"}
SCALAR_WORD = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean",
               "null": "null", "object": "an object"}

# Where each name the generated models may use comes from (the rest come from `._codec`).
NAME_SOURCES = {
    "Callable": "collections.abc", "Enum": "enum",
    "ClassVar": "typing", "Final": "typing", "Literal": "typing", "TypeAlias": "typing", "cast": "typing",
    "TYPE_CHECKING": "typing", "Self": "typing_extensions", "check": "._schemas", "checked": "._schemas",
    **dict.fromkeys(BODY_BUILTINS, "builtins"),
}
CODEC = "._codec"
TYPING_ONLY = "typing_extensions"


def decoder_name(key: str) -> str:
    """`list_ContentBlock` -> `_dec_list_content_block` (function names are snake_case)."""
    return "_dec_" + "_".join(snake(part).rstrip("_") for part in key.split("_") if part)


def hook_alias(target: str) -> str:
    """`myapp.hooks:version` -> `_hook_myapp_hooks_version`: the name models.py imports it as."""
    return "_hook_" + re.sub(r"\W", "_", target)


def constant_name(name: str) -> str:
    return snake(name).rstrip("_").upper()


def isort_key(name: str) -> tuple[int, str]:
    """isort's order-by-type: CONSTANTS, then Classes, then functions."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def _natural_compare(a: str, b: str) -> int:
    """ruff's natural order (the `natord` crate): characters compare by code point, except that runs
    of ASCII digits compare as numbers (right-aligned; left-aligned, as fractions, when either run
    starts with `0`), and whitespace is skipped."""
    i = j = 0
    while True:
        while i < len(a) and a[i].isspace():
            i += 1
        while j < len(b) and b[j].isspace():
            j += 1
        if i == len(a) or j == len(b):
            return (i < len(a)) - (j < len(b))
        x, y = a[i], b[j]
        if x in _DIGITS and y in _DIGITS:
            i2, j2 = i, j
            while i2 < len(a) and a[i2] in _DIGITS:
                i2 += 1
            while j2 < len(b) and b[j2] in _DIGITS:
                j2 += 1
            left, right = a[i:i2], b[j:j2]
            if x == "0" or y == "0":
                # left-aligned: digit by digit, then the longer run is greater
                for p, q in zip(left, right, strict=False):
                    if p != q:
                        return -1 if p < q else 1
                if len(left) != len(right):
                    return -1 if len(left) < len(right) else 1
            elif len(left) != len(right):
                return -1 if len(left) < len(right) else 1
            elif left != right:
                return -1 if left < right else 1
            i, j = i2, j2
            continue
        if x != y:
            return -1 if x < y else 1
        i, j = i + 1, j + 1


_DIGITS = frozenset("0123456789")


def _casing(name: str) -> int:
    """ruff's isort-style category: SCREAMING_CASE (longer than one UTF-8 byte), CamelCase, other."""
    cased = False
    for ch in name:
        if ch.islower():
            return 1 if name[:1].isupper() else 2
        cased = cased or ch.isupper()
    if cased and len(name.encode("utf-8", "surrogatepass")) > 1:
        return 0
    return 1 if name[:1].isupper() else 2


def dunder_all_order(names: Iterable[str]) -> list[str]:
    """`names` in the order ruff's RUF022 wants an `__all__` in: by casing category, then naturally
    (`Name2` before `Name10`)."""
    by_casing: dict[int, list[str]] = {}
    for name in names:
        by_casing.setdefault(_casing(name), []).append(name)
    return [n for kind in sorted(by_casing) for n in natural_sorted(by_casing[kind])]


# Without ASCII digits or whitespace, the natural order is the code point order `sorted` gives.
_NATURAL_ONLY = re.compile(r"[0-9\s]")


def natural_sorted(names: list[str]) -> list[str]:
    if _NATURAL_ONLY.search("".join(names)) is None:
        return sorted(names)
    return sorted(names, key=cmp_to_key(_natural_compare))


@dataclass
class PrivateNames:
    """The module-private names models.py derives from class names and type keys: decoders
    (`_dec_content_block`), closed-enum tables (`_STOP_REASON_WIRE`), union encoder tables
    (`_CONTENT_BLOCK_ENCODERS`). Derivation folds case and punctuation (`UNSET` and `Unset`, `a-b`
    and `a_b`, a class `ListFoo` and the helper of `list[Foo]`), so each key gets its own name:
    the derived one, or the first free `_2`, `_3`, ... (the classes are registered first, in
    sorted order, so the result is deterministic)."""

    names: dict[tuple[str, str], str] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    def _name(self, kind: str, key: str, derived: str) -> str:
        out = self.names.get((kind, key))
        if out is None:
            out, number = derived, 2
            while out in self.taken:
                out, number = f"{derived}_{number}", number + 1
            self.names[kind, key] = out
            self.taken.add(out)
        return out

    def decoder(self, key: str) -> str:
        """The decoder of a class (`ContentBlock`) or a type key (`list_ContentBlock`)."""
        return self._name("decoder", key, decoder_name(key))

    def wire_table(self, name: str) -> str:
        """A closed enum's member -> wire value table."""
        return self._name("wire", name, f"_{constant_name(name)}_WIRE")

    def encoders_table(self, name: str) -> str:
        """A union's variant class -> encoder table."""
        return self._name("encoders", name, f"_{constant_name(name)}_ENCODERS")

    def variants_table(self, name: str) -> str:
        """An untagged union's (label, decoder, kept keys) table for `widest_variant`."""
        return self._name("variants", name, f"_{constant_name(name)}_VARIANTS")

    def hook(self, target: str) -> str:
        """The local name of a `hooks` function (`a.b:c` and `a_b:c` both derive `_hook_a_b_c`)."""
        return self._name("hook", target, hook_alias(target))


@dataclass
class Imports:
    """The names a generated module uses, recorded as the code that uses them is built.

    `taken` holds the names the module defines itself (its classes). A name the module imports that
    a class of it has taken (`Literal`, `Final`, `Model`) is imported under a private alias
    (`from typing import Literal as _Literal`) and `use` returns the alias, so the module's own
    names never shadow what its code relies on and no schema name is reserved. The same goes for
    the builtins a class body names (`list`, `str`, ...): a field may be called `list` (a class
    attribute that would shadow the builtin in the annotations after it), so `taken` holds such
    field names too and the module imports `from builtins import list as _list`. (No class is
    named like a builtin, see naming.BUILTIN_CLASS_NAMES.)"""

    taken: frozenset[str] = frozenset()
    names: set[str] = field(default_factory=set)

    def use(self, name: str) -> str:
        """Record `name` as used and return what the module calls it. A builtin the class bodies
        name (naming.BODY_BUILTINS) is imported, as `_list`, only where a field has taken it."""
        if name in BODY_BUILTINS and name not in self.taken:
            return name
        self.names.add(name)
        return self.local(name)

    def local(self, name: str) -> str:
        """What the module calls `name` (without recording a use)."""
        return "_" + name if name in self.taken else name

    def statements(self, module: str, names: list[str]) -> list[str]:
        """`from module import a, b` plus one `from module import x as _x` per aliased name, in the
        order ruff's isort wants (by the first name; a plain statement before an aliased one)."""
        plain = sorted({n for n in names if n not in self.taken}, key=isort_key)
        keyed = [((*isort_key(plain[0]), 0), f"from {module} import {', '.join(plain)}")] if plain else []
        keyed += [((*isort_key(n), 1), f"from {module} import {n} as _{n}") for n in set(names) if n in self.taken]
        return [line for _, line in sorted(keyed)]

    def lines(self, third_party: tuple[str, ...] | list[str] = ()) -> str:
        """The import block: the standard library, `third_party` lines, the package's own
        modules, then the names type checkers alone need (under `if TYPE_CHECKING:`)."""
        by_module: dict[str, list[str]] = {}
        for name in self.names:
            by_module.setdefault(NAME_SOURCES.get(name, CODEC), []).append(name)
        # Names for type checkers only (typing_extensions is not imported when the code runs).
        checking = by_module.pop(TYPING_ONLY, [])
        if checking:
            by_module.setdefault("typing", []).append("TYPE_CHECKING")
        stdlib = [m for m in sorted(by_module) if not m.startswith(".")]
        local = [m for m in sorted(by_module) if m.startswith(".")]

        def block(modules: list[str]) -> str:
            return "\n".join(line for m in modules for line in self.statements(m, by_module[m]))

        blocks = [block(stdlib)] if stdlib else []
        if third_party:
            blocks.append("\n".join(third_party))
        if local:
            blocks.append(block(local))
        if checking:
            guarded = "\n    ".join(self.statements(TYPING_ONLY, checking))
            blocks.append(f"if {self.local('TYPE_CHECKING')}:\n    {guarded}")
        return "\n\n".join(blocks)


@value
@dataclass(frozen=True, eq=False, repr=False)
class Check:
    """An inline test of a JSON scalar: its type (`kind`), or a literal value, and its limits."""

    kind: str  # str | int | float | bool | null | object | literal
    expected: str  # what the error says was expected
    const: str | int | bool | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_length: int | None = None

    @property
    def returns_const(self) -> bool:
        """A string or number literal: a decoder returns the constant, not the checked value,
        which mypy cannot narrow from `object` to the Literal (`is True` narrows, so bools not)."""
        return self.kind == "literal" and type(self.const) is not bool

    def invalid(self, x: str) -> str:
        """A condition true when local `x` fails the check."""
        if self.kind == "literal":
            if type(self.const) is bool:  # `is` narrows to the Literal and lints clean (no `!= True`)
                return f"{x} is not {self.const!r}"
            if type(self.const) is int:  # by value, as JSON Schema compares numbers: 1.0 is 1 (True is not)
                return f"{x} != {self.const!r} or type({x}) is bool"
            return f"type({x}) is not {type(self.const).__name__} or {x} != {self.const!r}"
        if self.kind == "float":
            parts = [f"(type({x}) is not float and type({x}) is not int)"]
        elif self.kind == "null":
            parts = [f"{x} is not None"]
        elif self.kind == "object":
            parts = [f"not isinstance({x}, dict)"]
        else:
            parts = [f"type({x}) is not {self.kind}"]
        if self.minimum is not None and self.maximum is not None:
            parts.append(f"not {self.minimum!r} <= {x} <= {self.maximum!r}")
        elif self.minimum is not None:
            parts.append(f"{x} < {self.minimum!r}")
        elif self.maximum is not None:
            parts.append(f"{x} > {self.maximum!r}")
        if self.min_length:
            parts.append(f"len({x}) < {self.min_length}")
        if len(parts) == 1 and self.kind == "float":
            return parts[0][1:-1]
        return " or ".join(parts)

    def valid(self, x: str) -> str:
        """A condition true when local `x` passes the check."""
        if self.kind == "literal":
            if type(self.const) is bool:
                return f"{x} is {self.const!r}"
            if type(self.const) is int:
                return f"{x} == {self.const!r} and type({x}) is not bool"
            return f"type({x}) is {type(self.const).__name__} and {x} == {self.const!r}"
        if self.kind == "float":
            parts = [f"(type({x}) is float or type({x}) is int)"]
        elif self.kind == "null":
            parts = [f"{x} is None"]
        elif self.kind == "object":
            parts = [f"isinstance({x}, dict)"]
        else:
            parts = [f"type({x}) is {self.kind}"]
        if self.minimum is not None and self.maximum is not None:
            parts.append(f"{self.minimum!r} <= {x} <= {self.maximum!r}")
        elif self.minimum is not None:
            parts.append(f"{x} >= {self.minimum!r}")
        elif self.maximum is not None:
            parts.append(f"{x} <= {self.maximum!r}")
        if self.min_length:
            parts.append(f"len({x}) >= {self.min_length}")
        if len(parts) == 1 and self.kind == "float":
            return parts[0][1:-1]
        return " and ".join(parts)


@value
@dataclass(frozen=True, eq=False, repr=False)
class Call:
    """A decoder call: `callee(value, *args)`."""

    callee: str
    args: tuple[str, ...] = ()

    def expr(self, x: str) -> str:
        return f"{self.callee}({', '.join((x, *self.args))})"


@value
@dataclass(frozen=True, eq=False, repr=False)
class Decode:
    """How to decode one value: an inline check, a call, or (neither) take it as it is."""

    check: Check | None = None
    call: Call | None = None

    @property
    def expected(self) -> str:
        return self.check.expected if self.check else ""

    def expr(self, x: str) -> str:
        return self.call.expr(x) if self.call else x

    def invalid(self, x: str) -> str:
        assert self.check is not None
        return self.check.invalid(x)

    def valid(self, x: str) -> str:
        assert self.check is not None
        return self.check.valid(x)


@value
@dataclass(frozen=True, eq=False, repr=False)
class Helper:
    """A generated module-level decoder for a composite type (list, map, nullable)."""

    name: str
    kind: str  # list | list_skip | map | opt | scalar | checked
    ann: str  # annotation of the result
    item: Decode
    min_items: int | None = None
    pointer: str = ""  # kind `checked`: the schema the value is validated against first


@value
@dataclass(frozen=True, eq=False, repr=False)
class Default:
    """A field's schema default: a value shared by every object (immutable), or a factory."""

    value: str = ""  # source of the value (`False`, `ToolKind.OTHER`, `'x'`)
    factory: str = ""  # source of a callable making a fresh one (`list`, `lambda: X.from_dict(...)`)
    fresh: str = ""  # source that builds a fresh one inline (`[]`, `X.from_dict(...)`)
    field: str = ""  # what the module calls the codec's `field` (for a factory)
    unset: bool = False  # the value is UNSET: an optional field without a schema default

    @property
    def expr(self) -> str:
        """An expression giving the default (fresh each time for a factory)."""
        return self.value or self.fresh


# Where a field plan's `enc_at` reads the value: `to_dict` puts the name of a local there.
VALUE_AT = "\x00"


@value
@dataclass(frozen=True, eq=False, repr=False)
class FieldPlan:
    """Everything the generated code does with one field, decided once."""

    f: Field
    local: str  # the local in from_dict
    ann: str  # the annotation of the attribute
    default: Default | None  # the schema default (or UNSET for an optional field); None: required
    dec: Decode
    absent: str  # the value stored when the key is absent ("" = a required key)
    on_null: str  # what an explicit null becomes under x-deserialize-default-on-null ("" = no rule)
    fallback: str  # what replaces an invalid value under x-deserialize-default-on-error ("" = no rule)
    enc: str  # the encode expression of `self.<py>`
    hook: str  # the local name of the hook function ("" = none)
    enc_at: str = ""  # the encode expression of a value at VALUE_AT (`to_dict` names a local there)

    @property
    def class_default(self) -> str:
        """The right-hand side in the class body ("" for a required field)."""
        if self.default is None:
            return ""
        return self.default.value or f"{self.default.field}(default_factory={self.default.factory})"

    @property
    def may_be_unset(self) -> bool:
        return self.default is not None and self.default.unset

    @property
    def stored(self) -> str:
        """What from_dict stores: the local, or the constant itself for a `const` field (its check
        leaves the local typed `str`, which a `Literal[...]` attribute does not accept)."""
        t, f = self.f.type, self.f
        if t.kind != "literal" or f.flatten:
            return self.local
        if f.required and not f.nullable:
            return repr(t.const)
        if self.default is not None and not self.default.unset and not f.nullable:
            return repr(t.const)  # absent takes the default, which is the constant itself
        kept = [f"{self.local} is None"] if f.nullable else []
        if self.default is not None and self.default.unset:
            kept.append(f"{self.local} is {self.default.value}")  # UNSET, as the module prints it
        return f"{self.local} if {' or '.join(kept)} else {t.const!r}" if kept else repr(t.const)


@dataclass
class Emitter:
    """Writes the codec expressions of one package, collecting the imports and helpers they use."""

    package: Package
    imports: Imports = field(default_factory=Imports)
    helpers: dict[str, Helper] = field(default_factory=dict)
    variant_classes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # union -> its classes
    private: PrivateNames = field(default_factory=PrivateNames)
    alike_open: set[str] = field(default_factory=set)  # unions alike_encoding is looking into
    nodes: dict[str, Node] = field(init=False)  # name -> node, read for every type the codec follows

    def __post_init__(self) -> None:
        self.nodes = self.package._index
        # Classes first, in sorted order: their names do not depend on which helpers exist.
        for node in sorted(self.package.nodes, key=lambda n: n.name):
            if isinstance(node, Enum | Union_) or (isinstance(node, Alias) and node.check):
                self.private.decoder(node.name)
            if isinstance(node, Enum) and not node.open:
                self.private.wire_table(node.name)
            if isinstance(node, Union_):
                self.private.encoders_table(node.name)
        for target in sorted({f.hook for n in self.package.nodes if isinstance(n, Struct) for f in n.fields if f.hook}):
            self.private.hook(target)

    def use(self, name: str) -> str:
        return self.imports.use(name)

    # -- resolution ------------------------------------------------------------------------

    def node(self, t: TypeRef) -> Node:
        return self.nodes[t.name]

    def resolve(self, t: TypeRef) -> TypeRef:
        """Follow aliases to the type that decides the codec."""
        seen = 0
        while t.kind == "named" and seen < 64:
            node = self.nodes[t.name]
            if not isinstance(node, Alias) or node.check:
                break
            t = node.target
            seen += 1
        return t

    # -- annotations -----------------------------------------------------------------------

    def ann(self, t: TypeRef) -> str:
        return annotation(self.nodes, t, self.use)

    def field_ann(self, f: Field) -> str:
        out = with_wire_values(self.nodes, f.type, self.ann(f.type), self.use)
        parts = [] if out == "None" else [out]
        if not f.required and not f.has_default:
            parts.append(self.use("Unset"))
        if f.nullable or out == "None":
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
            return literal_key(t.const) + bounds
        if t.item is not None:
            return {"list": "list_", "map": "map_", "nullable": "opt_"}[t.kind] + self.key(t.item) + bounds
        return t.kind + bounds

    def decode(self, t: TypeRef) -> Decode:
        r = self.resolve(t)
        if r.kind == "named":
            node = self.node(r)
            if isinstance(node, Struct):
                return Decode(call=Call(f"{node.name}.from_dict"))
            name = self.private.decoder(node.name)
            if isinstance(node, Alias) and name not in self.helpers:
                self.use("check")
                self.helpers[name] = Helper(name, "checked", self.ann(r), self.decode(node.target), pointer=node.check)
            return Decode(call=Call(name))
        if r.kind == "any":
            return Decode()
        if r.kind in ("str", "int", "float", "bool", "null", "object", "literal"):
            return Decode(check=self.scalar(r))
        assert r.item is not None
        name = self.private.decoder(self.key(r))
        if name not in self.helpers:
            kind = {"list": "list", "map": "map", "nullable": "opt"}[r.kind]
            self.helpers[name] = Helper(name, kind, self.ann(r), self.decode(r.item), r.constraints.min_items)
        return Decode(call=Call(name))

    def decode_skipping(self, t: TypeRef, owner: str) -> Decode:
        """A list decoder that drops (and reports, naming `owner`) the items that fail."""
        r = self.resolve(t)
        if r.kind != "list" or r.item is None:
            return self.decode(t)
        name = self.private.decoder("skip_" + self.key(r))
        if name not in self.helpers:
            self.use("report_skipped")
            self.helpers[name] = Helper(name, "list_skip", self.ann(r), self.decode(r.item), r.constraints.min_items)
        return Decode(call=Call(name, (repr(owner),)))

    def scalar(self, t: TypeRef) -> Check:
        if t.kind == "literal":
            return Check("literal", repr(t.const), const=t.const)
        c = t.constraints
        word = SCALAR_WORD[t.kind]
        low = high = None
        if t.kind in ("int", "float"):
            low, high = c.minimum, c.maximum
            if low is not None and high is not None:
                word += f" from {low} to {high}"
            elif low is not None:
                word += f" of at least {low}"
            elif high is not None:
                word += f" of at most {high}"
        length = c.min_length if t.kind == "str" and c.min_length else None
        if length:
            word += f" of at least {length} characters"
        return Check(t.kind, word, minimum=low, maximum=high, min_length=length)

    def decoder_callable(self, t: TypeRef) -> str:
        """A callable `object -> value` for the registry; scalars use the shared checkers."""
        r = self.resolve(t)
        if r.kind == "any":
            return "decode_any"
        if r.kind in ("str", "int", "float", "bool", "null", "object") and not r.constraints:
            return f"decode_{r.kind}"
        dec = self.decode(t)
        if dec.call is not None and not dec.call.args:
            return dec.call.callee
        name = self.private.decoder(self.key(r))
        if name not in self.helpers:
            self.helpers[name] = Helper(name, "scalar", self.ann(r), dec)
        return name

    # -- defaults --------------------------------------------------------------------------

    def default(self, f: Field) -> Default | None:
        """The class-body default: None for a required field, UNSET for an optional one without
        a schema default, else the schema default (a factory where it must be fresh per object)."""
        if f.required:
            return None
        if not f.has_default:
            return Default(value=self.use("UNSET"), unset=True)
        value = f.default
        r = self.resolve(f.type)
        if value is None and (f.nullable or r.kind in ("null", "any")):
            return Default(value="None")
        node = self.node(r) if r.kind == "named" else None
        if isinstance(node, Enum):
            member = next((m for m in node.members if m.value == value and type(m.value) is type(value)), None)
            if member is not None:
                return Default(value=f"{node.name}.{member.py}")
            return Default(value=repr(value))  # an open enum's other value
        if not isinstance(value, (list, dict)) and node is None:
            return Default(value=repr(value))
        spec = self.use("field")
        if value == [] and r.kind in ("list", "any"):
            return Default(factory=self.use("list"), fresh="[]", field=spec)
        if value == {} and r.kind in ("map", "object", "any"):
            return Default(factory=self.use("dict"), fresh="{}", field=spec)
        fresh = self.decode(f.type).expr(repr(value))
        return Default(factory=f"lambda: {fresh}", fresh=fresh, field=spec)

    def fallback(self, f: Field, default: Default | None) -> str:
        """What `x-deserialize-default-on-error` puts in place of an invalid value ("" = none)."""
        if f.has_default and default is not None:
            return default.expr
        if f.nullable:
            return "None"
        if self.resolve(f.type).kind == "list":
            return "[]"
        if not f.required:
            return self.use("UNSET")
        return ""

    # -- encoding --------------------------------------------------------------------------

    def encode(self, t: TypeRef, v: str, depth: int = 0) -> str | None:
        """The wire form of the value in `v`, or None when the value is its own wire form."""
        r = self.resolve(t)
        if r.kind == "named":
            node = self.node(r)
            if isinstance(node, Struct):
                return f"{v}.to_dict()"
            if isinstance(node, Enum):
                # `_value_` is the member's value as a plain attribute (`.value` is a descriptor).
                if node.open:
                    return f"({v}._value_ if isinstance({v}, {node.name}) else {v})"
                # A closed enum takes a member or its plain value; anything else is a KeyError.
                key = f"{self.use('not_bool')}({v})" if node.base == "int" else v
                return f"{self.private.wire_table(node.name)}[{key}]"
            if isinstance(node, Union_):
                classes = self.struct_variants(node)
                if classes:
                    self.variant_classes[node.name] = classes
                    # By the value's class: only a variant class writes the tag the peer dispatches on.
                    return f"{self.private.encoders_table(node.name)}[type({v})]({v})"
                alike = self.alike_encoding(node, v, depth)
                if alike != "":
                    return alike
            return f"{self.use('encode_value')}({v})"
        if r.kind == "nullable" and r.item is not None:
            inner = self.encode(r.item, v, depth)
            return None if inner is None else f"(None if {v} is None else {inner})"
        if r.kind in ("list", "map") and r.item is not None:
            i = f"i{depth}"
            inner = self.encode(r.item, i, depth + 1)
            if inner is None:
                return None
            if r.kind == "list":
                return f"[{inner} for {i} in {v}]"
            return f"{{k{depth}: {inner} for k{depth}, {i} in {v}.items()}}"
        return None

    def alike_encoding(self, node: Union_, v: str, depth: int) -> str | None:
        """The one expression every variant of `node` is encoded by (None: values are their own
        wire form; scalars), or "" when they differ: a union of lists of object types encodes
        each item's `to_dict()`, not through the generic walk. A union met again inside itself
        (a recursive type) differs; what looking recorded (imports, encoder tables) is undone
        when the answer is ""."""
        if node.name in self.alike_open or depth >= 8:
            return ""
        names, tables = set(self.imports.names), dict(self.variant_classes)
        self.alike_open.add(node.name)
        try:
            alike = {self.encode(var.type, v, depth) for var in node.variants}
        finally:
            self.alike_open.discard(node.name)
        if len(alike) == 1 and "" not in alike:
            return alike.pop()
        self.imports.names, self.variant_classes = names, tables
        return ""

    def struct_variants(self, u: Union_) -> tuple[str, ...]:
        """The classes of a union whose variants are all object types; () otherwise."""
        names: list[str] = []
        for var in u.variants:
            r = self.resolve(var.type)
            if r.kind != "named" or not isinstance(self.node(r), Struct):
                return ()
            names.append(r.name)
        return tuple(dict.fromkeys(names))

    # -- fields ----------------------------------------------------------------------------

    def field_plan(self, f: Field, owner: str, local: str, hook: str) -> FieldPlan:
        if f.flatten:
            return FieldPlan(f, local, self.ann(f.type), None, self.decode(f.type), "", "", "",
                             f"self.{f.py}.to_dict()", "")
        dec = self.decode_skipping(f.type, f"{owner}.{f.py}") if f.skip_invalid_items else self.decode(f.type)
        default = self.default(f)
        absent = "" if default is None else default.expr
        on_null = ""
        if f.default_on_null:
            r = self.resolve(f.type)
            if f.has_default and default is not None:
                on_null = default.expr
            else:
                on_null = "[]" if r.kind == "list" else "{}" if r.kind in ("map", "object") else "None"
        fallback = self.fallback(f, default) if f.default_on_error else ""
        enc, enc_at = (self.field_encode(f, source) for source in (f"self.{f.py}", VALUE_AT))
        return FieldPlan(f, local, self.field_ann(f), default, dec, absent, on_null, fallback, enc, hook, enc_at)

    def field_encode(self, f: Field, source: str) -> str:
        """The wire value of field `f` read from `source` (an expression without side effects)."""
        enc = self.encode(f.type, source)
        if enc is None:
            return source
        return f"None if {source} is None else {enc}" if f.nullable else enc

    def decode_statements(self, p: FieldPlan) -> list[str]:
        """The statements of `from_dict` that read one field into its local: presence, null, value."""
        x, w, f = p.local, repr(p.f.wire), p.f
        if f.flatten:
            return [f"{x} = {p.dec.expr('data')}"]
        out: list[str] = []
        if f.required:
            # A missing key raises KeyError, which from_dict turns into `missing` once for all keys.
            if p.dec.call is not None and not (p.hook or p.on_null or f.nullable):
                return self.decode_value(p, "if", "", source=f"data[{w}]")
            out.append(f"{x} = data[{w}]")
            if p.hook:
                out.append(f"{x} = {p.hook}({x})")
            if p.on_null:
                out += [f"if {x} is None:", f"    {x} = {p.on_null}"]
                return out + self.decode_value(p, "elif", "else")
            if f.nullable:
                return out + self.decode_value(p, "if", f"{x} is not None")
            return out + self.decode_value(p, "if", "")
        unset = self.use("UNSET")
        out.append(f"{x} = data.get({w}, {unset})")
        if p.hook:
            out += [f"if {x} is not {unset}:", f"    {x} = {p.hook}({x})"]
        default_from_schema = p.absent if f.has_default else ""
        if default_from_schema and p.dec.check and p.fallback == default_from_schema and not p.on_null and not f.nullable:
            # Absent and invalid both take the default: one branch.
            return [*out, f"if {x} is {unset} or {p.dec.invalid(x)}:", f"    {x} = {default_from_schema}"]
        if default_from_schema:
            out += [f"if {x} is {unset}:", f"    {x} = {default_from_schema}"]
            if p.on_null:
                out += [f"elif {x} is None:", f"    {x} = {p.on_null}"]
            return out + self.decode_value(p, "elif", f"{x} is not None" if f.nullable and not p.on_null else "else")
        if p.on_null:
            out += [f"if {x} is None:", f"    {x} = {p.on_null}"]
            return out + self.decode_value(p, "elif", f"{x} is not {unset}")
        guard = f"{x} is not {unset}" + (f" and {x} is not None" if f.nullable else "")
        return out + self.decode_value(p, "if", guard)

    def decode_value(self, p: FieldPlan, keyword: str, guard: str, source: str = "") -> list[str]:
        """Decode the local (or `source`, read into it) under `guard` (a condition; "" for none;
        "else" after a branch)."""
        x, dec = p.local, p.dec
        if dec.check is not None:
            cond = f"{guard} and ({dec.invalid(x)})" if guard not in ("", "else") else dec.invalid(x)
            return [f"{'elif' if guard == 'else' else keyword} {cond}:", f"    {self.on_error(p)}"]
        if dec.call is None:
            return []
        body = ["try:", f"    {x} = {dec.expr(source or x)}",
                f"except {self.use('ValidationError')}{'' if p.fallback else ' as e'}:", f"    {self.on_error(p)}"]
        if guard == "else":
            return ["else:", *indent(body)]
        if guard:
            return [f"{keyword} {guard}:", *indent(body)]
        return body

    def on_error(self, p: FieldPlan) -> str:
        """React to a failed decode of the local: the fallback, or an error naming the key."""
        if p.fallback:
            return f"{p.local} = {p.fallback}"
        if p.dec.check is not None:
            return f"raise {self.use('expected')}({p.dec.expected!r}, {p.local}, {p.f.wire!r})"
        return f"raise e.at({p.f.wire!r}) from None"


def literal_key(value: str | int | bool | None) -> str:
    """A helper-name part for a literal, distinct for distinct values: `"a b"` and `"a_b"`, `True`
    and `"True"`, `1` and `"1"` must not share a helper (one would check the other's value)."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_]*", value):
        return "lit_" + value
    if isinstance(value, bool) or value is None:
        return f"litc_{value}"
    if isinstance(value, int):
        return f"liti_{'m' if value < 0 else ''}{abs(value)}"
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"lits_{re.sub(r'[^A-Za-z0-9_]', '_', value)[:40]}_{digest}"


def indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def with_wire_values(nodes: Mapping[str, Node], t: TypeRef, ann: str, use: Callable[[str], str]) -> str:
    """A field's annotation `ann` of type `t`, which takes a closed enum's wire values too
    (`StopReason | Literal["end_turn", ...]`: `stop_reason="end_turn"` type-checks, and encodes as the
    member does); decoding stores members. Other types: `ann` as it is."""
    node = nodes.get(t.name) if t.kind == "named" else None
    if isinstance(node, Enum) and not node.open and node.members:
        return f"{ann} | {use('Literal')}[{', '.join(repr(m.value) for m in node.members)}]"
    return ann


def annotation(nodes: Mapping[str, Node], t: TypeRef, use: Callable[[str], str] | None = None,
               resolve_aliases: bool = False, qualify: Callable[[str], str] | None = None) -> str:
    """The Python annotation of a type expression: the one function for it (the models and
    `acpgen diff` both print types with it). `nodes` tells open enums (`X | str`) and, with
    `resolve_aliases`, what each alias stands for; `use` records each name printed; `qualify`
    prints the package's own types as another module sees them (`models.X`)."""
    def builtin(name: str) -> str:
        return use(name) if use is not None else name

    if t.kind in ("any", "object"):
        json = use("JsonValue") if use is not None else "JsonValue"
        return json if t.kind == "any" else f"{builtin('dict')}[{builtin('str')}, {json}]"
    if t.kind in SCALAR_ANN:
        return builtin(SCALAR_ANN[t.kind]) if t.kind != "null" else "None"
    if t.kind == "literal":
        return f"{use('Literal') if use is not None else 'Literal'}[{t.const!r}]"
    if t.kind == "named":
        node = nodes.get(t.name)
        if resolve_aliases and isinstance(node, Alias):
            return annotation(nodes, node.target, use, resolve_aliases, qualify)
        name = qualify(t.name) if qualify is not None else t.name
        if isinstance(node, Enum) and node.open:
            return f"{name} | {builtin(node.base)}"
        return name
    if t.item is None:
        return t.kind
    inner = annotation(nodes, t.item, use, resolve_aliases, qualify)
    if t.kind == "list":
        return f"{builtin('list')}[{inner}]"
    if t.kind == "map":
        return f"{builtin('dict')}[{builtin('str')}, {inner}]"
    return f"{inner} | None"
