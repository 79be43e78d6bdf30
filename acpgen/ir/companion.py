"""The unstable companion against the stable file: it may add (fields, variants, enum values,
methods), but where it redefines a stable type so that it rejects what the stable one accepts,
valid stable input would be refused by the merged package. Those narrowings are found here."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from acpgen.ir.model import Alias, Enum, Node, Struct, TypeRef, Union_


def accepts_all_of(new: TypeRef, old: TypeRef) -> bool:
    """Whether a value of type `old` is also one of `new` (by shape; limits are not compared)."""
    if new.kind == "any":
        return True
    if new.kind == "nullable" and old.kind == "nullable":
        return new.item is not None and old.item is not None and accepts_all_of(new.item, old.item)
    if new.kind == "nullable":
        return old.kind == "null" or (new.item is not None and accepts_all_of(new.item, old))
    if old.kind == "literal" and new.kind in ("str", "int", "float", "bool"):
        return type(old.const).__name__ == new.kind or (new.kind == "float" and type(old.const) is int)
    if old.kind == "int" and new.kind == "float":
        return True
    if new.kind != old.kind or new.name != old.name or new.const != old.const:
        return False
    if new.item is None or old.item is None:
        return new.item is old.item
    return accepts_all_of(new.item, old.item)


def narrowings(stable: Mapping[str, Node], unstable: Mapping[str, Node]) -> Iterator[tuple[str, str, str]]:
    """(unstable pointer, stable pointer, what) for each stable type the companion narrows."""
    for name in sorted(stable.keys() & unstable.keys()):
        old, new = stable[name], unstable[name]
        if isinstance(old, Struct) and isinstance(new, Union_):
            yield from struct_to_union_narrowings(old, new, unstable)
            continue
        if type(old) is not type(new):
            yield new.pointer, old.pointer, f"{name} is a different kind of type than in the stable file"
            continue
        if isinstance(old, Struct) and isinstance(new, Struct):
            yield from struct_narrowings(old, new)
        elif isinstance(old, Enum) and isinstance(new, Enum):
            lost = [m.value for m in old.members if m.value not in {n.value for n in new.members}]
            if lost and not new.open:
                yield new.pointer, old.pointer, f"{name} drops the value(s) {', '.join(map(repr, lost))}"
            elif old.open and not new.open:
                yield new.pointer, old.pointer, f"{name} is closed where the stable one accepts any value"
        elif isinstance(old, Union_) and isinstance(new, Union_):
            kept = {v.type for v in new.variants}
            dropped = [v.type.name or v.type.kind for v in old.variants if v.type not in kept]
            if dropped and not new.schema_other:
                yield new.pointer, old.pointer, f"{name} drops the variant(s) {', '.join(dropped)}"
        elif isinstance(old, Alias) and isinstance(new, Alias) and not accepts_all_of(new.target, old.target):
            yield new.pointer, old.pointer, f"{name} has another type than in the stable file"


def struct_narrowings(old: Struct, new: Struct) -> Iterator[tuple[str, str, str]]:
    fields = {f.wire: f for f in new.fields}
    for f in old.fields:
        g = fields.get(f.wire)
        if g is None:
            if not new.keeps_extra:
                yield new.pointer, f.pointer, f"{old.name} drops the property {f.wire!r}"
            continue
        if g.required and not f.required:
            yield g.pointer, f.pointer, f"{old.name}.{f.wire} is required where the stable one is optional"
        if f.nullable and not g.nullable:
            yield g.pointer, f.pointer, f"{old.name}.{f.wire} rejects null where the stable one accepts it"
        elif not accepts_all_of(g.type, f.type):
            yield g.pointer, f.pointer, f"{old.name}.{f.wire} has a type that rejects values the stable one accepts"
    known = {f.wire for f in old.fields}
    for g in new.fields:
        if g.required and g.wire not in known:
            yield g.pointer, new.pointer, f"{old.name} requires the new property {g.wire!r}"


def struct_to_union_narrowings(old: Struct, new: Union_, unstable: Mapping[str, Node]) -> Iterator[tuple[str, str, str]]:
    """A stable struct the companion turns into a tagged union. Stable input never carries the tag
    (the stable struct does not declare it), so the merged package decodes it as the union's default
    variant: the union narrows exactly where that variant rejects what the struct accepts."""
    default = unstable.get(new.default) if new.default else None
    declares_tag = any(f.wire == new.tag for f in old.fields)
    if not isinstance(default, Struct) or declares_tag:
        yield new.pointer, old.pointer, (
            f"{old.name} is a union whose variants do not take the stable shape"
            if not declares_tag else f"{old.name} is a union on {new.tag!r}, a property the stable struct declares")
        return
    for pointer, stable_pointer, what in struct_narrowings(old, default):
        yield pointer, stable_pointer, f"{what} (in {default.name}, the variant used when {new.tag!r} is absent)"
