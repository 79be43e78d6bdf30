"""JSON Schema (draft 2020-12) validation for the definitions a typed decoder cannot judge alone.

The generated models check what their types say (a string is a string, a required key is present).
Where a definition's schema says more than its type can (`not`, `oneOf` exclusivity,
`unevaluatedProperties`, `contains`, `multipleOf`, `$dynamicRef`, ...), its decoder first runs
`SchemaChecker.check` on the raw value against the schema itself, kept in `_schemas.py`, so no
keyword is dropped. `format` is an annotation, as draft 2020-12 says, and is not asserted. A value
the schema marks `x-deserialize-default-on-error` (or `x-deserialize-skip-invalid-items`) is
replaced or filtered by the typed decoder instead, so it is not judged here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Final, TypeGuard, TypeVar
from urllib.parse import unquote, urldefrag, urljoin

from ._codec import ValidationError

_T = TypeVar("_T")

KEYWORDS: Final = frozenset(
    {
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$ref",
        "$dynamicRef",
        "$defs",
        "definitions",
        "$comment",
        "$vocabulary",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "type",
        "enum",
        "const",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "prefixItems",
        "items",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
        "minProperties",
        "maxProperties",
        "required",
        "dependentRequired",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "dependentSchemas",
        "unevaluatedProperties",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
    }
)
"""The draft 2020-12 keywords this module knows (`format` and the content keywords annotate only)."""

ROOT: Final = "urn:acpgen:schema"
"""The base URI of the document when its root has no `$id`."""

_SCHEMA_KEYS: Final = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "contentSchema",
)
_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems")
_LENIENT: Final = ("x-deserialize-default-on-error", "x-deserialize-skip-invalid-items")
_TYPES: Final = {
    "null": lambda v: v is None,
    "boolean": lambda v: type(v) is bool,
    "string": lambda v: type(v) is str,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
    "number": lambda v: type(v) in (int, float),
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
}


class _Fail:
    __slots__ = ("message", "path")

    def __init__(self, message: str, path: tuple[str | int, ...]) -> None:
        self.message = message
        self.path = path


class _Seen:
    """What a valid schema evaluated: property names and array indices (for `unevaluated*`)."""

    __slots__ = ("items", "props")

    def __init__(self) -> None:
        self.props: set[str] = set()
        self.items: set[int] = set()

    def add(self, other: _Seen) -> None:
        self.props |= other.props
        self.items |= other.items


def json_equal(a: object, b: object) -> bool:
    """JSON equality: numbers by value (1 == 1.0), booleans never equal to numbers."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) in (int, float) and type(b) in (int, float):
        return a == b
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


_BOUNDS: Final = (
    ("minimum", "at least"),
    ("maximum", "at most"),
    ("exclusiveMinimum", "more than"),
    ("exclusiveMaximum", "less than"),
)


def _outside(key: str, value: float, bound: float) -> bool:
    if key == "minimum":
        return value < bound
    if key == "maximum":
        return value > bound
    return value <= bound if key == "exclusiveMinimum" else value >= bound


def _join(base: str, ref: str) -> str:
    """`ref` resolved against `base`, also where `base` is a URN (which urljoin leaves alone)."""
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


def _multiple(value: float, of: float) -> bool:
    if type(value) is int and type(of) is int:
        return value % of == 0
    import decimal  # a fraction's multipleOf only: its import is not paid by every program

    try:
        return decimal.Decimal(repr(value)) % decimal.Decimal(repr(of)) == 0
    except (
        decimal.InvalidOperation
    ):  # the quotient does not fit: not a multiple in any useful sense
        return False


class SchemaChecker:
    """Validates values against the definitions of one schema document (its `$id`s, `$anchor`s and
    `$dynamicAnchor`s resolved within the document; references outside it match nothing)."""

    def __init__(self, document: Mapping[str, object], *, lenient: bool = True) -> None:
        self.document = document
        self._lenient = _LENIENT if lenient else ()
        self._base: dict[int, str] = {}
        self._resources: dict[str, object] = {}
        self._anchors: dict[tuple[str, str], object] = {}
        self._dynamic: dict[tuple[str, str], object] = {}
        self._patterns: dict[str, re.Pattern[str]] = {}
        self._index(document, ROOT)

    def check(self, pointer: str, data: object) -> None:
        """Raise ValidationError (with the path of the first failing value) unless `data` is valid
        against the schema at `pointer` (a JSON pointer into the document)."""
        schema = self._pointer(self.document, pointer)
        result = self._eval(schema, data, (), (self._base.get(id(schema), ROOT),))
        if isinstance(result, _Fail):
            raise ValidationError(result.message, *result.path)

    def problem(self, schema: object, data: object) -> str | None:
        """Why `data` is invalid against `schema` (a schema of the document, or one whose references
        point into it), with the path of the failing value; None when it is valid."""
        result = self._eval(schema, data, (), (self._base.get(id(schema), ROOT),))
        if isinstance(result, _Seen):
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in result.path).lstrip(
            "."
        )
        return f"{result.message} (at {where})" if where else result.message

    def checked(self, pointer: str, decoder: Callable[[object], _T]) -> Callable[[object], _T]:
        """`decoder`, judging each value against the schema at `pointer` first."""

        def decode(data: object) -> _T:
            self.check(pointer, data)
            return decoder(data)

        return decode

    def unresolved(self, pointer: str) -> list[str]:
        """The references below the schema at `pointer` that resolve to nothing in the document
        (a generator asks before it relies on `check` for that schema)."""
        out: list[str] = []
        todo = [self._pointer(self.document, pointer)]
        while todo:
            node = todo.pop()
            if not isinstance(node, dict):
                continue
            base = self._base.get(id(node), ROOT)
            for key in ("$ref", "$dynamicRef"):
                ref = node.get(key)
                if isinstance(ref, str):
                    try:
                        self._resolve(ref, base)
                    except (KeyError, IndexError):
                        out.append(ref)
            for key, value in node.items():
                if key in _SCHEMA_KEYS:
                    todo.append(value)
                elif key in _SCHEMA_MAPS and isinstance(value, dict):
                    todo.extend(value.values())
                elif key in _SCHEMA_LISTS and isinstance(value, list):
                    todo.extend(value)
        return out

    # -- the document ---------------------------------------------------------------------

    def _index(self, node: object, base: str) -> None:
        if not isinstance(node, dict):
            return
        if isinstance(node.get("$id"), str):
            base = urldefrag(_join(base, node["$id"]))[0]
            self._resources.setdefault(base, node)
        elif base == ROOT and node is self.document:
            self._resources[ROOT] = node
        self._base[id(node)] = base
        for key, table in (("$anchor", self._anchors), ("$dynamicAnchor", self._dynamic)):
            if isinstance(node.get(key), str):
                table.setdefault((base, node[key]), node)
                self._anchors.setdefault((base, node[key]), node)
        for key, value in node.items():
            if key in _SCHEMA_KEYS:
                self._index(value, base)
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                for sub in value.values():
                    self._index(sub, base)
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                for sub in value:
                    self._index(sub, base)

    def _pointer(self, node: object, pointer: str) -> object:
        for part in pointer.split("/")[1:] if pointer else ():
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, list) and part.isdigit():
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise KeyError(pointer)
        return node

    def _resolve(self, ref: str, base: str) -> object:
        uri, fragment = urldefrag(_join(base, ref))
        resource = self._resources.get(uri or base)
        if resource is None:
            raise KeyError(ref)
        if not fragment or fragment.startswith("/"):
            target = self._pointer(resource, fragment)
            if isinstance(target, dict) and id(target) not in self._base:
                self._index(target, self._base.get(id(resource), uri))
            return target
        return self._anchors[(uri or base, fragment)]

    def _dynamic_target(self, ref: str, base: str, scope: tuple[str, ...]) -> object:
        target = self._resolve(ref, base)
        fragment = urldefrag(_join(base, ref))[1]
        if not fragment or fragment.startswith("/") or not isinstance(target, dict):
            return target
        if target.get("$dynamicAnchor") != fragment:
            return target
        for resource in scope:  # the outermost resource that names the anchor dynamically wins
            found = self._dynamic.get((resource, fragment))
            if found is not None:
                return found
        return target

    # -- evaluation -----------------------------------------------------------------------

    def _eval(
        self, s: object, v: object, path: tuple[str | int, ...], scope: tuple[str, ...]
    ) -> _Seen | _Fail:
        if s is True or (isinstance(s, dict) and not s):
            return _Seen()
        if s is False:
            return _Fail("the schema allows no value here", path)
        if not isinstance(s, dict) or any(s.get(k) is True for k in self._lenient):
            return _Seen()
        base = self._base.get(id(s), scope[-1])
        if base != scope[-1]:
            scope = (*scope, base)
        seen = _Seen()
        for step in (
            self._refs,
            self._generic,
            self._numeric,
            self._string,
            self._array,
            self._object,
            self._combined,
        ):
            fail = step(s, v, path, scope, seen)
            if fail is not None:
                return fail
        return self._unevaluated(s, v, path, scope, seen) or seen

    def _sub(
        self, s: object, v: object, path: tuple[str | int, ...], scope: tuple[str, ...], seen: _Seen
    ) -> _Fail | None:
        result = self._eval(s, v, path, scope)
        if isinstance(result, _Fail):
            return result
        seen.add(result)
        return None

    def _refs(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        base = scope[-1]
        for key in ("$ref", "$dynamicRef"):
            ref = s.get(key)
            if not isinstance(ref, str):
                continue
            try:
                target = (
                    self._resolve(ref, base)
                    if key == "$ref"
                    else self._dynamic_target(ref, base, scope)
                )
            except (KeyError, IndexError):
                return _Fail(f"the reference {ref!r} resolves to nothing in this schema", path)
            fail = self._sub(target, v, path, scope, seen)
            if fail is not None:
                return fail
        return None

    def _generic(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        declared = s.get("type")
        if declared is not None:
            names = declared if isinstance(declared, list) else [declared]
            if not any(_TYPES[n](v) for n in names if isinstance(n, str) and n in _TYPES):
                return _Fail(f"expected {' or '.join(str(n) for n in names)}, got {_kind(v)}", path)
        if "const" in s and not json_equal(s["const"], v):
            return _Fail(f"expected the value {_short(s['const'])}", path)
        values = s.get("enum")
        if isinstance(values, list) and not any(json_equal(e, v) for e in values):
            return _Fail(f"expected one of {_short(values)}", path)
        return None

    def _numeric(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        if type(v) not in (int, float):
            return None
        assert isinstance(v, (int, float))
        for key, word in _BOUNDS:
            bound = s.get(key)
            if _number(bound) and _outside(key, v, bound):
                return _Fail(f"expected a number {word} {bound}, got {v}", path)
        of = s.get("multipleOf")
        if _number(of) and not _multiple(v, of):
            return _Fail(f"expected a multiple of {of}, got {v}", path)
        return None

    def _string(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        if type(v) is not str:
            return None
        assert isinstance(v, str)
        if fail := _size(s, "minLength", "maxLength", len(v), "characters", path):
            return fail
        pattern = s.get("pattern")
        if isinstance(pattern, str) and not self._regex(pattern).search(v):
            return _Fail(f"expected a string matching {pattern!r}", path)
        return None

    def _array(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        if type(v) is not list:
            return None
        assert isinstance(v, list)
        if fail := _size(s, "minItems", "maxItems", len(v), "items", path):
            return fail
        if s.get("uniqueItems") is True:
            for i, item in enumerate(v):
                if any(json_equal(item, other) for other in v[:i]):
                    return _Fail("expected unique items", (*path, i))
        prefix = s.get("prefixItems")
        start = 0
        if isinstance(prefix, list):
            for i, (sub, item) in enumerate(zip(prefix, v, strict=False)):
                if fail := self._sub(sub, item, (*path, i), scope, _Seen()):
                    return fail
                seen.items.add(i)
            start = len(prefix)
        if "items" in s:
            for i in range(start, len(v)):
                if fail := self._sub(s["items"], v[i], (*path, i), scope, _Seen()):
                    return fail
                seen.items.add(i)
        if "contains" in s:
            matched = [
                i
                for i, item in enumerate(v)
                if not isinstance(self._eval(s["contains"], item, (), scope), _Fail)
            ]
            limits = {"minContains": 1, **s}
            if fail := _size(
                limits,
                "minContains",
                "maxContains",
                len(matched),
                "items matching `contains`",
                path,
            ):
                return fail
            seen.items.update(matched)
        return None

    def _object(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        if type(v) is not dict:
            return None
        assert isinstance(v, dict)
        if fail := _size(s, "minProperties", "maxProperties", len(v), "properties", path):
            return fail
        for key in _strings(s.get("required")):
            if key not in v:
                return _Fail("a required key is missing", (*path, key))
        dependent = s.get("dependentRequired")
        if isinstance(dependent, dict):
            for key, needs in dependent.items():
                if key in v:
                    for other in _strings(needs):
                        if other not in v:
                            return _Fail(f"required when {key!r} is present", (*path, other))
        names = s.get("propertyNames")
        if names is not None:
            for key in v:
                if fail := self._sub(names, key, (*path, key), scope, _Seen()):
                    return _Fail(f"the key is not allowed: {fail.message}", (*path, key))
        evaluated: set[str] = set()
        properties = s.get("properties")
        if isinstance(properties, dict):
            for key, sub in properties.items():
                if key in v and sub is False:
                    return _Fail(
                        "the schema allows no value here: the key must be absent", (*path, key)
                    )
                if key in v:
                    if fail := self._sub(sub, v[key], (*path, key), scope, _Seen()):
                        return fail
                    evaluated.add(key)
        patterns = s.get("patternProperties")
        if isinstance(patterns, dict):
            for pattern, sub in patterns.items():
                regex = self._regex(pattern)
                for key in v:
                    if regex.search(key):
                        if fail := self._sub(sub, v[key], (*path, key), scope, _Seen()):
                            return fail
                        evaluated.add(key)
        if "additionalProperties" in s:
            for key in v:
                if key not in evaluated:
                    if s["additionalProperties"] is False:
                        return _Fail("the schema allows no other keys here", (*path, key))
                    if fail := self._sub(
                        s["additionalProperties"], v[key], (*path, key), scope, _Seen()
                    ):
                        return fail
            evaluated.update(v)
        seen.props |= evaluated
        schemas = s.get("dependentSchemas")
        if isinstance(schemas, dict):
            for key, sub in schemas.items():
                if key in v and (fail := self._sub(sub, v, path, scope, seen)):
                    return fail
        return None

    def _combined(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        for sub in _list(s.get("allOf")):
            if fail := self._sub(sub, v, path, scope, seen):
                return fail
        alternatives = s.get("anyOf")
        if isinstance(alternatives, list):
            results = [self._eval(sub, v, path, scope) for sub in alternatives]
            valid = [r for r in results if isinstance(r, _Seen)]
            if not valid:
                return _Fail(
                    "matches none of the `anyOf` alternatives (" + _why(results) + ")", path
                )
            for r in valid:
                seen.add(r)
        alternatives = s.get("oneOf")
        if isinstance(alternatives, list):
            results = [self._eval(sub, v, path, scope) for sub in alternatives]
            valid = [r for r in results if isinstance(r, _Seen)]
            if not valid:
                return _Fail(
                    "matches none of the `oneOf` alternatives (" + _why(results) + ")", path
                )
            if len(valid) > 1:
                which = [i for i, r in enumerate(results) if isinstance(r, _Seen)]
                return _Fail(
                    f"matches more than one `oneOf` alternative ({which}), exactly one must match",
                    path,
                )
            seen.add(valid[0])
        if "not" in s and isinstance(self._eval(s["not"], v, path, scope), _Seen):
            return _Fail("matches the schema under `not`", path)
        if "if" in s:
            condition = self._eval(s["if"], v, path, scope)
            if isinstance(condition, _Seen):
                seen.add(condition)
                if "then" in s and (fail := self._sub(s["then"], v, path, scope, seen)):
                    return fail
            elif "else" in s and (fail := self._sub(s["else"], v, path, scope, seen)):
                return fail
        return None

    def _unevaluated(
        self,
        s: dict[str, object],
        v: object,
        path: tuple[str | int, ...],
        scope: tuple[str, ...],
        seen: _Seen,
    ) -> _Fail | None:
        if type(v) is list and "unevaluatedItems" in s:
            assert isinstance(v, list)
            for i, item in enumerate(v):
                if i not in seen.items:
                    if fail := self._sub(s["unevaluatedItems"], item, (*path, i), scope, _Seen()):
                        return fail
                    seen.items.add(i)
        if type(v) is dict and "unevaluatedProperties" in s:
            assert isinstance(v, dict)
            for key in v:
                if key not in seen.props:
                    if s["unevaluatedProperties"] is False:
                        return _Fail("the schema allows no other keys here", (*path, key))
                    if fail := self._sub(
                        s["unevaluatedProperties"], v[key], (*path, key), scope, _Seen()
                    ):
                        return fail
                    seen.props.add(key)
        return None

    def _regex(self, pattern: str) -> re.Pattern[str]:
        compiled = self._patterns.get(pattern)
        if compiled is None:
            compiled = self._patterns[pattern] = re.compile(pattern)
        return compiled


def _size(
    s: Mapping[str, object], least: str, most: str, n: int, unit: str, path: tuple[str | int, ...]
) -> _Fail | None:
    """The `minX` / `maxX` pair of `s` applied to a count `n` of characters, items or properties."""
    low, high = s.get(least), s.get(most)
    if _number(low) and n < low:
        return _Fail(f"expected at least {low} {unit}, got {n}", path)
    if _number(high) and n > high:
        return _Fail(f"expected at most {high} {unit}, got {n}", path)
    return None


def _number(value: object) -> TypeGuard[int | float]:
    """A JSON number (a keyword's bound): an int or a float, never a bool."""
    return type(value) in (int, float)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, str))


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _kind(v: object) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(v), type(v).__name__)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _why(results: list[_Seen | _Fail]) -> str:
    parts = []
    for i, r in enumerate(results):
        if isinstance(r, _Fail):
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in r.path)
            parts.append(f"{i}: {where.lstrip('.') + ': ' if where else ''}{r.message}")
    return "; ".join(parts)
