"""The IR classes are `@dataclass(frozen=True)` with equality, hashing and repr from `model.value`
(one attrgetter instead of three methods compiled at import): they must behave as the methods
`@dataclass(frozen=True)` makes. Checked against a reference dataclass of the same fields, over
every IR object of the v1 and v2 packages."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from acpgen.config import schema_target
from acpgen.ir import model
from acpgen.pipeline import load_ir, run_deep

ROOT = Path(__file__).resolve().parents[2]
CLASSES = [c for c in vars(model).values()
           if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == model.__name__]


def reference(cls: type) -> type:
    """The class `@dataclass(frozen=True)` makes from the same fields (its own eq, hash, repr)."""
    ref = dataclasses.make_dataclass(cls.__name__, [(f.name, Any) for f in dataclasses.fields(cls)], frozen=True)
    ref.__qualname__ = cls.__qualname__
    return ref


def as_reference(obj: Any) -> Any:
    return reference(type(obj))(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})


def ir_objects() -> list[Any]:
    seen: dict[int, Any] = {}

    def walk(value: Any) -> None:
        if id(value) in seen:
            return
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            seen[id(value)] = value
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name))
        elif isinstance(value, (tuple, list)):
            for item in value:
                walk(item)

    for version in ("v1", "v2"):
        target = schema_target(ROOT / "schema" / version / "schema.json", package=f"acp_{version}")
        package, _ = run_deep(lambda t=target: load_ir(t))  # type: ignore[misc]
        walk(package)
    return list(seen.values())


OBJECTS = ir_objects()


def test_every_ir_class_is_a_frozen_dataclass_with_value_methods() -> None:
    assert len(CLASSES) == 21
    for cls in CLASSES:
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert cls.__eq__ is not object.__eq__ and cls.__hash__ is not object.__hash__
    assert {type(o) for o in OBJECTS} >= {model.Struct, model.Enum, model.Union_, model.Alias, model.Method,
                                          model.TypeRef, model.Field, model.Package}


@pytest.mark.parametrize("index", range(0, len(OBJECTS), max(1, len(OBJECTS) // 400)))
def test_eq_hash_repr_as_dataclass_makes_them(index: int) -> None:
    obj = OBJECTS[index]
    ref = as_reference(obj)
    assert repr(obj) == repr(ref)
    twin = dataclasses.replace(obj)
    assert twin == obj
    assert (twin != obj) is False
    try:
        hash(ref)
    except TypeError:  # a field holds a dict: the dataclass's hash fails the same way
        with pytest.raises(TypeError):
            hash(obj)
    else:
        assert hash(twin) == hash(obj) == hash(ref)  # both hash the tuple of the fields
    assert obj != ref  # another class: NotImplemented both ways, then identity
    for f in dataclasses.fields(obj):
        changed = dataclasses.replace(obj, **{f.name: object()})
        assert changed != obj and (changed == obj) == (as_reference(changed) == ref)
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.name = "x"
