"""`acpgen diff` on real release pairs (tests/diff_pairs/, see SOURCES.json there): the items the
outcomes issue names, and a check that every reported outcome is what the generated decoders do.

For each wire-breaking change whose failure can be put in a message (a required key missing, a tag
or an enum value the receiver does not list), the receiving side's package is generated, a message
valid for it is built around the changed type along a path that passes where the outcome says, the
changed part is replaced by what the sending side sends, and the message is decoded: the decoder
must reject it, drop the item, put the fallback in the field or hold the default variant, as
reported. The same message with the receiver's own part must decode (else the case is counted as
not checkable, never as agreeing).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acpgen.diff import Change, Report, diff_targets, file_target
from acpgen.diff.flow import method_flow
from acpgen.diff.model import A2C, ABSENT, C2A, DEFAULTS, DROPS, KEEPS, MISREADS, REJECTS, Outcome
from acpgen.ir.model import Alias, Enum, Package, Struct, TypeRef, Union_
from tests.conftest import ROOT
from tests.snapshots.test_diff_snapshots import package as built_package

PAIRS_DIR = ROOT / "tests" / "diff_pairs"
# The pairs the issue names (schema releases), as the npm packages that carry them (SOURCES.json).
PAIRS = {
    "0.4.11-to-0.6.3": ("sdk-0.4.9", "sdk-0.5.1"),
    "0.11.7-to-0.12.2": ("sdk-0.19.0", "sdk-0.20.0"),
    "0.12.2-to-0.13.0": ("sdk-0.20.0", "sdk-0.22.0"),
    "1.0.0-to-1.3.0": ("sdk-1.0.0", "sdk-1.2.0"),
    "1.5.0-to-1.7.0": ("sdk-1.3.0", "sdk-1.4.0"),
}
# The repository's own versions, for the decoder check too (each file merged with its unstable companion).
OTHER_PAIRS = {"v0_4-to-v1": ("schema/v0_4/schema.json", "schema/v1/schema.json"),
               "v1-to-v2": ("schema/v1/schema.json", "schema/v2/schema.json")}


def schema_file(side: str) -> Path:
    return ROOT / side if side.startswith("schema/") else PAIRS_DIR / side / "schema.json"


@functools.cache
def pair_report(pair: str) -> Report:
    old, new = PAIRS.get(pair) or OTHER_PAIRS[pair]
    report, diagnostics = diff_targets(file_target(schema_file(old)), file_target(schema_file(new)), old, new)
    assert report is not None, [d.render() for d in diagnostics]
    return report


def ir(side: str) -> Package:
    return built_package(str(schema_file(side).relative_to(ROOT)), False, False)


def find(report: Report, kind: str, path: str) -> list[Change]:
    return [c for c in report.changes if c.kind == kind and c.path == path]


def outcome_set(c: Change) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(o.receivers, o.outcome, o.at) for o in c.outcomes}


# -- the items of the issue on the real pairs ------------------------------------------------------


def test_skip_invalid_items_shields_a_new_required_field_and_a_removed_one() -> None:
    r = pair_report("1.0.0-to-1.3.0")
    (server_id,) = find(r, "field-added", "McpServerAcp.serverId")
    assert server_id.breaks == "old clients" and server_id.classification == "wire-breaking"
    assert outcome_set(server_id) == {("new agents", DROPS, (
        "ForkSessionRequest.mcpServers", "LoadSessionRequest.mcpServers", "NewSessionRequest.mcpServers",
        "ResumeSessionRequest.mcpServers"))}
    (provider_id,) = find(r, "field-removed", "ProviderInfo.id")
    assert provider_id.breaks == "old clients"
    assert outcome_set(provider_id) == {("old clients", DROPS, ("ListProvidersResponse.providers",))}
    # Without an annotation on the way the message is rejected.
    (plan,) = find(r, "field-added", "PlanFile.planId")
    assert outcome_set(plan) == {("new clients", REJECTS, ("session/update",))}


def test_annotation_changes_are_reported_with_their_direction() -> None:
    changes = pair_report("1.0.0-to-1.3.0").changes
    added = [c for c in changes if c.kind == "annotation-added"]
    removed = [c for c in changes if c.kind == "annotation-removed"]
    assert len(added) > 300 and removed  # the oracle's count for the pair: see the closing note
    assert all(c.classification == "compatible" and c.breaks == "nobody" for c in added + removed)
    assert all("more tolerant receivers" in c.detail for c in added)
    assert all("stricter receivers" in c.detail for c in removed)
    mcp = {c.detail.split(";")[0] for c in added if c.path == "NewSessionRequest.mcpServers"}
    assert mcp == {"`x-deserialize-default-on-error` added", "`x-deserialize-skip-invalid-items` added"}


def test_untagged_to_tagged_is_read_variant_by_variant() -> None:
    r = pair_report("1.0.0-to-1.3.0")
    (tag,) = find(r, "union-tag-changed", "MultiSelectItems")
    assert (tag.breaks, tag.classification) == ("nobody", "source-breaking")
    assert "`UntitledMultiSelectItems` -> `StringMultiSelectItemsVariant`" in tag.detail
    # the tagless default variant is the `$defs` class itself (one class per schema type)
    assert "`TitledMultiSelectItems` -> the default variant `TitledMultiSelectItems`" in tag.detail
    (openness,) = find(r, "union-openness-changed", "MultiSelectItems")
    assert (openness.breaks, openness.detail.split(" (")[0]) == ("old clients", "closed -> open")
    assert outcome_set(openness) == {("old clients", REJECTS, ("elicitation/create params",))}
    renamed = {c.detail.split(":")[0] for c in find(r, "variant-renamed", "MultiSelectItems")}
    assert renamed == {"variant `UntitledMultiSelectItems` -> `StringMultiSelectItemsVariant`"}


def test_a_removed_variant_is_read_by_the_schema_as_the_default_and_kept_whole_by_ours() -> None:
    (env_var,) = find(pair_report("1.5.0-to-1.7.0"), "variant-removed", "AuthMethod")
    # the schema reads `type: env_var` as the default variant (it does not forbid the tag): receivers
    # that follow it misread; acpgen's decoder keeps the object whole as `OtherAuthMethod` instead
    assert env_var.breaks == "old agents" and "read it as the default variant `AuthMethodAgent`" in env_var.detail
    assert outcome_set(env_var) == {("new clients", KEEPS, ("AuthMethod as `OtherAuthMethod`",))}


def test_a_wire_key_renamed_under_the_same_attribute_is_one_change() -> None:
    r = pair_report("0.4.11-to-0.6.3")
    on_mode = [c for c in r.changes if c.path.startswith("SetSessionModeResponse.")]
    assert [(c.kind, c.path) for c in on_mode] == [("field-wire-renamed", "SetSessionModeResponse._meta")]
    (c,) = on_mode
    assert "wire key `meta` -> `_meta` under the same attribute `meta`" in c.detail and not c.source_breaking
    assert {(o.receivers, o.outcome) for o in c.outcomes} == {("old clients", "reads-absent"), ("new clients", "reads-absent")}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_every_wire_breaking_change_has_an_outcome(pair: str) -> None:
    for c in pair_report(pair).changes:
        decoded = not c.kind.startswith("protocol-rule-")  # the runtime acts on a protocol rule, no decoder
        assert bool(c.outcomes) == (c.classification == "wire-breaking" and decoded), c


# -- the outcomes against the generated decoders ----------------------------------------------------


@dataclass(frozen=True)
class Step:
    node: str  # the struct, union or alias the step leaves
    wire: str = ""  # a struct's key ("" for a flattened field, a union variant or an alias target)
    container: str = ""  # "list" or "map" when the child is an item of the key's value
    py: str = ""  # a struct's field: its attribute ("" for a union variant or an alias target)


class Messages:
    """Minimal valid JSON for the types of one package, and paths through them."""

    def __init__(self, package: Package) -> None:
        self.nodes = {n.name: n for n in package.nodes}
        self.defs = {d: t.name for d, t in package.defs if t.kind == "named"}
        self.package = package

    def example(self, t: TypeRef, depth: int = 0) -> Any:
        if depth > 40:
            raise RecursionError(t)
        c = t.constraints
        if t.kind == "named":
            return self.node_example(t.name, depth + 1)
        if t.kind == "literal":
            return t.const
        if t.kind == "str":
            return "x" * max(1, c.min_length or 1)
        if t.kind in ("int", "float"):
            value = c.minimum if c.minimum is not None else (c.maximum if c.maximum is not None and c.maximum < 1 else 1)
            return int(value) if t.kind == "int" else float(value) + (0.5 if c.maximum is None else 0.0)
        if t.kind == "bool":
            return False
        if t.kind == "null":
            return None
        if t.kind in ("any", "object", "map"):
            return {}
        if t.kind == "list" and t.item is not None:
            return [self.example(t.item, depth + 1) for _ in range(c.min_items or 0)]
        if t.kind == "nullable" and t.item is not None:
            return self.example(t.item, depth + 1)
        raise AssertionError(t)

    def node_example(self, name: str, depth: int = 0) -> Any:
        node = self.nodes[name]
        if isinstance(node, Struct):
            out: dict[str, Any] = {node.tag.wire: node.tag.value} if node.tag else {}
            if node.other_of:
                out[node.other_of[0]] = "x-not-a-known-tag"
            for f in node.fields:
                if f.flatten:
                    out.update(self.example(f.type, depth))
                elif f.required:
                    out[f.wire] = self.example(f.type, depth)
            return out
        if isinstance(node, Enum):
            return node.members[0].value if node.members else ("x" if node.base == "str" else 0)
        if isinstance(node, Union_):
            first = next((v for v in node.variants if v.type.name != node.other), node.variants[0])
            return self.example(first.type, depth)
        assert isinstance(node, Alias)
        return self.example(node.target, depth)

    def children(self, name: str) -> list[tuple[Step, str]]:
        node = self.nodes.get(name)
        out: list[tuple[Step, str]] = []
        if isinstance(node, Struct):
            for f in node.fields:
                t: TypeRef | None = f.type
                container = ""
                while t is not None:
                    if t.kind in ("list", "map"):
                        container = t.kind
                    if t.kind == "named":
                        out.append((Step(name, f.wire, container, f.py), t.name))
                    t = t.item
        elif isinstance(node, Union_):
            out += [(Step(name), v.type.name) for v in node.variants if v.type.kind == "named" and v.type.name != node.other]
        elif isinstance(node, Alias) and node.target.kind == "named":
            out.append((Step(name), node.target.name))
        return out

    def path(self, start: str, goal: str) -> list[Step] | None:
        """A shortest path of steps from type `start` to type `goal`."""
        back: dict[str, tuple[Step, str] | None] = {start: None}
        queue = deque([start])
        while queue:
            name = queue.popleft()
            if name == goal:
                steps: list[Step] = []
                while back[name] is not None:
                    step, name = back[name]  # type: ignore[misc]
                    steps.append(step)
                return steps[::-1]
            for step, child in self.children(name):
                if child not in back:
                    back[child] = (step, name)
                    queue.append(child)
        return None

    def through(self, start: str, field_at: str, goal: str) -> list[Step] | None:
        """A path from `start` to `goal` that takes the key `Struct.wire` named by `field_at`."""
        struct, wire = field_at.rsplit(".", 1)
        head = self.path(start, struct)
        if head is None:
            return None
        for step, child in self.children(struct):
            if step.wire == wire:
                tail = self.path(child, goal)
                if tail is not None:
                    return [*head, step, *tail]
        return None

    def build(self, steps: list[Step], leaf: Any) -> Any:
        """A message along `steps` (each struct on the way minimal) with `leaf` at their end."""
        if not steps:
            return leaf
        step, inner = steps[0], self.build(steps[1:], leaf)
        if not step.py:
            return inner  # a union's variant or an alias's target is the value itself
        value = self.node_example(step.node)
        if not step.wire:  # a flattened field: its keys are the struct's
            value.update(inner)
        else:
            value[step.wire] = [inner] if step.container == "list" else ({"k": inner} if step.container == "map" else inner)
        return value

    def takers(self, name: str) -> list[str]:
        """The structs that took over the properties of definition `name` (an `allOf` payload)."""
        pointer = f"/$defs/{name}/"
        return sorted(n.name for n in self.nodes.values() if isinstance(n, Struct) and n.name != name
                      and any(f.pointer.startswith(pointer) for f in n.fields))

    def roots(self, direction: str) -> list[tuple[str, str, Any]]:
        """(label, root type, decoder name) of every message that travels in `direction`."""
        out = []
        for m in self.package.methods:
            params_dirs, result_dirs = method_flow(m.side)
            for role, def_name, dirs in (("params", m.params, params_dirs), ("result", m.result, result_dirs)):
                if def_name and def_name in self.defs and direction in dirs:
                    out.append((m.wire if m.notification else f"{m.wire} {role}", self.defs[def_name], (m.wire, role)))
        return out


def generate(side: str, out: Path) -> Any:
    """Build the package of one vendored schema and import its method table and registry."""
    name = "pair_" + side.replace("-", "_").replace(".", "_").replace("/", "_")
    if not (out / name).is_dir():
        result = subprocess.run([sys.executable, "-m", "acpgen", "build", str(schema_file(side)), "-o",
                                 str(out / name), "--package", name, "-q"], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return importlib.import_module(f"{name}.methods"), importlib.import_module(f"{name}._codec")


def decoder(methods: Any, method: str, role: str) -> Any:
    info = next(m for m in methods.METHODS if m.method == method and (role == "params" or not m.notification))
    return info.decode_params if role == "params" else info.decode_result


def follow(value: Any, steps: list[Step], messages: Messages) -> Any:
    """The decoded value the steps lead to (through the first item of each list)."""
    for step in steps:
        if not step.py:
            continue
        value = getattr(value, step.py)
        if step.container == "list":
            value = value[0]
        elif step.container == "map":
            value = value["k"]
    return value


@dataclass
class Tally:
    agreed: int = 0
    unverifiable: int = 0
    disagreed: list[str] | None = None


def check_outcome(c: Change, o: Outcome, old: tuple[Messages, Any], new: tuple[Messages, Any]) -> str:
    """'agreed', 'unverifiable: why' or 'disagreed: why' for one reported outcome."""
    new_side = o.receivers.startswith("new")
    direction = C2A if o.receivers.endswith("agents") else A2C
    (rx, (methods, codec)), (sx, _) = (new, old) if new_side else (old, new)
    site = c.site
    assert site is not None
    goal = site.new if new_side else site.old
    if site.kind == "missing":
        sent = site.old if new_side else site.new
        if not any(rx.path(root, goal) for _, root, _ in rx.roots(direction)) and rx.takers(goal):
            goal = rx.takers(goal)[0]  # a payload definition: the variant that took it over
            # ... which the sender has too, unless its variant is the definition itself
            sent = goal if goal in sx.nodes else sent
        leaves, own = [sx.node_example(sent)], rx.node_example(goal)
    elif site.kind == "tag" and site.sent in sx.nodes:
        leaves, own = [sx.node_example(site.sent)], rx.node_example(goal)
    elif site.kind == "type" and site.value is not None:
        leaves, own = [site.value], rx.node_example(goal)
    elif site.kind == "value" and (rf := field_of(rx, goal, site.wire)) and (sf := field_of(sx, sent_name(site, new_side), site.wire)):
        own = rx.node_example(goal) | {site.wire: rx.example(rf.type)}
        values = [None] if c.kind == "field-nullable-changed" else (
            ["x", 1, [], {}] if sf.type.kind == "any" else [sx.example(sf.type)])
        leaves = [rx.node_example(goal) | {site.wire: value} for value in values]
    elif site.kind == "outcome" and o.outcome == ABSENT:  # a wire key renamed: the sender's key is unknown here
        goal, wire = goal.rsplit(".", 1)
        sent_wire = (site.old if new_side else site.new).rsplit(".", 1)[1]
        value = {"set": True}
        own = {**rx.node_example(goal), wire: value}
        leaves = [{**rx.node_example(goal), sent_wire: value}]
    else:
        return "unverifiable: no message can carry this site"
    for label, root, (method, role) in rx.roots(direction):
        if o.outcome == REJECTS and label not in o.at:
            continue
        candidates = [rx.path(root, goal) if at.startswith(f"{goal}.") else rx.through(root, at, goal) for at in o.at] \
            if o.outcome in (DROPS, DEFAULTS) else [rx.path(root, goal)]
        for steps in candidates:
            if steps is None:
                continue
            decode = decoder(methods, method, role)
            try:
                decode(rx.build(steps, own))
            except codec.ValidationError:
                continue  # the receiver's own message does not decode on this path: try another
            for leaf in leaves:
                try:
                    got = decode(rx.build(steps, leaf))
                except codec.ValidationError as e:
                    return "agreed" if o.outcome == REJECTS else f"disagreed: {label} raised {e}"
                if site.kind == "value" and kept(got, steps, rx, goal, site.wire, leaf):
                    continue  # the receiver takes this value: try another
                if o.outcome == REJECTS:
                    return f"disagreed: {label} decoded"
                return judge(o, got, steps, rx, codec)
            return "unverifiable: the receiver takes every value tried"
    return "unverifiable: no path on which the receiver's own message decodes"


def judge(o: Outcome, got: Any, steps: list[Step], rx: Messages, codec: Any) -> str:
    if o.outcome == ABSENT:
        held = follow(got, steps, rx)
        node = rx.nodes[type(held).__name__]
        assert isinstance(node, Struct)
        wire = o.at[0].rsplit(".", 1)[1]
        value = getattr(held, next(f.py for f in node.fields if f.wire == wire))
        return "agreed" if isinstance(value, codec.Unset) else f"disagreed: {wire} = {value!r}"
    if o.outcome in (MISREADS, KEEPS):
        held = follow(got, steps, rx)
        expected = o.at[0].split("`")[1]
        return "agreed" if type(held).__name__ == expected else f"disagreed: holds {type(held).__name__}"
    at_index = next((i for i, s in enumerate(steps) if s.wire and any(f"{s.node}.{s.wire}" == a for a in o.at)), None)
    if at_index is None:  # the field that failed caught it itself
        parent = follow(got, steps, rx)
        wire = next(a for a in o.at if a.startswith(f"{type(parent).__name__}.")).rsplit(".", 1)[1]
    else:
        parent, wire = follow(got, steps[:at_index], rx), steps[at_index].wire
    node = rx.nodes[type(parent).__name__]
    assert isinstance(node, Struct)
    f = next(f for f in node.fields if f.wire == wire)
    value = getattr(parent, f.py)
    if o.outcome == DROPS:
        return "agreed" if value == [] or value == {} else f"disagreed: {f.py} = {value!r}"
    fallback = value is None or value in ([], {}) or isinstance(value, codec.Unset) or (
        f.has_default and codec_json(value) == f.default)
    return "agreed" if fallback else f"disagreed: {f.py} = {value!r}"


def field_of(messages: Messages, struct: str, wire: str) -> Any:
    node = messages.nodes.get(struct)
    return next((f for f in node.fields if f.wire == wire), None) if isinstance(node, Struct) else None


def sent_name(site: Any, new_side: bool) -> str:
    return str(site.old if new_side else site.new)


def kept(got: Any, steps: list[Step], rx: Messages, goal: str, wire: str, leaf: Any) -> bool:
    """The decoded message holds the sent value at the changed field: nothing failed."""
    try:
        held = follow(got, steps, rx)
    except (IndexError, KeyError):  # an item on the way was dropped: the value failed
        return False
    value = getattr(held, field_of(rx, goal, wire).py)
    return bool(codec_json(value) == leaf[wire])


def codec_json(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if isinstance(value, list):
        return [codec_json(v) for v in value]
    return value


@pytest.fixture(scope="module")
def pair_packages(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("pairs")

    @functools.cache
    def get(side: str) -> tuple[Messages, Any]:
        return Messages(ir(side)), generate(side, out)

    return get


@pytest.mark.parametrize("pair", sorted(PAIRS) + sorted(OTHER_PAIRS))
def test_reported_outcomes_are_what_the_generated_decoders_do(pair: str, pair_packages: Any) -> None:
    old_side, new_side = PAIRS.get(pair) or OTHER_PAIRS[pair]
    report = pair_report(pair)
    tally = Tally(disagreed=[])
    for c in report.changes:
        for o in c.outcomes:
            verdict = check_outcome(c, o, pair_packages(old_side), pair_packages(new_side))
            if verdict == "agreed":
                tally.agreed += 1
            elif verdict.startswith("unverifiable"):
                tally.unverifiable += 1
            else:
                assert tally.disagreed is not None
                tally.disagreed.append(f"{c.kind} {c.path}: {o.text()}: {verdict}")
    assert tally.disagreed == []
    wire_breaking = sum(c.classification == "wire-breaking" for c in report.changes)
    print(f"{pair}: {tally.agreed} outcomes agreed with the decoders, {tally.unverifiable} not checkable "
          f"({wire_breaking} wire-breaking changes)")
    # Every pair with wire-breaking changes has outcomes the decoders confirm (the wire key renamed
    # in 0.4.11 -> 0.6.3 included).
    assert tally.agreed > 0 or not wire_breaking


# -- provenance of the vendored pairs ----------------------------------------------------------------


def test_vendored_pairs_match_their_recorded_provenance() -> None:
    records = json.loads((PAIRS_DIR / "SOURCES.json").read_text(encoding="utf-8"))
    recorded = {rec["file"] for rec in records}
    present = {p.relative_to(PAIRS_DIR).as_posix() for p in PAIRS_DIR.rglob("*") if p.is_file()} - {"SOURCES.json", "README.md"}
    assert recorded == present
    for rec in records:
        assert set(rec) >= {"file", "package", "version", "path_in_package", "sha256", "stands_for"}, rec
        assert hashlib.sha256((PAIRS_DIR / rec["file"]).read_bytes()).hexdigest() == rec["sha256"], rec["file"]
    used = {side for pair in PAIRS.values() for side in pair}
    assert {f"{side}/schema.json" for side in used} <= recorded
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_diff_pairs.py"), "--check-local"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.count("ok ") == len(records), result.stdout + result.stderr
