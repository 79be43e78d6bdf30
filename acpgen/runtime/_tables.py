"""What the generated tables share: `MethodInfo` and the per-side method tables (`methods.py`),
the lookup behind `decode(def_name, data)` (`_registry.py`), and the lazy import of the runtime
(`__init__.py`). Standard library only and cheap to import: the package imports it eagerly.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["MethodInfo", "decode_def", "lazy_attribute", "method_table"]


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """One wire method as the schema's routing definitions and `x-method`/`x-side` describe it."""

    method: str
    """The wire method name."""
    side: str
    """Who handles (receives) it: `agent`, `client`, `protocol` (both), or another `x-side`."""
    params: type | object
    """The params type."""
    params_def: str
    """The params type's `$defs` name."""
    result: type | object | None
    """The result type; None for a notification."""
    result_def: str | None
    handler: str
    """The name of the interface method that handles it (and of the proxy method that calls it)."""
    notification: bool
    """True for a notification (no response), False for a request."""
    unstable: bool
    """True when only the unstable schema defines it."""
    decode_params: Callable[[object], object]
    """Turns the wire `params` into `params` (raises ValidationError)."""
    decode_result: Callable[[object], object] | None
    """Turns the wire `result` into `result`; None for a notification."""
    empty_result: bool
    """True when the result is an object with no required field: `null` decodes as `{}`, and a
    handler that returns None is answered `{}`."""


def method_table(methods: Iterable[MethodInfo], sides: Iterable[str]) -> Mapping[str, MethodInfo]:
    """Wire method -> MethodInfo for the methods handled on `sides` (read-only)."""
    handled = frozenset(sides)
    return MappingProxyType({m.method: m for m in methods if m.side in handled})


def decode_def(
    decoders: Mapping[str, Callable[[object], object]], def_name: str, data: object
) -> object:
    """Decode JSON data as the `$defs` type named `def_name` (KeyError naming it when unknown)."""
    try:
        decoder = decoders[def_name]
    except KeyError:
        raise KeyError(f"no definition named {def_name!r} in this schema") from None
    return decoder(data)


def lazy_attribute(
    namespace: MutableMapping[str, object], table: Mapping[str, str], name: str
) -> object:
    """A package's module `__getattr__`: import `name` from the submodule `table` names for it on
    first use and keep it in the package's `namespace` (its globals)."""
    module = table.get(name)
    package = str(namespace["__name__"])
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", package), name)
    namespace[name] = value
    return value
