"""Read a schema document (and its unstable companion and meta file) into checked, resolved JSON.

Nothing here interprets ACP: this stage only guarantees that what the IR stage receives is a
JSON Schema document whose every `$ref` resolves, and says where it is not.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen.diagnostics import Diagnostics, pointer_join
from acpgen.load.dialect import older_dialect, upgrade
from acpgen.load.metaschema import certainly_valid

UNSTABLE_SUFFIX = ".unstable.json"


@dataclass(frozen=True)
class SchemaFile:
    """One JSON document as read from disk, with the facts the provenance header needs."""

    path: Path
    document: dict[str, Any]
    sha256: str
    # Found by the reading walk, for the IR's checks: whether a `$schema` appears below the root,
    # and every pattern (`pattern` strings, `patternProperties` keys); None when not looked for.
    nested_dialect: bool | None = None
    patterns: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True)
class LoadedSchema:
    """What the IR stage works on: the stable file, its optional unstable superset, a meta file."""

    stable: SchemaFile
    unstable: SchemaFile | None
    meta: dict[str, Any] | None
    meta_file: str = ""  # the meta file's path, which its diagnostics name
    meta_found: bool = False  # found beside the schema, not given: its method table only warns

    @property
    def effective(self) -> SchemaFile:
        """The document whose definitions are generated: the unstable one when merged."""
        return self.unstable or self.stable


def find_unstable_companion(schema: Path) -> Path | None:
    """`schema.json` -> `schema.unstable.json` beside it, if that file exists."""
    if schema.name.endswith(UNSTABLE_SUFFIX) or schema.suffix != ".json":
        return None
    candidate = schema.with_name(schema.name[: -len(".json")] + UNSTABLE_SUFFIX)
    return candidate if candidate.is_file() else None


def read_json_file(path: Path, diags: Diagnostics) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        diags.error("unreadable", "", f"cannot read the file: {exc.strerror or exc}",
                    "check the path and its permissions")
        return None
    reader = _Reader()
    try:
        document = json.loads(raw, parse_int=reader.parse_int, object_pairs_hook=reader.object_pairs)
    except RecursionError:
        diags.error("too-deep", "", "the JSON nests too deeply to be read",
                    "flatten the schema: move nested schemas into `$defs` and reference them")
    except UnicodeDecodeError as exc:
        diags.error("invalid-json", "", f"the file is not UTF-8 text: {exc.reason} at byte {exc.start}",
                    "save the schema as UTF-8 JSON")
    except json.JSONDecodeError as exc:
        diags.error("invalid-json", "",
                    f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                    "fix the JSON syntax (a linter such as `python -m json.tool FILE` shows the spot)")
    else:
        if reader.huge or reader.duplicates:
            report_read_problems(document, reader, diags)
            if reader.huge:
                return None
        return document
    return None


MAX_INT_DIGITS = 4300  # Python's default limit for int <-> str conversion (repr could not write more)


class _HugeInt(str):
    """An integer literal with more digits than Python converts: kept as text to be reported."""


@dataclass
class _Reader:
    """Hooks for json.loads that notice what it would hide: an integer too long to convert (a
    ValueError with no position) and a key given twice in one object (the last silently wins)."""

    huge: bool = False
    duplicates: dict[int, list[str]] = field(default_factory=dict)  # id(object) -> keys given twice

    def parse_int(self, text: str) -> int | str:
        if len(text) > MAX_INT_DIGITS:
            self.huge = True
            return _HugeInt(text)
        return int(text)

    def object_pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            twice: list[str] = []
            for key, _ in pairs:
                if key in seen and key not in twice:
                    twice.append(key)
                seen.add(key)
            self.duplicates[id(out)] = twice
        return out


def report_read_problems(document: Any, reader: _Reader, diags: Diagnostics) -> None:
    """Locate what the reader noticed: huge integers are errors, repeated keys warnings."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    found: list[tuple[tuple[str | int, ...], str, str]] = []
    while stack:
        node, path = stack.pop()
        if isinstance(node, _HugeInt):
            found.append((path, "error", f"an integer of {len(node.lstrip('-'))} digits"))
        elif isinstance(node, dict):
            for key in reader.duplicates.get(id(node), ()):
                found.append(((*path, key), "warning", key))
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(node))
    for path, level, what in sorted(found, key=lambda f: [str(p) for p in f[0]]):
        pointer = pointer_join("", *path)
        if level == "error":
            diags.error("number-too-large", pointer,
                        f"{what}: more than the {MAX_INT_DIGITS} Python reads and writes",
                        "use a smaller number, or leave the keyword out")
        else:
            diags.warning("duplicate-key", pointer,
                          f"the key {what!r} appears more than once in this object: the last value is used",
                          "remove the duplicate keys (JSON readers disagree on which one counts)")


def read_schema_file(path: Path, diags: Diagnostics) -> SchemaFile | None:
    diags.file = str(path)
    document = read_json_file(path, diags)
    if document is None and diags.errors:
        return None
    if not isinstance(document, dict):
        diags.error("root-not-object", "",
                    f"the root of a schema must be a JSON object, found {json_type(document)}",
                    "an ACP schema is an object with a `$defs` map of definitions")
        return None
    scan = quick_scan(document)
    deep = too_deep(document) if scan.deep else None
    if deep is not None:
        diags.error("too-deep", deep, f"the document nests more than {MAX_DEPTH} levels deep below this point",
                    "flatten the schema: move nested schemas into `$defs` and reference them")
        return None
    for pointer, value in non_finite_numbers(document) if scan.non_finite else ():
        diags.error("non-finite-number", pointer, f"{value} is not a JSON number (JSON has no infinity or NaN)",
                    "use a finite number, or leave the keyword out (no `maximum` means no upper bound)")
    if diags.errors:
        return None
    check_meta_schema(document, diags)
    upgraded = older_dialect(document) and not diags.errors
    if upgraded:
        upgrade(document)
    check_refs(document, diags, None if upgraded or scan.nested_id else scan.refs)
    return SchemaFile(path, document, hashlib.sha256(path.read_bytes()).hexdigest(), scan.nested_dialect,
                      tuple(scan.patterns))


MAX_DEPTH = 1000  # JSON nesting levels (a schema level is two: `properties` / name)


@dataclass(eq=False)
class Scan:
    """What one walk of a document that builds no paths finds; the slower walks that find the
    pointers run only when needed. Every place counts, data included: a False is certain."""

    deep: bool = False  # nested deeper than MAX_DEPTH
    non_finite: bool = False  # holds a NaN or an infinite number
    nested_dialect: bool = False  # a `$schema` below the root
    nested_id: bool = False  # an `$id` below the root
    patterns: list[str] = field(default_factory=list)  # `pattern` strings, `patternProperties` keys
    refs: set[str] = field(default_factory=set)  # every `$ref` string


def quick_scan(document: Any) -> Scan:
    scan = Scan()
    patterns, refs = scan.patterns, scan.refs
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        if type(node) is dict:
            children = node.values()
            if depth and ("$schema" in node or "$id" in node):
                scan.nested_dialect = scan.nested_dialect or "$schema" in node
                scan.nested_id = scan.nested_id or "$id" in node
            if type(ref := node.get("$ref")) is str:
                refs.add(ref)
            if type(pattern := node.get("pattern")) is str:
                patterns.append(pattern)
            if type(keys := node.get("patternProperties")) is dict:
                patterns += keys
        else:
            children = node
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                if depth >= MAX_DEPTH:
                    scan.deep = True
                else:
                    stack.append((child, depth + 1))
            elif kind is float and not math.isfinite(child):
                scan.non_finite = True
    return scan


def too_deep(document: Any) -> str | None:
    """The JSON pointer of the first value nested deeper than MAX_DEPTH, else None (no recursion)."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(document, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            return pointer_join("", *path[:2])  # the definition it is in: the full path is 1000 steps
        if isinstance(node, dict):
            stack.extend((v, depth + 1, (*path, k)) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1, (*path, i)) for i, v in enumerate(node) if isinstance(v, (dict, list)))
    return None


def non_finite_numbers(document: Any) -> list[tuple[str, str]]:
    """(pointer, spelling) of every NaN / Infinity / overflowing number (`1e400`) in the document:
    Python's JSON reader accepts them, the JSON standard and the generated code do not."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            found.append((pointer_join("", *path), "NaN" if math.isnan(node) else "an infinite number"))
        elif isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(node))
    return sorted(found)


def check_meta_schema(document: dict[str, Any], diags: Diagnostics) -> None:
    """Validate the document against its declared dialect (draft 2020-12 when none is declared).

    The compiled check answers for a valid document in milliseconds; anything it is not sure of
    goes through jsonschema, which finds and words every error.
    """
    if certainly_valid(document):
        return
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    cls = validator_for(document, default=Draft202012Validator)
    errors = sorted(cls(cls.META_SCHEMA).iter_errors(document), key=lambda e: list(e.absolute_path))
    for error in errors[:20]:
        pointer = pointer_join("", *error.absolute_path)
        diags.error("not-a-json-schema", pointer,
                    f"not a valid JSON Schema ({cls.__name__[:-9]}): {error.message}",
                    "the value at this pointer breaks the JSON Schema meta-schema")
    if len(errors) > 20:
        diags.error("not-a-json-schema", "", f"... and {len(errors) - 20} more meta-schema errors")


DATA_KEYWORDS = ("const", "default", "enum", "examples")  # their values are data, not schemas


def iter_refs(node: Any, pointer: str = "") -> Iterator[tuple[str, str]]:
    """Every `$ref` value in the document with the JSON pointer of the object holding it."""
    for path, ref in walk_refs(node, [], []):
        yield pointer_join(pointer, *path), ref


def walk_refs(node: Any, path: list[str | int], out: list[tuple[tuple[str | int, ...], str]],
              ids: list[bool] | None = None) -> list[tuple[tuple[str | int, ...], str]]:
    """(path, ref) of every `$ref` below `node`; the pointer string is built only for a ref. When
    `ids` is given, a `$id` anywhere below the root is recorded in it."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.append((tuple(path), ref))
        if ids is not None and path and "$id" in node:
            ids.append(True)
        for key, value in node.items():
            if key not in DATA_KEYWORDS and isinstance(value, (dict, list)):
                path.append(key)
                walk_refs(value, path, out, ids)
                path.pop()
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, (dict, list)):
                path.append(index)
                walk_refs(value, path, out, ids)
                path.pop()
    return out


def check_refs(document: dict[str, Any], diags: Diagnostics, seen: set[str] | None = None) -> None:
    """An error at each `$ref` that resolves to nothing. `seen`: every `$ref` string of a document
    with no `$id` below its root, data included (Scan.refs): when each resolves within the document,
    the walk that locates references is not needed."""
    if seen is not None and all(resolves_locally(document, ref) for ref in seen):
        return
    nested_ids: list[bool] = []
    refs = walk_refs(document, [], [], nested_ids)
    # A local `#/json/pointer` resolves within the document when no subschema sets its own `$id`
    # (which would re-base the references beneath it); anything else goes through `referencing`.
    local = not nested_ids
    unresolved = {ref for _, ref in refs if not (local and resolves_locally(document, ref))}
    if unresolved:
        unresolved = {ref for ref in unresolved if not resolves_with_referencing(document, ref)}
    for path, ref in refs:
        if ref in unresolved:
            diags.error("unresolvable-ref", pointer_join("", *path, "$ref"),
                        f"`$ref` {ref!r} does not resolve to anything in this document",
                        "point it at an existing definition such as `#/$defs/Name`")


def resolves_locally(document: dict[str, Any], ref: str) -> bool:
    """`#` or `#/a/b~1c/0` found by walking the document (no percent-escapes: those take the slow path)."""
    if not ref.startswith("#") or "%" in ref or (len(ref) > 1 and ref[1] != "/"):
        return False
    node: Any = document
    for part in ref[2:].split("/") if len(ref) > 1 else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isascii() and part.isdigit() and part == str(int(part)):
            if int(part) >= len(node):
                return False
            node = node[int(part)]
        else:
            return False
    return True


def resolves_with_referencing(document: dict[str, Any], ref: str) -> bool:
    from referencing import Registry, Resource
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    uri = "urn:acpgen:schema"
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    resolver = Registry().with_resource(uri, resource).resolver(base_uri=uri)
    try:
        resolver.lookup(ref)
    except Unresolvable:
        return False
    return True


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


# What a release of the spec repository publishes beside schema.json: the method names and the
# protocol version (`"version": 1`).
META_FILE = "meta.json"


def load_schema(
    schema: Path,
    unstable: Path | None = None,
    meta: Path | None = None,
    *,
    find_companion: bool = True,
    find_meta: bool = True,
) -> tuple[LoadedSchema | None, list[Diagnostics]]:
    """Load the stable file, the unstable companion (given or found beside it) and a meta file
    (given, or the release's `meta.json` found beside the schema)."""
    reports = [Diagnostics(str(schema))]
    stable = read_schema_file(schema, reports[0])
    if unstable is None and find_companion:
        unstable = find_unstable_companion(schema)
    unstable_file = None
    if unstable is not None:
        reports.append(Diagnostics(str(unstable)))
        unstable_file = read_schema_file(unstable, reports[-1])
    found = meta is None and find_meta and (schema.parent / META_FILE).is_file()
    if found:
        meta = schema.parent / META_FILE
    meta_doc = None
    if meta is not None:
        reports.append(Diagnostics(str(meta)))
        meta_doc = read_json_file(meta, reports[-1])
        if meta_doc is not None and not isinstance(meta_doc, dict):
            reports[-1].error("meta-not-object", "", "a meta file must be a JSON object",
                              "expected {version, agentMethods, clientMethods, protocolMethods}")
            meta_doc = None
    if stable is None or any(r.errors for r in reports):
        return None, reports
    loaded = LoadedSchema(stable, unstable_file, meta_doc, str(meta) if meta is not None else "", found)
    return loaded, reports
