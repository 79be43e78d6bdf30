"""The intermediate representation: one frozen model of everything acpgen emits.

A closed set of node kinds (Struct, Enum, Union, Alias, Method) and of type expressions
(TypeRef). Names are final here: templates print them, never compute them.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar

_T = TypeVar("_T")


def value(cls: type[_T]) -> type[_T]:
    """Value equality, hashing and repr for a `@dataclass(frozen=True, eq=False, repr=False)`
    class, as `@dataclass(frozen=True)` would make them (equal when of the same class with equal
    fields; hashed by its fields; `Name(field=..., ...)`), from one `attrgetter` of its fields:
    dataclass compiles each of the three methods from source for every class, about 0.4 ms a class
    at acpgen's start (the IR's 21 classes here, the emitter's 6 in render/codegen.py)."""
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
    get = operator.attrgetter(*names)
    key = get if len(names) > 1 else lambda self: (get(self),)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(key(self) == key(other))

    def __hash__(self: Any) -> int:
        return hash(key(self))

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(names, key(self), strict=True))
        return f"{type(self).__qualname__}({shown})"

    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__hash__ = __hash__  # type: ignore[method-assign]
    cls.__repr__ = __repr__  # type: ignore[method-assign]
    return cls

ScalarKind = Literal["str", "int", "float", "bool", "null", "any", "object"]
TypeKind = Literal[
    "str", "int", "float", "bool", "null", "any", "object", "literal", "named", "list", "map", "nullable"
]


@value
@dataclass(frozen=True, eq=False, repr=False)
class Constraints:
    """The value checks a decoder enforces beyond the type (the schema's numeric and size limits)."""

    minimum: int | float | None = None
    maximum: int | float | None = None
    min_items: int | None = None
    min_length: int | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.minimum, self.maximum, self.min_items, self.min_length))


NO_CONSTRAINTS = Constraints()  # shared: most types have none, and a Constraints is immutable


@value
@dataclass(frozen=True, eq=False, repr=False)
class TypeRef:
    """A type expression. `named` points at an IR node by its Python name."""

    kind: TypeKind
    name: str = ""
    item: TypeRef | None = None
    const: str | int | bool | None = None
    constraints: Constraints = NO_CONSTRAINTS

    @staticmethod
    @functools.lru_cache(maxsize=8192)  # immutable: one per name serves every reference to it
    def named(name: str) -> TypeRef:
        return TypeRef("named", name=name)

    @staticmethod
    def list_of(item: TypeRef, constraints: Constraints | None = None) -> TypeRef:
        return TypeRef("list", item=item, constraints=constraints or NO_CONSTRAINTS)

    @staticmethod
    def nullable(item: TypeRef) -> TypeRef:
        return item if item.kind in ("nullable", "any", "null") else TypeRef("nullable", item=item)


NO_DEFAULT = object()


@value
@dataclass(frozen=True, eq=False, repr=False)
class Field:
    """A struct field: its wire and Python names, type, presence rules, schema default and pointer."""

    wire: str
    py: str
    type: TypeRef
    required: bool
    nullable: bool
    description: str
    pointer: str
    default: object = NO_DEFAULT
    default_on_error: bool = False
    default_on_null: bool = False
    skip_invalid_items: bool = False
    flatten: bool = False
    unstable: bool = False
    hook: str = ""  # `module:function` the raw value goes through before it is decoded (config `hooks`)
    encoding: str = ""  # the schema's `contentEncoding` (`base64`), "" when none

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@value
@dataclass(frozen=True, eq=False, repr=False)
class Tag:
    """The property that tells a tagged union's variants apart, and this variant's value of it."""

    wire: str
    value: str


@value
@dataclass(frozen=True, eq=False, repr=False)
class Struct:
    """An object type. Union variants are structs too: with a tag, as the default, or as `other`."""

    name: str
    pointer: str
    description: str
    fields: tuple[Field, ...]
    def_name: str = ""
    tag: Tag | None = None
    union: str = ""
    other_of: tuple[str, tuple[str, ...]] | None = None  # (tag wire name, known tag values)
    unstable: bool = False
    keeps_extra: bool = False  # `additionalProperties: true`: keys beyond the fields are data, kept
    common: str = ""  # an `other` variant: the struct of the union's common properties, checked too
    base: str = ""  # a tag-only variant: the `$defs` struct it subclasses (its fields are that struct's)
    absent: tuple[str, ...] = ()  # keys whose schema is `false`: present on the wire = invalid
    check: str = ""  # a `$defs` pointer whose schema judges the raw value first (see ir/checks.py)


@value
@dataclass(frozen=True, eq=False, repr=False)
class EnumMember:
    """One value of an enum and the Python name it gets."""

    py: str
    value: str | int
    description: str
    unstable: bool = False


@value
@dataclass(frozen=True, eq=False, repr=False)
class Enum:
    """A string or integer enum; an open one keeps values the schema does not list."""

    name: str
    pointer: str
    description: str
    base: Literal["str", "int"]
    members: tuple[EnumMember, ...]
    open: bool
    def_name: str = ""
    unstable: bool = False
    other: TypeRef | None = None  # open: the fallback's type, whose limits (an int format) still apply
    check: str = ""


@value
@dataclass(frozen=True, eq=False, repr=False)
class Variant:
    """One alternative of a union: its type, and its tag value on a tagged union."""

    type: TypeRef
    tag_value: str | None = None
    title: str = ""
    unstable: bool = False
    description: str = ""  # the variant's own prose where no class of its own carries it


@value
@dataclass(frozen=True, eq=False, repr=False)
class Union_:
    """A tagged union (`tag` set: dispatch on the tag's const) or an untagged one (tried in order)."""

    name: str
    pointer: str
    description: str
    variants: tuple[Variant, ...]
    tag: str = ""
    default: str = ""  # struct used when the tag is absent
    other: str = ""  # struct keeping unknown tags raw (open union)
    def_name: str = ""
    unstable: bool = False
    null_tag_default: bool = False  # a `null` tag also selects the default variant
    lenient_tag: bool = False  # default-on-error on the tag: any non-string tag selects the default
    check: str = ""
    # `other` is acpgen's, not the schema's: the schema's union is closed, an unknown tag falls under
    # its default variant, and the generated decoder keeps such an object whole instead
    kept_other: bool = False

    @property
    def schema_other(self) -> str:
        """The variant the schema itself gives unknown tags ("" for a closed union): what `acpgen
        diff` classifies by, so that the schema's compatibility does not depend on acpgen's keeping."""
        return "" if self.kept_other else self.other

    @property
    def tagged(self) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.tag_value is not None)


@value
@dataclass(frozen=True, eq=False, repr=False)
class Alias:
    """A named definition that is another type (a scalar, a list, a map, a reference)."""

    name: str
    pointer: str
    description: str
    target: TypeRef
    def_name: str = ""
    unstable: bool = False
    check: str = ""


Node = Struct | Enum | Union_ | Alias


@value
@dataclass(frozen=True, eq=False, repr=False)
class Method:
    """One wire method as the routing definitions and `x-method`/`x-side` describe it."""

    wire: str
    handler: str
    side: str  # the side that handles it: agent, client, protocol, both, or another x-side value
    params: str  # $defs name of the params type ("" when the method takes raw JSON)
    result: str | None  # $defs name of the result type; None for notifications
    notification: bool
    unstable: bool
    description: str = ""


@value
@dataclass(frozen=True, eq=False, repr=False)
class Rule:
    """One protocol rule the runtime follows, as the schema states it: `key` names the rule
    (`error-code/-32002`, `cancel/session`), `value` is what it says, `evidence` the JSON pointers
    of the schema that state it (or `config:KEY` for a link the target's config gives)."""

    key: str
    value: str | int | bool
    evidence: tuple[str, ...] = ()


@value
@dataclass(frozen=True, eq=False, repr=False)
class ErrorCode:
    """A code of the schema's error-code enum (the type of the error object's `code`)."""

    constant: str  # the enum member's name, e.g. `RESOURCE_NOT_FOUND`
    value: int
    description: str
    pointer: str  # the enum


@value
@dataclass(frozen=True, eq=False, repr=False)
class ErrorShape:
    """A data shape of the error object's `data` that belongs to one code: `struct` is its class."""

    name: str  # the variant's title in snake case: the helper's name, e.g. `session_not_found`
    code: int
    struct: str
    evidence: tuple[str, ...]


@value
@dataclass(frozen=True, eq=False, repr=False)
class Negotiation:
    """The request whose params and result carry the protocol version (ACP: `initialize`)."""

    method: str  # wire name
    handler: str  # its interface method and proxy
    field: str  # the params and result field holding the version (wire name)
    params: str  # class of its params
    result: str  # class of its result
    rejects_lower: int | None  # the code answering a lower version with {requested, supported} shape, if any
    evidence: tuple[str, ...]


@value
@dataclass(frozen=True, eq=False, repr=False)
class CapabilityGate:
    """A method one side handles only if it advertised a capability in the `initialize` exchange:
    the capability field's description says so ("Whether the agent supports `session/load`")."""

    method: str  # wire name of the gated method
    side: str  # the side that handles it and advertises the capability (agent, client)
    path: tuple[str, ...]  # wire names from the initialize params (client) or result (agent) down
    pointer: str  # the capability field whose description names the method


@value
@dataclass(frozen=True, eq=False, repr=False)
class CancelAnswer:
    """A request answered with a result that says it was cancelled: `{field: value}`."""

    method: str
    field: str
    tag: str  # "": the field is an enum and the value is `cancelled`; else `{tag: "cancelled"}`
    pointer: str  # the result field

    @property
    def value(self) -> str | dict[str, str]:
        return {self.tag: "cancelled"} if self.tag else "cancelled"


@value
@dataclass(frozen=True, eq=False, repr=False)
class Protocol:
    """The protocol facts of one schema (acpgen/ir/protocol.py derives them): what the generated
    `_protocol.py` holds, and what `acpgen diff` compares as rules."""

    error_codes: tuple[ErrorCode, ...] = ()
    error_shapes: tuple[ErrorShape, ...] = ()
    negotiation: Negotiation | None = None
    null_request_id: bool = True
    cancel_request: str = ""  # the notification cancelling one request by id (`$/cancel_request`)
    cancel_request_field: str = ""  # its param holding the id (`requestId`)
    session_cancel: str = ""  # the notification cancelling a session's turn (`session/cancel`)
    session_field: str = ""  # what names a session in params and results (`sessionId`; "" without sessions)
    cancelled_results: tuple[CancelAnswer, ...] = ()  # session/cancel answers these with their result
    withdrawn_results: tuple[CancelAnswer, ...] = ()  # any cancellation answers these with their result
    cancelled_by_session: tuple[str, ...] = ()  # requests session/cancel cancels
    sessions: SessionRules = field(default_factory=lambda: SessionRules())  # how requests treat sessions
    capabilities: tuple[CapabilityGate, ...] = ()  # methods gated by a capability of their side
    rules: tuple[Rule, ...] = ()  # everything above, with its evidence, keyed for diff


@value
@dataclass(frozen=True, eq=False, repr=False)
class SessionRules:
    """Which requests create, bring in, list and end sessions, and which messages belong to a
    session's turn: what the remote transport's per-connection session bookkeeping follows."""

    creators: tuple[str, ...] = ()  # requests whose result names a new session (`session/new`, `session/fork`)
    openers: tuple[str, ...] = ()  # creators, and requests that bring a named session in (`session/load`)
    forks: tuple[str, ...] = ()  # creators that name an existing session (`session/fork`): a new one besides it
    close: str = ""  # the request that ends a session (`session/close`)
    listing: str = ""  # the request whose result lists sessions (`session/list`)
    listing_field: str = ""  # the field of its result holding the list (`sessions`)
    turn: tuple[str, ...] = ()  # the session's turn: its input request and the cancel (`session/prompt`, `session/cancel`)


@value
@dataclass(frozen=True, eq=False, repr=False)
class SchemaSource:
    """A schema file the package was built from, with its checksum."""

    file: str
    sha256: str


@value
@dataclass(frozen=True, eq=False, repr=False)
class Package:
    """Everything one generated package holds: its nodes, `$defs` types and methods."""

    name: str
    sources: tuple[SchemaSource, ...]
    title: str
    nodes: tuple[Node, ...]
    defs: tuple[tuple[str, TypeRef], ...]  # every $defs key -> its type, in sorted order
    methods: tuple[Method, ...]
    protocol_version: int | None = None
    options: tuple[tuple[str, object], ...] = ()
    # (class name, package-level name) of each model whose name is one of the package's own
    # exports (naming.PACKAGE_EXPORTS): models.py keeps the class name, the package exports the other.
    export_aliases: tuple[tuple[str, str], ...] = ()
    # The part of the schema document the checked definitions (`check` of a node) are judged
    # against: their `$defs` entries and what those refer to, pointers unchanged ({} when none).
    checked_schema: str = ""  # as JSON text ("" when no definition is checked)
    protocol: Protocol = Protocol()

    def node(self, name: str) -> Node:
        return self._index[name]

    @property
    def _index(self) -> dict[str, Node]:
        cached: dict[str, Node] | None = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {n.name: n for n in self.nodes}
            object.__setattr__(self, "_index_cache", cached)
        return cached
