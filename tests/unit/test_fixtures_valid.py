"""Every message fixture is a valid instance of its schema definition.

Fixtures live in tests/fixtures/messages/<version>/<DefName>.json; each file is a
JSON list of instances of `$defs/<DefName>` in that version's schema document.

Checks:
- each instance validates (Draft 2020-12, refs resolved through a
  `referencing.Registry` holding the whole schema document);
- no instance carries a key the schema does not declare (jsonschema alone would
  not notice, because most ACP objects leave `additionalProperties` open);
- every method definition (`x-method`) of every version has a fixture file;
- the known variants of the main tagged unions are all exercised somewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "messages"

# version directory -> schema file (the unstable files are supersets of the stable ones)
VERSIONS = {
    "v0_4": ROOT / "schema" / "v0_4" / "schema.json",
    "v1": ROOT / "schema" / "v1" / "schema.unstable.json",
    "v2": ROOT / "schema" / "v2" / "schema.unstable.json",
}

# x-method definitions that are allowed to have no fixture file, with the reason.
ALLOWED_MISSING: dict[str, dict[str, str]] = {
    "v0_4": {},
    "v1": {},
    "v2": {},
}

# Each fixture file holds a handful of instances ...
MAX_INSTANCES = 4
# ... except the session/update notification: its `update` union has 8 (v0.4) to 24 (v2)
# variants, and a realistic turn is a long stream of them, so it holds one or more per variant.
MAX_INSTANCES_EXCEPTIONS: dict[str, dict[str, str]] = {
    "v0_4": {"SessionNotification": "covers every SessionUpdate variant"},
    "v1": {"SessionNotification": "covers every SessionUpdate variant"},
    "v2": {"UpdateSessionNotification": "covers every SessionUpdate variant"},
}

# Unions whose every known (non-fallback) variant must appear in some fixture.
REQUIRED_UNIONS = {
    "v0_4": [
        "SessionUpdate",
        "ContentBlock",
        "ToolCallContent",
        "RequestPermissionOutcome",
        "McpServer",
        "EmbeddedResourceResource",
        "ToolKind",
        "ToolCallStatus",
        "PermissionOptionKind",
        "PlanEntryPriority",
        "PlanEntryStatus",
    ],
    "v1": [
        "SessionUpdate",
        "ContentBlock",
        "ToolCallContent",
        "RequestPermissionOutcome",
        "McpServer",
        "EmbeddedResourceResource",
        "ToolKind",
        "ToolCallStatus",
        "PermissionOptionKind",
        "PlanEntryPriority",
        "PlanEntryStatus",
        "AuthMethod",
        "SessionConfigOption",
        "SessionConfigSelectOptions",
        "SetSessionConfigOptionRequest",
        "CreateElicitationRequest",
        "CreateElicitationResponse",
        "ElicitationPropertySchema",
        "MultiSelectItems",
        "PlanUpdateContent",
        "StateUpdate",
        "MessageMcpResponse",
        "ElicitationFormMode",
        "ElicitationUrlMode",
    ],
    "v2": [
        "SessionUpdate",
        "ContentBlock",
        "ToolCallContent",
        "RequestPermissionOutcome",
        "McpServer",
        "EmbeddedResourceResource",
        "ToolKind",
        "ToolCallStatus",
        "PermissionOptionKind",
        "PlanEntryPriority",
        "PlanEntryStatus",
        "AuthMethod",
        "SessionConfigOption",
        "SessionConfigSelectOptions",
        "SetSessionConfigOptionRequest",
        "CreateElicitationRequest",
        "CreateElicitationResponse",
        "ElicitationPropertySchema",
        "MultiSelectItems",
        "PlanUpdateContent",
        "StateUpdate",
        "IdleStateUpdate",
        "MessageMcpResponse",
        "ElicitationFormMode",
        "ElicitationUrlMode",
        "RequestPermissionSubject",
        "DiffChange",
        "BackgroundWork",
        "ReplayFrom",
        "AvailableCommand",
        "AvailableCommandInput",
        "ErrorData",
    ],
}

# Keys that only annotate a schema node and never constrain the instance.
ANNOTATION_KEYS = {"description", "title", "default", "examples", "deprecated", "$comment"}


def _format_checker() -> FormatChecker:
    """The stock checker plus stdlib checks for `uri` and `date-time`."""
    checker = FormatChecker()

    @checker.checks("uri")
    def _is_uri(value: object) -> bool:
        if not isinstance(value, str):
            return True
        return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$", value) is not None

    @checker.checks("date-time", raises=ValueError)
    def _is_date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        m = re.fullmatch(
            r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.\d+)?([Zz]|[+-]\d{2}:\d{2})", value
        )
        if m is None:
            return False
        offset = "+00:00" if m.group(3) in "Zz" else m.group(3)
        datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{offset}")  # range checks
        return True

    @checker.checks("date", raises=ValueError)
    def _is_date(value: object) -> bool:
        if not isinstance(value, str):
            return True
        date.fromisoformat(value)
        return True

    return checker


FORMAT_CHECKER = _format_checker()


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class SchemaDoc:
    """One schema document registered under a URN, with helpers to walk it."""

    def __init__(self, version: str, path: Path) -> None:
        self.version = version
        self.uri = f"urn:acp-schema:{version}"
        self.doc = json.loads(path.read_text(encoding="utf-8"))
        self.defs: dict[str, Any] = self.doc["$defs"]
        resource = Resource.from_contents(self.doc, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(self.uri, resource)
        self._validators: dict[str, Draft202012Validator] = {}

    def validator(self, pointer: str) -> Draft202012Validator:
        """A validator for the subschema at `pointer` (e.g. "/$defs/PromptRequest")."""
        found = self._validators.get(pointer)
        if found is None:
            schema = {"$ref": f"{self.uri}#{pointer}"}
            found = Draft202012Validator(
                schema, registry=self.registry, format_checker=FORMAT_CHECKER
            )
            self._validators[pointer] = found
        return found

    def node(self, pointer: str) -> Any:
        current: Any = self.doc
        for raw in pointer.split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~")
            current = current[int(token)] if isinstance(current, list) else current[token]
        return current

    def is_valid(self, pointer: str, instance: Any) -> bool:
        return self.validator(pointer).is_valid(instance)

    def applicable(self, pointer: str, instance: Any) -> Iterator[str]:
        """Pointers of every subschema that applies to `instance` at this level:
        the node itself, its `$ref` target, all of `allOf`, and the branches of
        `anyOf`/`oneOf` that the instance satisfies."""
        yield pointer
        node = self.node(pointer)
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if ref is not None:
            assert ref.startswith("#/"), f"unexpected non-local $ref {ref!r}"
            yield from self.applicable(ref[1:], instance)
        for i, _ in enumerate(node.get("allOf", [])):
            yield from self.applicable(f"{pointer}/allOf/{i}", instance)
        for keyword in ("anyOf", "oneOf"):
            for i, _ in enumerate(node.get(keyword, [])):
                branch = f"{pointer}/{keyword}/{i}"
                if self.is_valid(branch, instance):
                    yield from self.applicable(branch, instance)

    def undeclared_keys(self, pointer: str, instance: Any, where: str = "$") -> list[str]:
        """Paths of object keys that no applicable subschema declares."""
        nodes = [(p, self.node(p)) for p in self.applicable(pointer, instance)]
        problems: list[str] = []
        if isinstance(instance, dict):
            declared: dict[str, list[str]] = {}
            maps: list[str] = []
            open_ = False
            for p, node in nodes:
                if node is True or (
                    isinstance(node, dict)
                    and not (set(node) - ANNOTATION_KEYS - {k for k in node if k.startswith("x-")})
                ):
                    open_ = True  # unconstrained schema: anything goes below
                    continue
                if not isinstance(node, dict):
                    continue
                for key in node.get("properties", {}):
                    declared.setdefault(key, []).append(f"{p}/properties/{_escape(key)}")
                for keyword in ("additionalProperties", "unevaluatedProperties"):
                    extra = node.get(keyword)
                    if extra is True:
                        open_ = True
                    elif isinstance(extra, dict):
                        maps.append(f"{p}/{keyword}")
            for key, value in instance.items():
                child = f"{where}.{key}"
                if key in declared:
                    for sub in declared[key]:
                        problems += self.undeclared_keys(sub, value, child)
                elif maps:
                    for sub in maps:
                        problems += self.undeclared_keys(sub, value, child)
                elif not open_:
                    problems.append(child)
        elif isinstance(instance, list):
            for p, node in nodes:
                if isinstance(node, dict) and isinstance(node.get("items"), dict):
                    for i, item in enumerate(instance):
                        problems += self.undeclared_keys(f"{p}/items", item, f"{where}[{i}]")
        return sorted(set(problems))

    def record_union_branches(
        self, pointer: str, instance: Any, seen: set[tuple[str, int]]
    ) -> None:
        """Record (DefName, branch index) for every `$defs` union branch the instance takes."""
        for p in self.applicable(pointer, instance):
            node = self.node(p)
            if not isinstance(node, dict):
                continue
            m = re.fullmatch(r"/\$defs/([^/]+)", p)
            if m:
                for keyword in ("anyOf", "oneOf"):
                    for i, _ in enumerate(node.get(keyword, [])):
                        if self.is_valid(f"{p}/{keyword}/{i}", instance):
                            seen.add((m.group(1), i))
            if isinstance(instance, dict):
                for key, value in instance.items():
                    if key in node.get("properties", {}):
                        self.record_union_branches(f"{p}/properties/{_escape(key)}", value, seen)
                    elif isinstance(node.get("additionalProperties"), dict):
                        self.record_union_branches(f"{p}/additionalProperties", value, seen)
            elif isinstance(instance, list) and isinstance(node.get("items"), dict):
                for item in instance:
                    self.record_union_branches(f"{p}/items", item, seen)

    def known_branches(self, name: str) -> list[int]:
        """Indices of a union's branches, leaving out the open fallbacks
        (`title` other/unknown/Other with no const)."""
        node = self.defs[name]
        branches = node.get("oneOf") or node.get("anyOf") or []
        known = []
        for i, branch in enumerate(branches):
            title = branch.get("title", "")
            fallback = title.lower() in {"other", "unknown"} and "const" not in branch
            if not fallback:
                known.append(i)
        return known


@cache
def schema_doc(version: str) -> SchemaDoc:
    return SchemaDoc(version, VERSIONS[version])


def fixture_files() -> list[tuple[str, Path]]:
    return [
        (version, path)
        for version in VERSIONS
        for path in sorted((FIXTURES / version).glob("*.json"))
    ]


def load_instances(version: str, path: Path) -> list[Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, list), f"{version}/{path.name}: a fixture file holds a JSON list"
    limit = MAX_INSTANCES if path.stem not in MAX_INSTANCES_EXCEPTIONS[version] else None
    assert data, f"{version}/{path.name}: a fixture file needs at least one instance"
    assert limit is None or len(data) <= limit, (
        f"{version}/{path.name}: expected at most {limit} instances, found {len(data)}"
    )
    return data


FILES = fixture_files()


def test_fixture_directories_exist() -> None:
    for version in VERSIONS:
        assert (FIXTURES / version).is_dir(), f"missing fixtures for {version}"
    assert FILES


@pytest.mark.parametrize(("version", "path"), FILES, ids=[f"{v}/{p.stem}" for v, p in FILES])
def test_fixture_instances_validate(version: str, path: Path) -> None:
    doc = schema_doc(version)
    name = path.stem
    assert name in doc.defs, f"{version}/{path.name}: no $defs/{name} in the schema"
    validator = doc.validator(f"/$defs/{name}")
    for index, instance in enumerate(load_instances(version, path)):
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        assert not errors, f"{version}/{name}[{index}]: " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}" for e in errors
        )
        unknown = doc.undeclared_keys(f"/$defs/{name}", instance)
        assert not unknown, (
            f"{version}/{name}[{index}]: keys the schema does not declare: {unknown}"
        )


@pytest.mark.parametrize("version", list(VERSIONS))
def test_every_method_definition_has_fixtures(version: str) -> None:
    doc = schema_doc(version)
    methods = sorted(name for name, node in doc.defs.items() if "x-method" in node)
    present = {path.stem for v, path in FILES if v == version}
    allowed = ALLOWED_MISSING[version]
    missing = [name for name in methods if name not in present and name not in allowed]
    assert not missing, f"{version}: x-method definitions without fixtures: {missing}"
    stale = [name for name in allowed if name in present or name not in methods]
    assert not stale, f"{version}: ALLOWED_MISSING entries that are no longer needed: {stale}"


@pytest.mark.parametrize("version", list(VERSIONS))
def test_union_variants_are_covered(version: str) -> None:
    doc = schema_doc(version)
    seen: set[tuple[str, int]] = set()
    for v, path in FILES:
        if v != version:
            continue
        for instance in load_instances(version, path):
            doc.record_union_branches(f"/$defs/{path.stem}", instance, seen)
    gaps = []
    for name in REQUIRED_UNIONS[version]:
        node = doc.defs[name]
        branches = node.get("oneOf") or node.get("anyOf") or []
        for i in doc.known_branches(name):
            if (name, i) not in seen:
                branch = branches[i]
                label = (
                    branch.get("const")
                    or branch.get("title")
                    or json.dumps(branch.get("properties", {}))[:80]
                )
                gaps.append(f"{name}[{i}] {label}")
    assert not gaps, f"{version}: union variants no fixture exercises: {gaps}"
