"""Shared by the generated models: the Model base class, UNSET, ValidationError, JSON checks."""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

_D = TypeVar("_D")

if TYPE_CHECKING:
    from typing_extensions import Self, dataclass_transform
else:

    def dataclass_transform(**_: object) -> Callable[[_D], _D]:
        """Read by type checkers only (typing has it from Python 3.11 on)."""
        return lambda decorator: decorator


JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""Any JSON value, as `json.loads` returns it."""


class Unset(enum.Enum):
    """The type of UNSET: an optional field that is absent on the wire (distinct from None)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = Unset.UNSET


class ValidationError(ValueError):
    """A message did not match the schema. `path` says where, as `prompt[1].resource.uri`."""

    def __init__(self, message: str, *path: str | int) -> None:
        super().__init__(message)
        self.message = message
        self._segments: list[str | int] = list(reversed(path))

    def at(self, segment: str | int) -> ValidationError:
        """Prefix the path with the field name or index the value was found under."""
        self._segments.append(segment)
        return self

    @property
    def path(self) -> str:
        out = ""
        for segment in reversed(self._segments):
            if isinstance(segment, int):
                out += f"[{segment}]"
            else:
                out += f".{segment}" if out else segment
        return out

    def __str__(self) -> str:
        path = self.path
        return f"{path}: {self.message}" if path else self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_error, (self.message, tuple(reversed(self._segments))))


def _rebuild_error(message: str, path: tuple[str | int, ...]) -> ValidationError:
    return ValidationError(message, *path)


_JSON_TYPES: Final = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def expected(what: str, value: object, *path: str | int) -> ValidationError:
    """The error for a value of the wrong JSON type or out of range."""
    found = _JSON_TYPES.get(type(value), type(value).__name__)
    if found in ("an integer", "a number") and not isinstance(value, bool):
        found += f" ({value!r})" if len(repr(value)) <= 40 else " (out of range)"
    return ValidationError(f"expected {what}, got {found}", *path)


def missing(key: str) -> ValidationError:
    return ValidationError("required key is missing", key)


SkipHook: TypeAlias = Callable[[str, int, ValidationError], None]
"""Called with (type name, item index, error) for each array item dropped while decoding."""


def log_skipped(owner: str, index: int, error: ValidationError) -> None:
    """The default hook: a warning on the package's logger (`logging` is imported when an item is
    first dropped, not by every program that imports the models)."""
    import logging

    logging.getLogger(__name__.rpartition(".")[0]).warning(
        "dropped invalid item %d of %s: %s", index, owner, error
    )


_skip_hooks: list[SkipHook] = [log_skipped]


def set_skip_hook(hook: SkipHook) -> SkipHook:
    """Replace the hook told about skipped array items; returns the previous one."""
    previous = _skip_hooks[0]
    _skip_hooks[0] = hook
    return previous


def report_skipped(owner: str, index: int, error: ValidationError) -> None:
    _skip_hooks[0](owner, index, error)


_T = TypeVar("_T")


class _Factory:
    """What `field(default_factory=...)` leaves in a class body."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], object]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is made fresh for each object (`dataclasses.field`'s
    `default_factory`): `auth_methods: list[AuthMethod] = field(default_factory=list)`."""
    return _Factory(default_factory)  # type: ignore[return-value]


class _OnFirstUse:
    """`__dataclass_fields__` / `__dataclass_params__` of a class ModelType made, until the first
    look makes them (dataclasses then store the real ones in the class, which shadow this).

    A descriptor, not `__getattr__`: a class with `__getattr__` loses CPython's fast attribute
    access on every object, and a metaclass with one on every class."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type) -> object:
        made = False
        for c in reversed(owner.__mro__):
            if "__acp_defaults__" in c.__dict__ and "__dataclass_fields__" not in c.__dict__:
                _make_dataclass(c)
                made = True
        if not made and not any("__acp_defaults__" in c.__dict__ for c in owner.__mro__):
            raise AttributeError(self.name)  # Model, Tagged: no dataclass
        return getattr(owner, self.name)


@dataclass_transform(kw_only_default=True, field_specifiers=(field,))
class ModelType(type):
    """The metaclass of the generated object types: each is a dataclass with keyword-only fields
    in `__slots__`.

    A class body declares its fields as a dataclass does (`name: str`, `meta: ... = UNSET`,
    `items: list[X] = field(default_factory=list)`). Creating the class moves the defaults aside
    and makes the fields its `__slots__` (one class, where `@dataclass(slots=True)` builds two);
    the dataclass bookkeeping (`dataclasses.fields`, `asdict`, `replace`, `is_dataclass` read it)
    is made the first time something asks for it, so importing the models does not pay for the
    `dataclasses` module nor for about 300 classes' fields."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, object], **kwargs: object
    ) -> ModelType:
        if "__slots__" not in namespace:
            annotations = typing.cast(dict[str, object], namespace.get("__annotations__", {}))
            # A `ClassVar` (a variant's `tag`) is no field: it keeps its value and takes no slot.
            fields = [k for k, v in annotations.items() if not _is_class_var(v)]
            namespace["__acp_defaults__"] = {k: namespace.pop(k) for k in fields if k in namespace}
            namespace["__slots__"] = tuple(fields)
        return super().__new__(mcls, name, bases, namespace, **kwargs)


def _is_class_var(annotation: object) -> bool:
    """Whether a class body's annotation is a `ClassVar` (a string under `from __future__ import
    annotations`, as the generated modules write it, possibly through a `_ClassVar` alias)."""
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar[", "_ClassVar[", "typing.ClassVar["))
    return annotation is typing.ClassVar or typing.get_origin(annotation) is typing.ClassVar


def _make_dataclass(cls: type) -> None:
    """What `@dataclass(kw_only=True, slots=True)` records, for a class ModelType made."""
    import dataclasses

    dataclasses.dataclass(init=False, repr=False, eq=False, match_args=False, kw_only=True)(cls)
    # Slots hide the defaults from dataclasses (a slot is no default): put the schema's back.
    fields: dict[str, dataclasses.Field[Any]] = cls.__dict__["__dataclass_fields__"]
    for name, value in cls.__dict__["__acp_defaults__"].items():
        if isinstance(value, _Factory):
            fields[name].default_factory = value.factory
        else:
            fields[name].default = value


_PLANS: dict[type, tuple[tuple[str, object, object], ...]] = {}


def _plan(cls: type) -> tuple[tuple[str, object, object], ...]:
    """(name, default, default factory) of each field, computed once per class."""
    plan = _PLANS.get(cls)
    if plan is None:
        import dataclasses

        plan = _PLANS[cls] = tuple(
            (f.name, _missing_to(f.default), _missing_to(f.default_factory))
            for f in dataclasses.fields(cls)
        )
    return plan


class _Missing:
    """No default (dataclasses.MISSING, without importing dataclasses up front)."""


_MISSING: Final = _Missing()


def _missing_to(value: object) -> object:
    import dataclasses

    return _MISSING if value is dataclasses.MISSING else value


def _compile_init(cls: type) -> Callable[..., None]:
    """`def __init__(self, *, a, b=<default>, c=<missing>)` for the fields of `cls`, set on it."""
    names: dict[str, object] = {"__acp_missing": _MISSING}
    params, body = [], []
    for name, default, factory in _plan(cls):
        if default is not _MISSING:
            names[f"__acp_default_{name}"] = default
            params.append(f"{name}=__acp_default_{name}")
        elif factory is not _MISSING:
            names[f"__acp_factory_{name}"] = factory
            params.append(f"{name}=__acp_missing")
            body.append(f"if {name} is __acp_missing: {name} = __acp_factory_{name}()")
        else:
            params.append(name)
        body.append(f"__acp_self.{name} = {name}")
    signature = ", ".join(["__acp_self", *(["*", *params] if params else [])])
    source = f"def __init__({signature}) -> None:\n    " + "\n    ".join(body or ["pass"])
    exec(source, names)
    init: Callable[..., None] = names["__init__"]  # type: ignore[assignment]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]
    return init


class Model(metaclass=ModelType):
    """The base of every generated object type (each a dataclass, see `ModelType`).

    Keyword-only construction with the schema defaults, value equality over the fields
    (unhashable, as a dataclass with `eq=True`) and a repr; each class brings its own `from_dict`
    and `to_dict`."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]
    if not TYPE_CHECKING:  # type checkers see dataclasses through dataclass_transform
        __dataclass_fields__ = _OnFirstUse("__dataclass_fields__")
        __dataclass_params__ = _OnFirstUse("__dataclass_params__")
    _wire_head: typing.ClassVar[dict[str, object]] = {}
    """The tag of a tag-only variant as a dict (`{key: value}`), empty elsewhere: a class that keeps
    unknown keys leaves it out of `unknown_fields`."""

    def __init__(self, **values: object) -> None:
        # The first object of a class compiles the class's own keyword-only __init__ (what
        # @dataclass would write at import, where it costs about 1 ms a class), then uses it.
        init = _compile_init(type(self))
        init(self, **values)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name, _, _ in _plan(type(self)))

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name, _, _ in _plan(type(self)))
        return f"{type(self).__qualname__}({values})"

    @classmethod
    def from_dict(cls, data: object) -> Self:
        """Decode JSON data (as `json.loads` returns it); raises ValidationError naming where."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, object]:
        """This value as JSON-compatible data (`json.dumps` writes it): the fast path, which
        checks only what it must read (a union member's class, a closed enum's value) and fails
        on a value that does not fit with whatever Python raises. `encode(value)` is the checked
        entry: it reports such a value as a ValidationError naming where it is."""
        raise NotImplementedError


class Tagged(Model):
    """A union variant that is its `$defs` type plus the tag (`class HttpMcpServer(Tagged,
    McpServerHttp)`): decoding checks the tag, encoding writes it.

    Each subclass gets its own `from_dict` and `_decode_untagged` (closures over the tag and the
    `$defs` class's decoder, made when the subclass is created: a `super()` call per value costs
    more); the union's decoder, having dispatched on the tag, calls `_decode_untagged`. Each
    subclass also has its own `to_dict` in the models: its `$defs` class's encoder with the tag first
    in its dict display (copying a dict of the tag and storing the fields into it costs more)."""

    __slots__ = ()
    _tag_key: typing.ClassVar[str]
    """The wire name of the tag (its value is the class's `tag`)."""
    tag: typing.ClassVar[str]
    """The tag's value: every variant class of a tagged union has `tag` (see the models)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        key, value = cls._tag_key, cls.tag
        payload = next(c for c in cls.__mro__ if not issubclass(c, Tagged))
        decode = payload.__dict__["from_dict"].__func__

        def from_dict(cls: type[Tagged], data: object) -> Tagged:
            if not isinstance(data, dict):
                raise expected("an object", data)
            if data.get(key) != value:
                raise ValidationError(f"expected {value!r}", key)
            result: Tagged = decode(cls, data)
            return result

        cls.from_dict = classmethod(from_dict)  # type: ignore[method-assign,assignment]
        cls._decode_untagged = classmethod(decode)  # type: ignore[method-assign,assignment]
        cls._wire_head = {key: value}

    @classmethod
    def from_dict(cls, data: object) -> Self:  # replaced in each subclass (see above)
        raise NotImplementedError

    @classmethod
    def _decode_untagged(cls, data: object) -> Self:  # replaced in each subclass (see above)
        raise NotImplementedError


_E = TypeVar("_E", bound=enum.Enum)
_B = TypeVar("_B", str, int)


def integral(data: object) -> bool:
    """A number with a zero fractional part (`1.0`): JSON Schema's `integer` accepts it."""
    return type(data) is float and data.is_integer()


def enum_decoder(cls: type[_E], base: type[_B]) -> Callable[[object], _E]:
    """The decoder of a closed enum: one of its values, as its member."""
    members: dict[object, _E] = {member.value: member for member in cls}
    what = "a string" if base is str else "an integer"
    accepts_integral = what == "an integer"  # 1.0 is the integer 1 in JSON Schema

    def decode(data: object) -> _E:
        if type(data) is not base:
            if not (accepts_integral and integral(data)):
                raise expected(what, data)
            data = int(data)  # type: ignore[call-overload]
        member = members.get(data)
        if member is None:
            raise ValidationError(f"unknown {cls.__name__} value {data!r}")
        return member

    return decode


def open_enum_decoder(cls: type[_E], base: type[_B]) -> Callable[[object], _E | _B]:
    """The decoder of an open enum: a known value as its member, any other as a plain value."""
    members: dict[object, _E] = {member.value: member for member in cls}
    what = "a string" if base is str else "an integer"
    accepts_integral = what == "an integer"  # 1.0 is the integer 1 in JSON Schema

    def decode(data: object) -> _E | _B:
        if type(data) is not base:
            if not (accepts_integral and integral(data)):
                raise expected(what, data)
            data = int(data)  # type: ignore[call-overload]
        member = members.get(data)
        return data if member is None else member  # type: ignore[return-value]  # `data` is a `base` here

    return decode


def widest_variant(
    data: object,
    variants: tuple[tuple[str, Callable[[object], Model], frozenset[str] | None], ...],
    union: str,
) -> Model:
    """The variant of an untagged union that accepts `data` and keeps the most of its keys (each
    variant comes with the wire keys its class keeps, None for all): the first that keeps them
    all, else the first of those keeping the most, so a value several overlapping variants accept
    is not cut down to the first one's fields."""
    best: Model | None = None
    best_kept = -1
    errors = []
    for label, decode, keys in variants:
        try:
            value = decode(data)
        except ValidationError as e:
            errors.append(f"{label}: {e}")
            continue
        if keys is None or not isinstance(data, dict) or data.keys() <= keys:
            return value
        kept = len(keys & data.keys())
        if kept > best_kept:
            best, best_kept = value, kept
    if best is not None:
        return best
    raise ValidationError(f"matches no variant of {union} (" + "; ".join(errors) + ")")


def tagged_decoder(
    tag: str,
    variants: dict[str, Callable[[object], _T]],
    *,
    default: Callable[[object], _T] | None = None,
    other: Callable[[object], _T] | None = None,
    null_selects_default: bool = False,
    any_malformed_selects_default: bool = False,
) -> Callable[[object], _T]:
    """The decoder of a tagged union: dispatch on the tag's value.

    `default` decodes an object without the tag (and one whose unknown tag it accepts); `other`
    keeps an unknown tag raw (an open union). A known tag with an invalid payload is an error."""

    def decode(data: object) -> _T:
        if not isinstance(data, dict):
            raise expected("an object", data)
        value = data.get(tag, UNSET)
        if type(value) is str:
            variant = variants.get(value)
            if variant is not None:
                return variant(data)
            if other is not None:
                return other(data)
            if default is not None:
                try:
                    return default(data)
                except ValidationError:
                    pass
            raise ValidationError(f"unknown {tag} {value!r}", tag)
        if default is not None and (
            any_malformed_selects_default
            or value is UNSET
            or (null_selects_default and value is None)
        ):
            return default(data)
        if value is UNSET:
            raise missing(tag)
        raise expected("a string", value, tag)

    return decode


def variant_encoders(*classes: type[Model]) -> dict[type, Callable[[Any], dict[str, object]]]:
    """The encoders of a union's variant classes, looked up by a member's exact class: any other
    class (one whose encoding would lack the tag the peer dispatches on) fails the lookup, which
    `encode` reports as a ValidationError naming where."""
    return {c: c.to_dict for c in classes}


def not_bool(value: _T) -> _T:
    """An integer enum value: `True` equals 1 but is no integer on the wire."""
    if type(value) is bool:
        raise expected("an integer", value)
    return value


def replace(value: _T, /, **changes: object) -> _T:
    """`dataclasses.replace`: a copy of a generated object with some fields changed."""
    import dataclasses

    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise TypeError(f"replace() needs a generated object, not {type(value).__name__}")
    names = {f.name for f in dataclasses.fields(value)}
    unknown = sorted(set(changes) - names)
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field named {', '.join(unknown)}")
    copy: _T = dataclasses.replace(value, **changes)
    return copy


def encode_value(value: object) -> object:
    """Any model value (dataclass, enum, union, list, map or scalar) as JSON-compatible data.

    Raises ValidationError (naming where) for a value that does not fit, and nothing else."""
    if isinstance(value, Model):
        try:
            return value.to_dict()
        except Exception as exc:  # the fast path checks little: find what did not fit, and where
            raise encode_error(value, exc) from None
    if isinstance(value, enum.Enum):
        if value is UNSET:
            raise ValidationError("UNSET marks an absent field; it has no wire form")
        member_value: object = value.value
        return member_value
    if isinstance(value, list):
        return [_at(index, item) for index, item in enumerate(value)]
    if isinstance(value, dict):
        return {key: _at(key, item) for key, item in value.items()}
    return value


def _at(segment: str | int, value: object) -> object:
    try:
        return encode_value(value)
    except ValidationError as e:
        raise e.at(segment) from None


# -- the slow path of to_dict: where a value does not fit its field ---------------------------

_HINTS: dict[type, dict[str, object]] = {}


def encode_error(value: Model, exc: Exception) -> ValidationError:
    """The error for a value whose fast encode failed: its first field (depth first) whose value
    the annotation does not accept, with the path to it."""
    try:
        found = _misfit(value, type(value), ())
    except RecursionError:
        found = None
    if found is not None:
        return found
    if isinstance(exc, ValidationError):
        return exc
    return ValidationError(f"cannot encode {type(value).__name__}: {type(exc).__name__}: {exc}")


def _hints(cls: type) -> dict[str, object]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _name(value: object) -> str:
    return (
        type(value).__name__
        if isinstance(value, Model)
        else _JSON_TYPES.get(type(value), type(value).__name__)
    )


def _misfit(value: object, hint: object, path: tuple[str | int, ...]) -> ValidationError | None:
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = typing.get_args(hint)
        for option in options:
            if _shallow_fits(value, option):
                if (
                    isinstance(value, Model)
                    and type(value) is not option
                    and all(isinstance(o, type) and issubclass(o, Model) for o in options)
                ):
                    return ValidationError(
                        f"{type(value).__name__} subclasses the variant {getattr(option, '__name__', option)}: "
                        "a union member must be of a variant class itself",
                        *path,
                    )
                return _misfit(value, option, path)
        # a closed enum's field also takes its wire values (`StopReason | Literal["end_turn", ...]`):
        # the error names the enum alone, as it would without them
        named = [o for o in options if not _wire_values_of(o, options)]
        if len(named) == 1:
            return _misfit(value, named[0], path)
        choices = ", ".join(getattr(o, "__name__", str(o)) for o in named)
        hint_text = ""
        for option in options:
            if (
                isinstance(option, type)
                and isinstance(value, Model)
                and issubclass(option, type(value))
            ):
                hint_text = f"; construct {option.__name__}, the variant that adds the tag"
        return ValidationError(f"expected one of {choices}, got {_name(value)}{hint_text}", *path)
    if origin is list:
        if type(value) is not list:
            return ValidationError(f"expected a list, got {_name(value)}", *path)
        (item,) = typing.get_args(hint)
        for index, member in enumerate(value):
            found = _misfit(member, item, (*path, index))
            if found is not None:
                return found
        return None
    if origin is dict:
        if not isinstance(value, dict):
            return ValidationError(f"expected a dict, got {_name(value)}", *path)
        _, item = typing.get_args(hint)
        for key, member in value.items():
            if type(key) is not str:
                return ValidationError(f"expected string keys, got {_name(key)}", *path)
            found = _misfit(member, item, (*path, key))
            if found is not None:
                return found
        return None
    if origin is typing.Literal:
        if any(type(value) is type(c) and value == c for c in typing.get_args(hint)):
            return None
        return ValidationError(
            f"expected {' or '.join(map(repr, typing.get_args(hint)))}, got {value!r}", *path
        )
    if isinstance(hint, typing.ForwardRef) or hint is typing.Any:
        return _not_json(value, path)
    if isinstance(hint, type):
        if issubclass(hint, Model):
            import dataclasses

            if not isinstance(value, hint):
                return ValidationError(f"expected {hint.__name__}, got {_name(value)}", *path)
            hints = _hints(type(value))
            for f in dataclasses.fields(value):
                found = _misfit(getattr(value, f.name), hints[f.name], (*path, f.name))
                if found is not None:
                    return found
            return None
        if issubclass(hint, enum.Enum):
            if isinstance(value, hint):
                return None
            base = str if issubclass(hint, str) else int
            if type(value) is base and value in hint._value2member_map_:
                return None
            allowed = ", ".join(repr(m.value) for m in hint)
            return ValidationError(f"expected a {hint.__name__} ({allowed}), got {value!r}", *path)
        if hint is float:
            ok = type(value) is float or type(value) is int
        elif hint is type(None):
            ok = value is None
        else:
            ok = type(value) is hint
        return (
            None
            if ok
            else ValidationError(
                f"expected {_JSON_TYPES.get(hint, hint.__name__)}, got {_name(value)}", *path
            )
        )
    return None


def _wire_values_of(option: object, options: tuple[object, ...]) -> bool:
    """Whether `option` is a `Literal` of wire values of an enum among `options`."""
    if typing.get_origin(option) is not typing.Literal:
        return False
    values = set(typing.get_args(option))
    return any(
        isinstance(o, type) and issubclass(o, enum.Enum) and values <= set(o._value2member_map_)
        for o in options
    )


def _shallow_fits(value: object, option: object) -> bool:
    """Whether `value` is of the kind `option` names (its parts are checked after)."""
    origin = typing.get_origin(option) or option
    if origin is typing.Literal:
        return any(type(value) is type(c) and value == c for c in typing.get_args(option))
    if isinstance(option, typing.ForwardRef) or option is typing.Any:
        return _not_json(value, ()) is None
    if not isinstance(origin, type):
        return False
    if issubclass(origin, enum.Enum) and not isinstance(value, origin):
        base = str if issubclass(origin, str) else int
        return type(value) is base and value in origin._value2member_map_
    if origin is float:
        return type(value) is float or type(value) is int
    if origin in (int, str, bool):
        return type(value) is origin
    return isinstance(value, origin)


def _not_json(value: object, path: tuple[str | int, ...]) -> ValidationError | None:
    if value is None or type(value) in (str, int, float, bool):
        return None
    if type(value) is list:
        for index, item in enumerate(value):
            found = _not_json(item, (*path, index))
            if found is not None:
                return found
        return None
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str:
                return ValidationError(f"expected string keys, got {_name(key)}", *path)
            found = _not_json(item, (*path, key))
            if found is not None:
                return found
        return None
    return ValidationError(f"expected a JSON value, got {_name(value)}", *path)


def decode_any(data: object) -> JsonValue:
    return data  # type: ignore[return-value]


def decode_str(data: object) -> str:
    if type(data) is not str:
        raise expected("a string", data)
    return data


def decode_int(data: object) -> int:
    if type(data) is not int:
        if type(data) is not float or not data.is_integer():
            raise expected("an integer", data)
        return int(data)
    return data


def decode_float(data: object) -> float:
    if type(data) is not float and type(data) is not int:
        raise expected("a number", data)
    return data


def decode_bool(data: object) -> bool:
    if type(data) is not bool:
        raise expected("a boolean", data)
    return data


def decode_null(data: object) -> None:
    if data is not None:
        raise expected("null", data)


def null_as_empty(decode: Callable[[object], _T]) -> Callable[[object], _T]:
    """The decoder of a result with no required field, taking `null` as `{}`: peers answer such
    requests with either (the spec's examples showed `null` before they showed `{}`)."""

    def decode_result(data: object) -> _T:
        return decode({} if data is None else data)

    return decode_result


def decode_object(data: object) -> dict[str, JsonValue]:
    if not isinstance(data, dict):
        raise expected("an object", data)
    return data
