"""Protocol rules in the IR (acpgen/ir/protocol.py): each read from the schema's structure with the
JSON pointers that state it, never from a `$defs` name or from description text; a rule the schema
leaves unstated is a located warning."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acpgen.config import Target
from acpgen.diagnostics import Diagnostic
from acpgen.ir.model import Package
from acpgen.pipeline import load_ir
from tests.conftest import ROOT

V2_LINK = {"/$defs/SessionNotFoundErrorData": -32002}


def build(schema: Path, **options: Any) -> tuple[Package, list[Diagnostic]]:
    target = Target(name="p", schema=schema, output=Path(), package="p", include_unstable=False,
                    find_unstable=False, **options)
    package, diagnostics = load_ir(target)
    assert package is not None, [d.render() for d in diagnostics]
    return package, diagnostics


def rules(package: Package) -> dict[str, tuple[object, tuple[str, ...]]]:
    return {r.key: (r.value, r.evidence) for r in package.protocol.rules}


def test_v1_rules_and_their_evidence() -> None:
    package, _ = build(ROOT / "schema/v1/schema.json", protocol_version=1)
    found = rules(package)
    assert found["error-code/-32002"] == ("RESOURCE_NOT_FOUND", ("/$defs/Error/properties/code", "/$defs/ErrorCode"))
    assert found["negotiation/initialize"] == ("protocolVersion", (
        "/$defs/InitializeRequest/properties/protocolVersion", "/$defs/InitializeResponse/properties/protocolVersion"))
    assert "negotiation/rejects-lower" not in found  # v1 answers any version with its own
    assert found["request-id/null"][0] is True and found["request-id/null"][1][0].endswith("/properties/id")
    assert found["cancel/request"] == ("$/cancel_request", ("/$defs/CancelRequestNotification/properties/requestId",))
    assert found["cancel/session"] == ("session/cancel", ("/$defs/CancelNotification/properties/sessionId",))
    assert found["cancelled-result/session/prompt"] == ("stopReason=cancelled", ("/$defs/PromptResponse/properties/stopReason",))
    assert found["cancelled-by-session/session/prompt"][0] is True
    # what the runtime reads the ids of a cancellation from (rpc.py): the params that state them
    assert (package.protocol.cancel_request_field, package.protocol.session_field) == ("requestId", "sessionId")
    assert all(evidence for key, (_, evidence) in found.items())  # every rule says where the schema states it


def test_v2_negotiation_is_read_from_the_shape_of_its_error_data() -> None:
    package, diagnostics = build(ROOT / "schema/v2/schema.json", protocol_version=2, error_codes=V2_LINK)
    found = rules(package)
    value, evidence = found["negotiation/rejects-lower"]
    assert value == -32022
    assert "/$defs/UnsupportedProtocolVersionErrorData/properties/requested" in evidence
    assert found["request-id/null"][0] is False
    assert found["error-data/UnsupportedProtocolVersionErrorData"][0] == -32022  # linked by its title
    assert found["error-data/SessionNotFoundErrorData"] == (-32002, (
        "/$defs/ErrorData", "/$defs/SessionNotFoundErrorData", "/$defs/ErrorCode",
        "config:error_codes:/$defs/SessionNotFoundErrorData"))
    assert "cancelled-result/session/prompt" not in found and "cancelled-by-session/session/prompt" not in found
    assert not [d for d in diagnostics if d.code == "error-data-unlinked"]


def test_a_data_shape_the_schema_does_not_link_is_a_located_warning() -> None:
    package, diagnostics = build(ROOT / "schema/v2/schema.json", protocol_version=2)
    unlinked = [d for d in diagnostics if d.code == "error-data-unlinked"]
    assert [d.pointer for d in unlinked] == ["/$defs/SessionNotFoundErrorData"]
    assert "error_codes" in unlinked[0].hint
    assert [s.struct for s in package.protocol.error_shapes] == ["UnsupportedProtocolVersionErrorData"]


def test_a_link_to_no_data_shape_is_a_warning(tmp_path: Path) -> None:
    _, diagnostics = build(ROOT / "schema/v2/schema.json", protocol_version=2,
                           error_codes={**V2_LINK, "/$defs/SessionId": -32002})
    assert [d.code for d in diagnostics if "/$defs/SessionId" in d.message] == ["config-unused-link"]


def renamed(document: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    text = json.dumps(document)
    for old, new in names.items():
        text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    out = json.loads(text)
    out["$defs"] = {names.get(k, k): v for k, v in out["$defs"].items()}
    return out


def without_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_descriptions(v) for k, v in value.items() if k != "description" or not isinstance(v, str)}
    if isinstance(value, list):
        return [without_descriptions(v) for v in value]
    return value


def test_rules_depend_on_neither_defs_names_nor_prose(tmp_path: Path) -> None:
    original = json.loads((ROOT / "schema/v2/schema.json").read_text(encoding="utf-8"))
    names = {"ErrorCode": "Codes", "ErrorData": "Shapes", "RequestId": "Ident", "Error": "Failure",
             "UnsupportedProtocolVersionErrorData": "TooOld", "SessionNotFoundErrorData": "NoSession"}
    changed = without_descriptions(renamed(original, names))
    (tmp_path / "schema.json").write_text(json.dumps(changed), encoding="utf-8")
    base, _ = build(ROOT / "schema/v2/schema.json", protocol_version=2, error_codes=V2_LINK)
    other, _ = build(tmp_path / "schema.json", protocol_version=2, error_codes={"/$defs/NoSession": -32002})

    def normalised(package: Package) -> dict[str, object]:
        out = {}
        for key, (value, _) in rules(package).items():
            for old, new in names.items():
                key = re.sub(rf"/{old}$", f"/{new}", key)
            out[key] = value
        return out

    # Capability gates are the one family read from prose: the schema names the method a capability
    # gates only in the capability's description ("Whether the agent supports `session/load`").
    # Without descriptions nothing is gated (nothing refused); every other rule is unchanged.
    gates = {k for k in normalised(base) if k.startswith("capability/")}
    assert gates and not any(k.startswith("capability/") for k in normalised(other))
    assert normalised(other) == {k: v for k, v in normalised(base).items() if k not in gates}
    assert rules(other)["error-code/-32002"][1] == ("/$defs/Failure/properties/code", "/$defs/Codes")


# -- acpgen diff compares the rules ---------------------------------------------------------------


def diff_kinds(old: Package, new: Package) -> dict[str, tuple[str, str]]:
    from acpgen.diff import diff_packages

    return {c.path: (c.kind, c.classification) for c in diff_packages(old, new) if c.kind.startswith("protocol-")}


def mutated_v1(tmp_path: Path, edit: Any) -> Package:
    document = json.loads((ROOT / "schema/v1/schema.json").read_text(encoding="utf-8"))
    edit(document["$defs"])
    (tmp_path / "schema.json").write_text(json.dumps(document), encoding="utf-8")
    return build(tmp_path / "schema.json", protocol_version=1)[0]


def test_diff_shows_a_changed_error_code(tmp_path: Path) -> None:
    def renumber(defs: dict[str, Any]) -> None:
        member = next(m for m in defs["ErrorCode"]["anyOf"] if m.get("const") == -32002)
        member["const"] = -32042

    old, _ = build(ROOT / "schema/v1/schema.json", protocol_version=1)
    changes = diff_kinds(old, mutated_v1(tmp_path, renumber))
    assert changes == {"error-code/-32002": ("protocol-rule-removed", "wire-breaking"),
                       "error-code/-32042": ("protocol-rule-added", "compatible")}


def test_diff_shows_a_changed_cancellation_rule(tmp_path: Path) -> None:
    def no_cancelled_stop(defs: dict[str, Any]) -> None:
        defs["StopReason"]["oneOf"] = [v for v in defs["StopReason"]["oneOf"] if v.get("const") != "cancelled"]

    old, _ = build(ROOT / "schema/v1/schema.json", protocol_version=1)
    changes = diff_kinds(old, mutated_v1(tmp_path, no_cancelled_stop))
    assert changes == {"cancelled-by-session/session/prompt": ("protocol-rule-removed", "wire-breaking"),
                       "cancelled-result/session/prompt": ("protocol-rule-removed", "wire-breaking")}


def test_diff_shows_a_changed_negotiation_fact() -> None:
    old, _ = build(ROOT / "schema/v1/schema.json", protocol_version=1)
    new, _ = build(ROOT / "schema/v2/schema.json", protocol_version=2, error_codes=V2_LINK)
    changes = diff_kinds(old, new)
    assert changes["negotiation/rejects-lower"] == ("protocol-rule-added", "compatible")
    assert changes["request-id/null"] == ("protocol-rule-changed", "wire-breaking")
    assert "negotiation/initialize" not in changes  # the same request and field in both


def test_session_lifecycle_is_read_from_params_and_results() -> None:
    v1, _ = build(ROOT / "schema/v1/schema.json", protocol_version=1)  # the stable file alone
    s = v1.protocol.sessions
    assert s.creators == ("session/new",)  # a required sessionId in the result
    assert s.openers == ("session/load", "session/new", "session/resume")  # a session and cwd, as session/new
    assert (s.forks, s.close, s.listing) == ((), "session/close", "session/list")
    assert s.listing_field == "sessions"  # the result's list of objects that each require sessionId
    assert s.turn == ("session/cancel", "session/prompt")
    found = rules(v1)
    assert sorted(found["session/opens/session/load"][1]) == ["/$defs/LoadSessionRequest/properties/cwd",
                                                              "/$defs/LoadSessionRequest/properties/mcpServers"]
    assert found["session/turn/session/prompt"][1] == ("/$defs/PromptRequest/properties/prompt",)
    # v2: no session/load, and the prompt's result no longer says how the turn stopped; its params do
    v2, _ = build(ROOT / "schema/v2/schema.json", protocol_version=2, error_codes=V2_LINK)
    assert v2.protocol.cancelled_by_session == ()
    assert v2.protocol.sessions.openers == ("session/new", "session/resume")
    assert v2.protocol.sessions.turn == ("session/cancel", "session/prompt")
    # with the unstable file: session/fork creates a session beside the one it names
    target = Target(name="p", schema=ROOT / "schema/v1/schema.json", output=Path(), package="p", protocol_version=1)
    unstable, _ = load_ir(target)
    assert unstable is not None
    assert unstable.protocol.sessions.forks == ("session/fork",)
    assert unstable.protocol.sessions.creators == ("session/fork", "session/new")


def test_a_schema_with_sessions_but_no_session_cancel_still_names_sessions(tmp_path: Path) -> None:
    def no_session_cancel(defs: dict[str, Any]) -> None:
        defs["CancelNotification"]["properties"]["reason"] = {"type": "string"}
        defs["CancelNotification"]["required"] = ["sessionId", "reason"]

    changed = mutated_v1(tmp_path, no_session_cancel)
    assert (changed.protocol.session_cancel, changed.protocol.cancelled_by_session) == ("", ())
    assert changed.protocol.sessions.creators == ("session/new",)
    # asgi.py and remote.py still find sessions in params and results by it
    assert changed.protocol.session_field == "sessionId"


def test_a_schema_without_sessions_names_no_session_field(tmp_path: Path) -> None:
    def no_sessions(defs: dict[str, Any]) -> None:  # nothing creates a session, nothing cancels one
        defs["CancelNotification"]["properties"]["reason"] = {"type": "string"}
        defs["CancelNotification"]["required"] = ["sessionId", "reason"]
        defs["NewSessionResponse"]["required"].remove("sessionId")

    changed = mutated_v1(tmp_path, no_sessions)
    assert (changed.protocol.sessions.creators, changed.protocol.session_cancel) == ((), "")
    assert changed.protocol.session_field == ""


def test_a_schema_without_session_close_has_no_close_rule(tmp_path: Path) -> None:
    def no_close(defs: dict[str, Any]) -> None:
        defs["CloseSessionRequest"]["properties"]["reason"] = {"type": "string"}
        defs["CloseSessionRequest"]["required"] = ["sessionId", "reason"]

    changed = mutated_v1(tmp_path, no_close)
    assert changed.protocol.sessions.close == ""
    assert "session/closes" not in rules(changed)
