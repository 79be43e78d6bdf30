"""A fast yes-or-"look closer" check of a schema document against its dialect's meta-schema.

jsonschema validates a 2020-12 document through `$dynamicRef`, `allOf` over seven vocabularies and
a URI join per reference: about 0.3 s for an ACP schema, most of a build. This module compiles the
meta-schema once into plain closures (the seven vocabularies' `properties` merged into one map, the
`$dynamicRef`s pointing back at the root, which is where the dynamic scope resolves them when the
whole document is checked against the meta-schema) and walks the document once.

The answer is one-sided: True means "valid, certainly"; False means "maybe not", and the caller then
runs jsonschema itself, which finds and words the errors (file + JSON pointer, as before). Every
check here is the same test jsonschema applies or a stricter one (a float where an integer is
wanted, a non-string item in `uniqueItems`, a keyword this compiler does not know: all answer
False), so a False costs time, never correctness. Meta-schemas using anything else are not compiled
and the caller always uses jsonschema.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

Check = Callable[[Any], bool]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
# Keywords with no effect on validity (format is an annotation: jsonschema's meta-schema check runs
# without a format checker).
ANNOTATIONS = frozenset({"$schema", "$id", "$vocabulary", "$dynamicAnchor", "$comment", "title",
                         "description", "default", "deprecated", "format", "$defs", "examples"})
# JSON type -> the exact Python types json.loads gives for it (bool is not an integer; jsonschema
# also takes 1.0 as an integer, where this answers "look closer").
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,), "null": (type(None),),
    "integer": (int,), "number": (int, float),
}


class Unsupported(Exception):
    """The meta-schema uses something this compiler does not model."""


def _specifications_dir() -> Path | None:
    """The jsonschema_specifications data folder, found without importing the package (which
    would load every draft's meta-schema into a registry)."""
    spec = importlib.util.find_spec("jsonschema_specifications")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "schemas"


class Compiler:
    def __init__(self, documents: dict[str, Any], root: str) -> None:
        self.documents = documents
        self.root = root
        self.compiled: dict[str, Check] = {}

    def ref(self, uri: str) -> Check:
        """A check for the schema at `uri`, compiled once. A reference met while its own schema is
        being compiled (recursion) goes through a cell; once compiled, the check itself is handed out."""
        if uri not in self.compiled:
            cell: list[Check] = []
            self.compiled[uri] = lambda x: cell[0](x)
            cell.append(self.compile(self.resolve(uri), uri.partition("#")[0]))
            self.compiled[uri] = cell[0]
        return self.compiled[uri]

    def resolve(self, uri: str) -> Any:
        base, _, fragment = uri.partition("#")
        node = self.documents.get(base)
        if node is None or (fragment and not fragment.startswith("/")):
            raise Unsupported(uri)
        for part in fragment.split("/")[1:]:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def join(self, base: str, ref: str) -> str:
        if ref.startswith("#"):
            return base + ref
        if "://" in ref:
            return ref
        return base.rsplit("/", 1)[0] + "/" + ref

    def compile(self, schema: Any, base: str) -> Check:
        if schema is True:
            return lambda x: True
        if not isinstance(schema, dict):
            raise Unsupported(repr(schema))
        types, props, checks = self.parts(schema, base)
        return self.assemble(types, props, checks)

    def parts(self, schema: dict[str, Any], base: str) -> tuple[set[str] | None, dict[str, list[Check]], list[Check]]:
        """(allowed types or None, property checks, other checks), with allOf/$ref merged in."""
        types: set[str] | None = None
        props: dict[str, list[Check]] = {}
        checks: list[Check] = []

        def merge(other: tuple[set[str] | None, dict[str, list[Check]], list[Check]]) -> None:
            nonlocal types
            t, p, c = other
            if t is not None:
                types = t if types is None else types & t
            for key, value in p.items():
                props.setdefault(key, []).extend(value)
            checks.extend(c)

        for key, value in schema.items():
            if key in ANNOTATIONS:
                continue
            if key == "type":
                merge(({value} if isinstance(value, str) else set(value), {}, []))
            elif key == "properties":
                merge((None, {k: [self.compile(v, base)] for k, v in value.items()}, []))
            elif key == "allOf":
                for member in value:
                    if isinstance(member, dict) and set(member) <= {"$ref"} | ANNOTATIONS:
                        target = self.join(base, member["$ref"])
                        doc = self.resolve(target)
                        merge(self.parts(doc, target.partition("#")[0]) if isinstance(doc, dict) else (None, {}, [self.ref(target)]))
                    else:
                        checks.append(self.compile(member, base))
            elif key == "$ref":
                checks.append(self.ref(self.join(base, value)))
            elif key == "$dynamicRef":
                if value != "#meta":
                    raise Unsupported(value)
                checks.append(self.ref(self.root))
            else:
                checks.append(self.keyword(key, value, schema, base))
        return types, props, checks

    def keyword(self, key: str, value: Any, schema: dict[str, Any], base: str) -> Check:
        if key == "additionalProperties":
            if "patternProperties" in schema:
                raise Unsupported(key)
            sub = self.compile(value, base)
            known = frozenset(schema.get("properties", ()))
            return lambda x: type(x) is not dict or all(sub(v) for k, v in x.items() if k not in known)
        if key == "propertyNames":
            sub = self.compile(value, base)
            return lambda x: type(x) is not dict or all(sub(k) for k in x)
        if key == "items":
            if not isinstance(value, (dict, bool)):
                raise Unsupported(key)
            sub = self.compile(value, base)
            return lambda x: type(x) is not list or all(sub(v) for v in x)
        if key == "anyOf":
            subs = [self.compile(v, base) for v in value]
            return lambda x: any(s(x) for s in subs)
        if key == "enum":
            allowed = [(type(v), v) for v in value]
            if not all(t in (str, int, bool) or v is None for t, v in allowed):
                raise Unsupported(key)
            return lambda x: (type(x), x) in allowed
        if key == "minItems":
            return lambda x: type(x) is not list or len(x) >= value
        if key == "uniqueItems":
            if value is not True:
                return lambda x: True
            return lambda x: type(x) is not list or (all(type(v) is str for v in x) and len(set(x)) == len(x))
        if key in ("minimum", "exclusiveMinimum"):
            if key == "minimum":
                return lambda x: type(x) not in (int, float) or x >= value
            return lambda x: type(x) not in (int, float) or x > value
        if key == "pattern":
            regex = re.compile(value)
            return lambda x: type(x) is not str or regex.search(x) is not None
        raise Unsupported(key)

    @staticmethod
    def assemble(types: set[str] | None, props: dict[str, list[Check]], checks: list[Check]) -> Check:
        py_types: frozenset[type] | None = (
            frozenset(cls for t in types for cls in _PY_TYPES[t]) if types is not None else None
        )
        merged: dict[str, Check] = {}
        for key, subs in props.items():
            if len(subs) == 1:
                merged[key] = subs[0]
            else:
                merged[key] = lambda v, subs=tuple(subs): all(s(v) for s in subs)  # type: ignore[misc]
        rest = tuple(checks)
        # The usual shapes without the general loop: a type alone, or one check alone (a `$ref`).
        if not merged and not rest:
            if py_types is None:
                return lambda x: True
            return lambda x: type(x) in py_types
        if not merged and py_types is None and len(rest) == 1:
            return rest[0]

        def check(x: Any) -> bool:
            if py_types is not None and type(x) not in py_types:
                return False
            if merged and type(x) is dict:
                for key, value in x.items():
                    sub = merged.get(key)
                    if sub is not None and not sub(value):
                        return False
            for c in rest:  # noqa: SIM110 - a loop: all() would build a generator for every node
                if not c(x):
                    return False
            return True

        return check


@cache
def meta_check(dialect: str) -> Check | None:
    """The compiled check for a dialect, or None (use jsonschema) when it cannot be compiled."""
    if dialect.rstrip("#") != DRAFT_2020_12:
        return None
    folder = _specifications_dir()
    if folder is None:
        return None
    try:
        documents: dict[str, Any] = {}
        root_doc = json.loads((folder / "draft202012" / "metaschema.json").read_text(encoding="utf-8"))
        documents[root_doc["$id"]] = root_doc
        for path in sorted((folder / "draft202012" / "vocabularies").iterdir()):
            doc = json.loads(path.read_text(encoding="utf-8"))
            documents[doc["$id"]] = doc
        return Compiler(documents, root_doc["$id"]).ref(root_doc["$id"])
    except (OSError, ValueError, KeyError, TypeError, re.error, Unsupported):
        return None


def certainly_valid(document: Any) -> bool:
    """True only if `document` is certainly valid against its dialect's meta-schema (2020-12 when
    it declares none); False means "run the full validator"."""
    dialect = document.get("$schema", DRAFT_2020_12) if isinstance(document, dict) else DRAFT_2020_12
    check = meta_check(dialect) if isinstance(dialect, str) else None
    if check is None:
        return False
    try:
        return check(document)
    except RecursionError:
        return False
