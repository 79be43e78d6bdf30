"""`acpgen diff` on small synthetic schema pairs: one test per classification rule, each asserting
the exact change kind, classification, who it breaks and the direction."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from acpgen.diff import Change, Report, diff_targets, file_target

OPEN = {"type": "string", "title": "other", "description": "any other value"}


def base_defs() -> dict[str, Any]:
    """`ping` (the agent handles it) and `notify` (the client handles it), with routing defs."""

    def envelope(ref: str, *, request: bool) -> dict[str, Any]:
        props: dict[str, Any] = {"method": {"type": "string"}, "params": {"$ref": f"#/$defs/{ref}"}}
        if request:
            props["id"] = {"type": "integer"}
        return {"type": "object", "properties": props, "required": ["method", *(["id"] if request else [])]}

    return {
        "ClientRequest": {"anyOf": [envelope("PingRequest", request=True)]},
        "AgentResponse": {"anyOf": [{"type": "object", "properties": {
            "id": {"type": "integer"}, "result": {"$ref": "#/$defs/PingResponse"}}, "required": ["id"]}]},
        "AgentNotification": {"anyOf": [envelope("NoteNotification", request=False)]},
        "PingRequest": {
            "type": "object", "x-method": "ping", "x-side": "agent",
            "properties": {"sessionId": {"type": "string"}, "mode": {"$ref": "#/$defs/Mode"},
                           "shared": {"$ref": "#/$defs/Shared"}},
            "required": ["sessionId"],
        },
        "PingResponse": {
            "type": "object", "x-method": "ping", "x-side": "agent",
            "properties": {"status": {"$ref": "#/$defs/Status"}, "kind": {"$ref": "#/$defs/Kind"},
                           "shared": {"$ref": "#/$defs/Shared"}, "content": {"$ref": "#/$defs/Content"},
                           "count": {"type": "integer", "default": 0}},
            "required": ["status"],
        },
        "NoteNotification": {
            "type": "object", "x-method": "note", "x-side": "client",
            "properties": {"text": {"type": "string"}}, "required": ["text"],
        },
        "Status": {"oneOf": [{"const": "ok"}, {"const": "busy"}]},
        "Kind": {"anyOf": [{"const": "read"}, {"const": "edit"}, OPEN]},
        "Mode": {"oneOf": [{"const": "ask"}, {"const": "code"}]},
        "Shared": {"oneOf": [{"const": "a"}, {"const": "b"}]},
        "Content": {"oneOf": [
            {"type": "object", "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
             "required": ["type", "text"]},
            {"type": "object", "properties": {"type": {"const": "image"}, "data": {"type": "string"}},
             "required": ["type", "data"]},
        ]},
        "Unused": {"oneOf": [{"const": "x"}]},
    }


def write(folder: Path, name: str, defs: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}))
    return path


def run_diff(tmp_path: Path, new: dict[str, Any], old: dict[str, Any] | None = None) -> Report:
    old_path = write(tmp_path / "old", "schema.json", old or base_defs())
    new_path = write(tmp_path / "new", "schema.json", new)
    report, diagnostics = diff_targets(file_target(old_path), file_target(new_path), "old", "new")
    assert report is not None, [d.render() for d in diagnostics]
    return report


def only(report: Report, kind: str | None = None, path: str | None = None) -> Change:
    """The single change of the report (optionally the single one of this kind and path)."""
    changes = [c for c in report.changes if kind in (None, c.kind) and path in (None, c.path)]
    assert len(changes) == 1, [(c.kind, c.path, c.detail) for c in report.changes]
    return changes[0]


def changed(edit: Any) -> dict[str, Any]:
    defs = copy.deepcopy(base_defs())
    edit(defs)
    return defs


def verdict(c: Change) -> tuple[str, str, str, bool, tuple[str, ...]]:
    return c.kind, c.classification, c.breaks, c.source_breaking, c.directions


def test_identical_schemas_have_no_changes(tmp_path: Path) -> None:
    report = run_diff(tmp_path, base_defs())
    assert report.changes == ()
    assert not report.fails("any")


def test_new_value_in_a_closed_enum_the_agent_sends_breaks_old_clients(tmp_path: Path) -> None:
    new = changed(lambda d: d["Status"]["oneOf"].append({"const": "failed"}))
    c = only(run_diff(tmp_path, new))
    assert verdict(c) == ("enum-value-added", "wire-breaking", "old clients", False, ("agent->client",))
    assert c.path == "Status" and "'failed'" in c.detail


def test_new_value_in_a_closed_enum_the_client_sends_breaks_old_agents(tmp_path: Path) -> None:
    new = changed(lambda d: d["Mode"]["oneOf"].append({"const": "plan"}))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "enum-value-added", "wire-breaking", "old agents", False, ("client->agent",))


def test_new_value_in_an_open_enum_breaks_nobody(tmp_path: Path) -> None:
    new = changed(lambda d: d["Kind"]["anyOf"].insert(2, {"const": "delete"}))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "enum-value-added", "compatible", "nobody", False, ("agent->client",))


def test_value_removed_from_a_closed_enum_breaks_old_senders_and_source(tmp_path: Path) -> None:
    new = changed(lambda d: d["Mode"]["oneOf"].pop())
    assert verdict(only(run_diff(tmp_path, new))) == (
        "enum-value-removed", "wire-breaking", "old clients", True, ("client->agent",))


def test_a_type_that_travels_both_ways_gets_the_worst_of_both(tmp_path: Path) -> None:
    new = changed(lambda d: d["Shared"]["oneOf"].append({"const": "c"}))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "enum-value-added", "wire-breaking", "both", False, ("client->agent", "agent->client"))


def test_closing_an_open_enum_breaks_old_senders(tmp_path: Path) -> None:
    new = changed(lambda d: d["Kind"]["anyOf"].pop())
    assert verdict(only(run_diff(tmp_path, new))) == (
        "enum-openness-changed", "wire-breaking", "old agents", True, ("agent->client",))


def test_new_required_field_in_a_request_breaks_old_senders(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["PingRequest"]["properties"]["cwd"] = {"type": "string"}
        d["PingRequest"]["required"].append("cwd")

    c = only(run_diff(tmp_path, changed(edit)))
    assert verdict(c) == ("field-added", "wire-breaking", "old clients", True, ("client->agent",))
    assert c.path == "PingRequest.cwd" and "constructor requires it" in c.detail


def test_new_optional_field_is_compatible(tmp_path: Path) -> None:
    new = changed(lambda d: d["PingRequest"]["properties"].update(cwd={"type": "string"}))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "field-added", "compatible", "nobody", False, ("client->agent",))


def test_removed_required_field_breaks_old_receivers(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        del d["PingRequest"]["properties"]["sessionId"]
        d["PingRequest"]["required"] = []

    assert verdict(only(run_diff(tmp_path, changed(edit)))) == (
        "field-removed", "wire-breaking", "old agents", True, ("client->agent",))


def test_removed_optional_field_is_source_breaking_only(tmp_path: Path) -> None:
    new = changed(lambda d: d["PingRequest"]["properties"].pop("mode"))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "field-removed", "source-breaking", "nobody", True, ("client->agent",))


def test_required_to_optional_in_a_response_breaks_old_receivers(tmp_path: Path) -> None:
    new = changed(lambda d: d["PingResponse"].update(required=[]))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "field-required-changed", "wire-breaking", "old clients", True, ("agent->client",))


def test_optional_to_required_in_a_response_breaks_old_senders(tmp_path: Path) -> None:
    new = changed(lambda d: d["PingResponse"]["required"].append("kind"))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "field-required-changed", "wire-breaking", "old agents", True, ("agent->client",))


def test_a_field_that_becomes_nullable_breaks_old_receivers(tmp_path: Path) -> None:
    new = changed(lambda d: d["PingRequest"]["properties"].update(sessionId={"type": ["string", "null"]}))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "field-nullable-changed", "wire-breaking", "old agents", True, ("client->agent",))


def test_a_field_type_change_breaks_both_sides_of_its_direction(tmp_path: Path) -> None:
    new = changed(lambda d: d["NoteNotification"]["properties"].update(text={"type": "integer"}))
    c = only(run_diff(tmp_path, new))
    assert verdict(c) == ("field-type-changed", "wire-breaking", "both", True, ("agent->client",))
    assert "`str` -> `int`" in c.detail


def test_a_tighter_constraint_breaks_old_senders_only(tmp_path: Path) -> None:
    new = changed(lambda d: d["NoteNotification"]["properties"].update(text={"type": "string", "minLength": 1}))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "field-constraints-changed", "wire-breaking", "old agents", False, ("agent->client",))


def test_a_changed_default_means_different_things_on_each_side(tmp_path: Path) -> None:
    new = changed(lambda d: d["PingResponse"]["properties"]["count"].update(default=1))
    c = only(run_diff(tmp_path, new))
    assert verdict(c) == ("field-default-changed", "wire-breaking", "both", False, ("agent->client",))
    assert "default 0 -> 1" in c.detail


def test_variant_added_to_a_closed_union_breaks_old_receivers(tmp_path: Path) -> None:
    new = changed(lambda d: d["Content"]["oneOf"].append(
        {"type": "object", "properties": {"type": {"const": "audio"}}, "required": ["type"]}))
    c = only(run_diff(tmp_path, new))
    assert verdict(c) == ("variant-added", "wire-breaking", "old clients", False, ("agent->client",))
    assert "`type: audio`" in c.detail and "AudioContent" in c.detail


def test_variant_added_to_an_open_union_breaks_nobody(tmp_path: Path) -> None:
    fallback = {"type": "object", "title": "other", "properties": {"type": {"type": "string"}},
                "required": ["type"], "additionalProperties": True,
                "not": {"properties": {"type": {"enum": ["text", "image"]}}}}
    old = changed(lambda d: d["Content"]["oneOf"].append(copy.deepcopy(fallback)))
    new = copy.deepcopy(old)
    new["Content"]["oneOf"].insert(2, {"type": "object", "properties": {"type": {"const": "audio"}},
                                       "required": ["type"]})
    assert verdict(only(run_diff(tmp_path, new, old))) == (
        "variant-added", "compatible", "nobody", False, ("agent->client",))


def test_variant_removed_from_a_closed_union_breaks_old_senders_and_source(tmp_path: Path) -> None:
    new = changed(lambda d: d["Content"]["oneOf"].pop())
    c = only(run_diff(tmp_path, new))
    assert verdict(c) == ("variant-removed", "wire-breaking", "old agents", True, ("agent->client",))
    assert "class `ImageContent` is gone" in c.detail


def test_a_changed_tag_breaks_both(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        for variant in d["Content"]["oneOf"]:
            variant["properties"]["kind"] = variant["properties"].pop("type")
            variant["required"] = ["kind", *variant["required"][1:]]

    report = run_diff(tmp_path, changed(edit))
    c = only(report, "union-tag-changed")
    assert verdict(c) == ("union-tag-changed", "wire-breaking", "both", True, ("agent->client",))
    assert "tagged by `type` -> tagged by `kind`" in c.detail


def test_removed_method_breaks_its_old_callers(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        del d["AgentNotification"], d["NoteNotification"]

    report = run_diff(tmp_path, changed(edit))
    c = only(report, "method-removed")
    assert verdict(c) == ("method-removed", "wire-breaking", "old agents", True, ("agent->client",))
    assert c.path == "note"
    assert verdict(only(report, "type-removed", "NoteNotification"))[1:] == (
        "source-breaking", "nobody", True, ("agent->client",))


def test_added_method_is_compatible(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["ClientNotification"] = {"anyOf": [{"type": "object", "properties": {
            "method": {"type": "string"}, "params": {"$ref": "#/$defs/StopNotification"}}, "required": ["method"]}]}
        d["StopNotification"] = {"type": "object", "x-method": "stop", "x-side": "agent", "properties": {}}

    report = run_diff(tmp_path, changed(edit))
    assert verdict(only(report, "method-added")) == ("method-added", "compatible", "nobody", False, ("client->agent",))
    assert verdict(only(report, "type-added", "StopNotification"))[1:3] == ("compatible", "nobody")


def test_a_request_that_becomes_a_notification_breaks_both(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["AgentRequest"] = d.pop("AgentNotification")
        d["AgentRequest"]["anyOf"][0]["properties"]["id"] = {"type": "integer"}

    c = only(run_diff(tmp_path, changed(edit)), "method-notification-changed")
    assert verdict(c) == ("method-notification-changed", "wire-breaking", "both", True, ("agent->client",))


def test_a_type_no_method_sends_breaks_nobody_on_the_wire(tmp_path: Path) -> None:
    new = changed(lambda d: d["Unused"]["oneOf"].append({"const": "y"}))
    assert verdict(only(run_diff(tmp_path, new))) == ("enum-value-added", "compatible", "nobody", False, ())


def test_kind_change_is_wire_and_source_breaking(tmp_path: Path) -> None:
    new = changed(lambda d: d.update(Mode={"type": "object", "properties": {"name": {"type": "string"}}}))
    assert verdict(only(run_diff(tmp_path, new))) == (
        "type-kind-changed", "wire-breaking", "both", True, ("client->agent",))


def test_ignore_unstable_drops_what_only_the_unstable_file_defines(tmp_path: Path) -> None:
    stable = base_defs()
    unstable = changed(lambda d: d["Status"]["oneOf"].append({"const": "failed"}))
    unstable["PingRequest"]["properties"]["trace"] = {"type": "boolean"}
    old_path = write(tmp_path / "v", "schema.json", stable)
    write(tmp_path / "v", "schema.unstable.json", unstable)
    # Stable -> stable + unstable: the unstable additions show, marked unstable.
    report, _ = diff_targets(file_target(old_path, no_unstable=True), file_target(old_path), "old", "new")
    assert report is not None
    assert sorted((c.kind, c.path, c.unstable) for c in report.changes) == [
        ("enum-value-added", "Status", True), ("field-added", "PingRequest.trace", True)]
    assert only(report, "enum-value-added").breaks == "old clients"
    ignored, _ = diff_targets(file_target(old_path, no_unstable=True), file_target(old_path), "old", "new",
                              ignore_unstable=True)
    assert ignored is not None and ignored.changes == () and ignored.ignore_unstable


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [("breaking", False), ("source", True), ("any", True)],
)
def test_fail_on_levels(tmp_path: Path, fail_on: str, expected: bool) -> None:
    report = run_diff(tmp_path, changed(lambda d: d["PingRequest"]["properties"].pop("mode")))
    assert report.fails(fail_on) is expected


def test_fail_on_any_with_a_compatible_change_only(tmp_path: Path) -> None:
    report = run_diff(tmp_path, changed(lambda d: d["PingRequest"]["properties"].update(x={"type": "string"})))
    assert [report.fails(f) for f in ("breaking", "source", "any")] == [False, False, True]


def test_an_untagged_variant_under_a_new_class_name_is_compared_field_by_field(tmp_path: Path) -> None:
    def old_edit(d: dict[str, Any]) -> None:
        d["Detail"] = {"type": "object", "properties": {"line": {"type": "integer"}}, "required": ["line"]}
        d["PingResponse"]["properties"]["where"] = {"anyOf": [{"$ref": "#/$defs/Detail"}, {"type": "string"}]}

    def new_edit(d: dict[str, Any]) -> None:
        d["Location"] = {"type": "object", "properties": {"line": {"type": "integer"}, "column": {"type": "integer"}},
                         "required": ["line", "column"]}
        d["PingResponse"]["properties"]["where"] = {"anyOf": [{"$ref": "#/$defs/Location"}, {"type": "string"}]}

    report = run_diff(tmp_path, changed(new_edit), changed(old_edit))
    assert [verdict(c) for c in report.changes] == [
        ("field-added", "wire-breaking", "old agents", True, ("agent->client",)),
        ("variant-renamed", "source-breaking", "nobody", True, ("agent->client",)),
    ]
    assert [c.path for c in report.changes] == ["Location.column", "PingResponseWhere"]
    assert "class `Detail` -> `Location`" in report.changes[1].detail


def test_routing_definitions_are_not_compared_as_types(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["ClientRequest"]["anyOf"][0]["properties"]["id"] = {"type": ["integer", "string"]}

    assert run_diff(tmp_path, changed(edit)).changes == ()


def test_a_default_variant_that_gets_a_tag_keeps_its_field_changes(tmp_path: Path) -> None:
    plain = {"type": "object", "title": "plain", "properties": {"body": {"type": "string"}}, "required": ["body"]}
    old = changed(lambda d: d["Content"]["oneOf"].append(copy.deepcopy(plain)))
    tagged = {**copy.deepcopy(plain), "required": ["type"]}
    tagged["properties"]["type"] = {"const": "plain"}
    new = changed(lambda d: d["Content"]["oneOf"].append(tagged))
    report = run_diff(tmp_path, new, old)
    assert [(c.kind, c.path, c.breaks, c.source_breaking) for c in report.changes] == [
        ("variant-added", "Content", "old clients", False),
        ("variant-removed", "Content", "old agents", False),  # the class PlainContent stays
        ("field-required-changed", "PlainContent.body", "old clients", True),
    ]


def test_a_long_default_that_changes_late_is_still_a_change(tmp_path: Path) -> None:
    long_default = {f"key{i:02d}": False for i in range(12)}
    old = changed(lambda d: d["PingResponse"]["properties"].update(
        flags={"type": "object", "additionalProperties": {"type": "boolean"}, "default": long_default}))
    new = copy.deepcopy(old)
    new["PingResponse"]["properties"]["flags"]["default"] = {**long_default, "key11": True}
    c = only(run_diff(tmp_path, new, old))
    assert verdict(c) == ("field-default-changed", "wire-breaking", "both", False, ("agent->client",))
    assert "..." in c.detail


def test_a_type_replaced_by_an_alias_of_it_is_compatible(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["NoteText"] = {"type": "string", "description": "the text of a note"}
        d["NoteNotification"]["properties"]["text"] = {"$ref": "#/$defs/NoteText"}

    c = only(run_diff(tmp_path, changed(edit)), "field-type-changed")
    assert verdict(c) == ("field-type-changed", "compatible", "nobody", False, ("agent->client",))
    assert "`str` -> `NoteText`: same JSON on the wire" in c.detail


def test_a_renamed_struct_is_paired_and_its_own_changes_listed(tmp_path: Path) -> None:
    # A struct referenced by a field gets a new name and a new optional field: the rename is
    # source-breaking only, the field is a change of its own; no "type added/removed" noise.
    old = changed(lambda d: d.update(Holder={"type": "object", "properties": {"x": {"type": "integer"}}},
                                     NoteNotification=dict(d["NoteNotification"], properties={
                                         "text": {"type": "string"}, "holder": {"$ref": "#/$defs/Holder"}})))
    new = changed(lambda d: d.update(Box={"type": "object", "properties": {"x": {"type": "integer"},
                                                                           "y": {"type": "string"}}},
                                     NoteNotification=dict(d["NoteNotification"], properties={
                                         "text": {"type": "string"}, "holder": {"$ref": "#/$defs/Box"}})))
    report = run_diff(tmp_path, new, old)
    rename = only(report, "field-type-changed")
    assert verdict(rename) == ("field-type-changed", "source-breaking", "nobody", True, ("agent->client",))
    assert "`Holder` -> `Box`: the class is renamed" in rename.detail
    added = only(report, "field-added")
    assert added.path == "Box.y" and added.classification == "compatible"
    assert not [c for c in report.changes if c.kind in ("type-added", "type-removed")]


# -- leniency annotations and outcomes --------------------------------------------------------------

SKIP, ON_ERROR = "x-deserialize-skip-invalid-items", "x-deserialize-default-on-error"


def with_servers(annotations: dict[str, bool], required: list[str] | None = None) -> dict[str, Any]:
    """`PingRequest.servers`: a list of `Server` items carrying `annotations`."""
    defs = base_defs()
    defs["Server"] = {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                      "required": required or ["name"]}
    defs["PingRequest"]["properties"]["servers"] = {"type": "array", "items": {"$ref": "#/$defs/Server"}, **annotations}
    return defs


def outcomes(c: Change) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(o.receivers, o.outcome, o.at) for o in c.outcomes]


def test_adding_a_leniency_annotation_makes_receivers_more_tolerant(tmp_path: Path) -> None:
    report = run_diff(tmp_path, with_servers({SKIP: True, ON_ERROR: True}), with_servers({}))
    assert [(c.kind, c.path, c.classification, c.breaks) for c in report.changes] == [
        ("annotation-added", "PingRequest.servers", "compatible", "nobody"),
        ("annotation-added", "PingRequest.servers", "compatible", "nobody"),
    ]
    details = sorted(c.detail for c in report.changes)
    assert details[0].startswith(f"`{ON_ERROR}` added; more tolerant receivers: new receivers replace a value")
    assert details[1].startswith(f"`{SKIP}` added; more tolerant receivers: new receivers drop a list item")
    assert all(c.outcomes == () for c in report.changes)


def test_removing_a_leniency_annotation_makes_receivers_stricter(tmp_path: Path) -> None:
    c = only(run_diff(tmp_path, with_servers({}), with_servers({ON_ERROR: True})))
    assert verdict(c) == ("annotation-removed", "compatible", "nobody", False, ("client->agent",))
    assert c.detail.startswith(f"`{ON_ERROR}` removed; stricter receivers: new receivers reject a value")


@pytest.mark.parametrize(("annotations", "outcome", "at"), [
    ({SKIP: True, ON_ERROR: True}, "drops-item", "PingRequest.servers"),
    ({ON_ERROR: True}, "defaults", "PingRequest.servers"),
    ({}, "rejects", "ping params"),
])
def test_a_field_that_becomes_required_fails_where_the_first_annotation_on_the_way_catches_it(
        tmp_path: Path, annotations: dict[str, bool], outcome: str, at: str) -> None:
    c = only(run_diff(tmp_path, with_servers(annotations, ["name", "port"]), with_servers(annotations)))
    assert verdict(c) == ("field-required-changed", "wire-breaking", "old clients", True, ("client->agent",))
    assert outcomes(c) == [("new agents", outcome, (at,))]


def test_a_removed_required_field_fails_in_the_old_receivers_decoder(tmp_path: Path) -> None:
    # The old side has the annotation, the new one does not: the old receivers' decoder counts.
    new = with_servers({})
    del new["Server"]["properties"]["name"]
    new["Server"]["required"] = []
    c = only(run_diff(tmp_path, new, with_servers({SKIP: True, ON_ERROR: True})), "field-removed")
    assert c.breaks == "old agents" and outcomes(c) == [("old agents", "drops-item", ("PingRequest.servers",))]


def with_auth(variants: list[dict[str, Any]]) -> dict[str, Any]:
    """`PingResponse.auth`: a union tagged by `type` whose untitled-tag variant `agent` is the default."""
    defs = base_defs()
    defs["Auth"] = {"anyOf": variants}
    defs["PingResponse"]["properties"]["auth"] = {"$ref": "#/$defs/Auth"}
    return defs


AGENT = {"type": "object", "title": "agent", "properties": {"id": {"type": "string"}}, "required": ["id"]}
ENV = {"type": "object", "properties": {"type": {"const": "env"}, "id": {"type": "string"}, "var": {"type": "string"}},
       "required": ["type", "id", "var"]}
TERM = {"type": "object", "properties": {"type": {"const": "term"}, "id": {"type": "string"}}, "required": ["type", "id"]}


def test_a_removed_variant_the_default_takes_is_misread(tmp_path: Path) -> None:
    # wire-breaking by the schema (its receivers read the object as the default); acpgen's own
    # decoder keeps it whole as `OtherAuth` rather than misread it
    c = only(run_diff(tmp_path, with_auth([TERM, AGENT]), with_auth([ENV, TERM, AGENT])))
    assert verdict(c) == ("variant-removed", "wire-breaking", "old agents", True, ("agent->client",))
    assert "new receivers read it as the default variant `AgentAuth`" in c.detail
    assert outcomes(c) == [("new clients", "keeps-unknown", ("Auth as `OtherAuth`",))]


def test_a_default_that_does_not_take_the_object_rejects_it(tmp_path: Path) -> None:
    strict_agent = copy.deepcopy(AGENT)
    strict_agent["properties"]["secret"] = {"type": "string"}
    strict_agent["required"] = ["id", "secret"]
    c = only(run_diff(tmp_path, with_auth([TERM, strict_agent]), with_auth([ENV, TERM, strict_agent])), "variant-removed")
    assert "new receivers reject it" in c.detail
    assert outcomes(c) == [("new clients", "rejects", ("ping result",))]


def test_a_variant_added_beside_a_default_is_misread_by_old_receivers(tmp_path: Path) -> None:
    c = only(run_diff(tmp_path, with_auth([ENV, TERM, AGENT]), with_auth([ENV, AGENT])))
    assert verdict(c) == ("variant-added", "wire-breaking", "old clients", False, ("agent->client",))
    assert outcomes(c) == [("old clients", "keeps-unknown", ("Auth as `OtherAuth`",))]


def test_untagged_to_tagged_reads_each_old_variant_with_the_new_union(tmp_path: Path) -> None:
    picks = {"type": "object", "title": "picks", "properties": {"enum": {"type": "array", "items": {"type": "string"}},
                                                                 "type": {"oneOf": [{"const": "string"}]}},
             "required": ["type", "enum"]}
    titled = {"type": "object", "title": "titled", "properties": {"anyOf": {"type": "array", "items": {"type": "string"}}},
              "required": ["anyOf"]}
    tagged_picks = {"type": "object", "title": "picks", "properties": {"type": {"const": "string"}, "enum": picks["properties"]["enum"]},
                    "required": ["type", "enum"]}
    other = {"type": "object", "title": "other", "properties": {"type": {"type": "string"}}, "required": ["type"],
             "not": {"anyOf": [{"properties": {"type": {"const": "string"}}, "required": ["type"]}]},
             "additionalProperties": True}
    report = run_diff(tmp_path, with_auth([tagged_picks, other, titled]), with_auth([picks, titled]))
    kinds = [(c.kind, c.breaks) for c in report.changes]
    assert ("union-tag-changed", "nobody") in kinds and ("union-openness-changed", "old clients") in kinds
    tag = only(report, "union-tag-changed")
    assert tag.classification == "source-breaking"
    assert "`PicksAuth` -> `StringAuth`" in tag.detail and "`TitledAuth` -> the default variant `TitledAuth`" in tag.detail
    assert outcomes(only(report, "union-openness-changed")) == [("old clients", "rejects", ("ping result",))]


def test_a_tag_renamed_in_every_variant_is_read_by_nobody(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        for variant in d["Content"]["oneOf"]:
            variant["properties"]["kind"] = variant["properties"].pop("type")
            variant["required"] = ["kind", *variant["required"][1:]]

    report = run_diff(tmp_path, changed(edit))
    assert sorted((c.kind, c.breaks) for c in report.changes) == [
        ("union-tag-changed", "both"), ("variant-added", "old clients"), ("variant-added", "old clients"),
        ("variant-removed", "old agents"), ("variant-removed", "old agents")]
    tag = only(report, "union-tag-changed")
    assert "`TextContent` -> nothing: rejected (no `kind`)" in tag.detail
    assert outcomes(tag) == [("new clients", "rejects", ("ping result",)), ("old clients", "rejects", ("ping result",))]


def test_a_wire_key_renamed_under_the_same_attribute_is_one_change(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["PingResponse"]["properties"]["_meta"] = d["PingResponse"]["properties"].pop("meta")

    old = changed(lambda d: d["PingResponse"]["properties"].update(meta={"type": "object"}))
    c = only(run_diff(tmp_path, changed(lambda d: (d["PingResponse"]["properties"].update(meta={"type": "object"}), edit(d))), old))
    assert verdict(c) == ("field-wire-renamed", "wire-breaking", "both", False, ("agent->client",))
    assert c.path == "PingResponse._meta" and "wire key `meta` -> `_meta` under the same attribute `meta`" in c.detail
    assert outcomes(c) == [("new clients", "reads-absent", ("PingResponse._meta",)),
                           ("old clients", "reads-absent", ("PingResponse.meta",))]
