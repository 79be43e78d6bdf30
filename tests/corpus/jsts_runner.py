"""Run the vendored JSON-Schema-Test-Suite (draft2020-12) through acpgen and classify every test.

Each test group's schema becomes one `$defs` entry of a single ACP-like schema document, the way a
bundler embeds a resource: local references (`#`, `#/...`) of the group are re-based onto its
`$defs` entry, anything else (remote URLs, `$id`-relative or anchor references) is left as the
suite wrote it, so the generator resolves it or refuses it. All groups are built in-process in a
few batched builds: a build that reports errors has the groups those errors point into taken out
(classified *refused*) and is retried; an error located outside every group splits the batch in
two. The surviving groups are generated into one package, imported, and every instance is decoded
with that definition's generated decoder:

- agree:   valid accepted (and it round-trips), invalid rejected with ValidationError
- warned:  a disagreement, but the build emitted a warning located in the group that names one of
           the group's keywords
- refused: the build refused the group's definition with an error located in it
- silent:  a disagreement with no such warning
- crash:   any exception but ValidationError while decoding, a decoded value that fails to encode,
           or a refusal whose errors are not located in the group (a pointer-less `too-deep` is
           a recursion the generator did not bound, not a diagnosis)

A valid instance round-trips when encode(decode(x)) equals x, numbers compared by value (1 == 1.0,
but never true == 1), allowing keys the encoder adds where the group's schema has a `default`
(defaults are materialised). The package is built with keep_unknown, so unknown keys must survive.

    python -m tests.corpus.jsts_runner            # print the table
    python -m tests.corpus.jsts_runner --details  # and every disagreement
"""

from __future__ import annotations

import importlib
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen.config import Target
from acpgen.diagnostics import Diagnostic
from acpgen.pipeline import generate

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "corpus" / "jsts" / "draft2020-12"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
PACKAGE = "jsts_suite"
OUTCOMES = ("agree", "warned", "refused", "silent", "crash")


@dataclass
class Group:
    key: str  # its `$defs` key
    file: str  # the suite file's stem: the keyword the table reports under
    index: int
    description: str
    schema: Any
    tests: list[dict[str, Any]]
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def pointer(self) -> str:
        return f"/$defs/{self.key}"


@dataclass
class Outcome:
    group: Group
    test: dict[str, Any]
    outcome: str
    detail: str = ""


def load_groups(suite: Path = SUITE) -> list[Group]:
    groups: list[Group] = []
    for path in sorted(suite.glob("*.json")):
        for index, raw in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            key = f"Jsts{len(groups):04d}"
            groups.append(Group(key, path.stem, index, raw["description"], raw["schema"], raw["tests"]))
    return groups


def rebase(node: Any, base: str) -> Any:
    """A copy of `node` whose local references (`#`, `#/...`) point below `base` instead of the root."""
    if isinstance(node, list):
        return [rebase(item, base) for item in node]
    if not isinstance(node, dict):
        return node
    if "$id" in node:  # a resource of its own: `#/...` inside it is relative to it, not to the root
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$ref", "$dynamicRef") and isinstance(value, str) and (value == "#" or value.startswith("#/")):
            out[key] = "#" + base + value[1:]
        elif key in ("const", "enum", "default", "examples"):
            out[key] = value
        else:
            out[key] = rebase(value, base)
    return out


def document(groups: list[Group]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for g in groups:
        schema = rebase(g.schema, g.pointer)
        if isinstance(schema, dict) and "$id" not in schema:
            # Only a resource (a schema with `$id`) may declare its dialect; the suite's own is the document's.
            schema = {k: v for k, v in schema.items() if k != "$schema"}
        defs[g.key] = schema
    return {"$schema": DRAFT, "title": "JSON-Schema-Test-Suite draft2020-12", "$defs": defs}


def owner(pointer: str, by_key: dict[str, Group]) -> Group | None:
    match = re.match(r"/\$defs/(Jsts\d{4})(?:/|$)", pointer)
    return by_key.get(match.group(1)) if match else None


def generate_batch(groups: list[Group], workdir: Path) -> tuple[dict[str, str] | None, list[Diagnostic]]:
    schema = workdir / "schema.json"
    schema.write_text(json.dumps(document(groups), indent=1), encoding="utf-8")
    target = Target(name=PACKAGE, schema=schema, output=workdir / "out" / PACKAGE, package=PACKAGE,
                    include_unstable=False, find_unstable=False, keep_unknown=True)
    result = generate(target)
    return (result.files if result.ok else None), result.diagnostics


def build_all(groups: list[Group], workdir: Path) -> tuple[list[Group], dict[str, str], int]:
    """Build the groups, taking out those the generator refuses; returns the built groups, their
    package's files, and how many builds it took."""
    builds = 0
    survivors = list(groups)
    while survivors:
        by_key = {g.key: g for g in survivors}
        files, diagnostics = generate_batch(survivors, workdir)
        builds += 1
        errors = [d for d in diagnostics if d.level == "error"]
        if files is not None and not errors:
            for d in diagnostics:
                if (g := owner(d.pointer, by_key)) is not None:
                    g.warnings.append(d)
            return survivors, files, builds
        located = {g.key for d in errors if (g := owner(d.pointer, by_key)) is not None}
        for d in errors:
            if (g := owner(d.pointer, by_key)) is not None:
                g.errors.append(d)
        if not located:  # an error outside every group: find the groups that cause it
            culprits, more = unlocated(survivors, workdir)
            builds += more
            located = {g.key for g in culprits}
        survivors = [g for g in survivors if g.key not in located]
    return [], {}, builds


def unlocated(batch: list[Group], workdir: Path) -> tuple[list[Group], int]:
    """The groups of `batch` whose build fails with errors located outside every group (bisection)."""
    files, diagnostics = generate_batch(batch, workdir)
    errors = [d for d in diagnostics if d.level == "error"]
    if files is not None and not errors:
        return [], 1
    if len(batch) == 1:
        batch[0].errors += errors
        return batch, 1
    half = len(batch) // 2
    left, a = unlocated(batch[:half], workdir)
    right, b = unlocated(batch[half:], workdir)
    return left + right, 1 + a + b


def json_equal(a: Any, b: Any, allow_extra: bool) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y, allow_extra) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if not allow_extra and set(a) != set(b):
            return False
        return set(b) <= set(a) and all(json_equal(a[k], b[k], allow_extra) for k in b)
    return type(a) is type(b) and a == b


def keywords_of(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            out.add(key)
            if key not in ("const", "enum", "default", "examples", "properties", "patternProperties",
                           "$defs", "dependentSchemas", "dependentRequired"):
                keywords_of(value, out)
            elif key in ("properties", "patternProperties", "$defs", "dependentSchemas") and isinstance(value, dict):
                for sub in value.values():
                    keywords_of(sub, out)
    elif isinstance(node, list):
        for item in node:
            keywords_of(item, out)
    return out


def warns(group: Group) -> bool:
    """A warning located in the group that names one of the group's keywords."""
    keywords = keywords_of(group.schema, set())
    for d in group.warnings:
        text = f"{d.code} {d.message}"
        if any(f"`{k}`" in text or re.search(rf"(?<![\w$]){re.escape(k)}(?![\w])", text) for k in keywords):
            return True
    return False


def classify(groups: list[Group], built: list[Group], registry: Any, validation_error: type) -> list[Outcome]:
    built_keys = {g.key for g in built}
    results: list[Outcome] = []
    for g in groups:
        has_default = "default" in keywords_of(g.schema, set())
        for test in g.tests:
            if g.key not in built_keys:
                detail = "; ".join(f"{d.code} at {d.pointer or '(root)'}" for d in g.errors)
                located = any(d.pointer.startswith(g.pointer) for d in g.errors)
                results.append(Outcome(g, test, "refused" if located else "crash", detail or "not built"))
                continue
            data = test["data"]
            try:
                value = registry.decode(g.key, data)
            except validation_error as exc:
                accepted, detail = False, str(exc).splitlines()[0][:160]
            except Exception as exc:  # anything but ValidationError is a crash
                results.append(Outcome(g, test, "crash", f"decode: {type(exc).__name__}: {exc}"[:200]))
                continue
            else:
                accepted, detail = True, ""
                try:
                    encoded = registry.encode(value)
                except Exception as exc:  # a decoded value must always encode
                    results.append(Outcome(g, test, "crash", f"encode: {type(exc).__name__}: {exc}"[:200]))
                    continue
                if test["valid"] and not json_equal(encoded, data, has_default):
                    accepted, detail = False, f"round trip gave {json.dumps(encoded)[:120]}"
            if accepted == test["valid"]:
                results.append(Outcome(g, test, "agree"))
            else:
                why = detail or ("accepted" if accepted else "rejected")
                results.append(Outcome(g, test, "warned" if warns(g) else "silent", why))
    return results


def run(suite: Path = SUITE, keep: Path | None = None) -> tuple[list[Outcome], int]:
    """Every test's outcome, and how many builds it took; `keep`: a folder the package stays in."""
    groups = load_groups(suite)
    with tempfile.TemporaryDirectory(prefix="jsts-") as tmp:
        workdir = Path(tmp)
        built, files, builds = build_all(groups, workdir)
        if not built:
            return classify(groups, built, None, Exception), builds
        out = keep or workdir / "pkg"
        for name, text in files.items():
            path = out / PACKAGE / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        sys.path.insert(0, str(out))
        try:
            for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
                del sys.modules[name]
            registry = importlib.import_module(f"{PACKAGE}._registry")
            codec = importlib.import_module(f"{PACKAGE}._codec")
            return classify(groups, built, registry, codec.ValidationError), builds
        finally:
            sys.path.remove(str(out))
            for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
                del sys.modules[name]


def table(results: list[Outcome]) -> str:
    """The per-keyword (per suite file) table as markdown, with totals."""
    per: dict[str, Counter[str]] = {}
    for r in results:
        per.setdefault(r.group.file, Counter())[r.outcome] += 1
    total: Counter[str] = Counter(r.outcome for r in results)
    lines = ["| suite file | tests | " + " | ".join(OUTCOMES) + " |", "|---|---:|" + "---:|" * len(OUTCOMES)]
    for name in sorted(per):
        c = per[name]
        lines.append(f"| {name} | {sum(c.values())} | " + " | ".join(str(c[o]) for o in OUTCOMES) + " |")
    lines.append(f"| **total** | {sum(total.values())} | " + " | ".join(str(total[o]) for o in OUTCOMES) + " |")
    groups = len({r.group.key for r in results})
    return (f"JSON-Schema-Test-Suite draft2020-12 through acpgen: {groups} groups, {len(results)} tests.\n\n"
            + "\n".join(lines) + "\n")


def details(results: list[Outcome]) -> str:
    lines = []
    for r in results:
        if r.outcome != "agree":
            lines.append(f"{r.outcome:8} {r.group.file}[{r.group.index}] {r.group.description!r} / "
                         f"{r.test['description']!r} (valid={r.test['valid']}): {r.detail}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    start = time.perf_counter()
    results, builds = run()
    print(table(results))
    if "--details" in argv:
        print(details(results))
    print(f"{builds} builds, {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
