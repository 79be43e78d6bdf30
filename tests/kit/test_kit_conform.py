"""acpgen conform agent|client: the examples pass every MUST; each deliberately broken agent and
client (tests/kit/faulty_*.py, one fault per run) fails the rule its fault breaks; --json and
--junit carry the same results."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "tests" / "kit"
ACPGEN = [sys.executable, "-m", "acpgen"]
FAULTY_AGENT = [sys.executable, str(KIT / "faulty_agent.py")]
FAULTY_CLIENT = [sys.executable, str(KIT / "faulty_client.py")]
FAULTY_AGENT_V2 = [sys.executable, str(KIT / "faulty_agent_v2.py")]
FAULTY_CLIENT_V2 = [sys.executable, str(KIT / "faulty_client_v2.py")]
PEERS = ROOT / "tests" / "peers"
# What the official SDKs' peers (tests/peers) fail, as docs/kit.md reports it.
SDK_FAILURES = {
    "ts-agent": {"cancel_request.honoured"},
    "py-agent": {"rpc.parse_error", "init.version.invalid", "cancel_request.honoured"},
    "ts-client": set(),
    "py-client": set(),
    # v2 (--protocol v2): the TS SDK's v2 client, and the TS v1+v2 router peer (our own test peer on
    # the SDK's v2 app API), which advertises `session: {}` without list/resume/close handlers
    "ts-v2-client": set(),
    "ts-router-agent-v2": {"session.list", "session.resume", "session.resume.bad_cursor", "session.close",
                           "session.close.cancels", "prompt.unknown_content", "state.requires_action",
                           "cancel.permission", "cancel.permission_withdrawn"},
}

# fault -> the rule it must fail (and whether that rule is a MUST, i.e. the exit status is 1)
AGENT_FAULTS = {
    "wrong_field_type": ("updates.valid", True),
    "missing_cancelled": ("cancel.cancelled", True),
    "stdout_noise": ("stdout.clean", True),
    "no_method_not_found": ("rpc.method_not_found", True),
    "dies_on_bad_line": ("rpc.survives_bad_line", True),
    "answers_notifications": ("rpc.notification_unanswered", True),
    "fs_unadvertised": ("capabilities.fs", True),
    "version_echo": ("init.version.newer", True),
    "bad_stop_reason": ("prompt.stop_reason", True),
    "no_load_replay": ("session.load", True),
    "numeric_id": ("jsonrpc.id", True),
    "set_mode_error": ("session.set_mode", True),
    "config_without_options": ("session.set_config_option", True),
    "update_unknown_tool_call": ("updates.tool_call_known", False),
    "line_limit_64k": ("stress.large_prompt", False),
    "lenient_only": ("messages.strict", False),
}
# v2 fault -> every rule the run fails (exactly: collateral failures are listed too)
AGENT_FAULTS_V2 = {
    "late_message_id": {"prompt.message_id"},
    "no_user_message": {"prompt.user_message"},
    "no_running": {"state.running", "state.requires_action"},
    "no_idle": {"state.idle", "prompt.text", "prompt.resource_link", "permission.allow", "permission.reject",
                "permission.cancelled", "cancel.cancelled", "cancel.permission", "session.close.cancels"},
    "cancel_end_turn": {"cancel.cancelled", "cancel.permission", "permission.cancelled", "session.close.cancels"},
    "waits_after_cancel": {"cancel.permission", "cancel.permission_withdrawn"},
    "resume_no_state": {"session.resume"},
    "elicits": {"capabilities.elicitation"},
    "close_no_idle": {"session.close.cancels"},
}
CLIENT_FAULTS_V2 = {
    "wrong_option": {"client.permission", "client.cancel.permission"},
    "allows_after_cancel": {"client.cancel.permission"},
    "image_prompt": {"client.prompt"},
    "relative_cwd": {"client.session_new"},
    "never_cancels": {"client.cancel.sent"},
    "logs_in": {"client.advertised_only"},
}
CLIENT_FAULTS = {
    "no_initialize": ("client.initialize_first", True),
    "relative_cwd": ("client.session_new", True),
    "image_prompt": ("client.prompt", True),
    "wrong_option": ("client.permission", True),
    "bad_permission_shape": ("client.permission", True),
    "no_method_not_found": ("client.method_not_found", True),
    "dies_on_unknown_variant": ("client.unknown_variant", False),
    "dies_on_unknown_field": ("client.unknown_fields", True),
    "line_limit_64k": ("client.large_update", False),
    "allows_after_cancel": ("client.cancel.permission", True),
    "stdin_noise": ("client.stdin.clean", True),
    "answers_notifications": ("client.notification_unanswered", True),
    "never_ends_cancelled_turn": ("client.cancel.ends", True),
}
CLIENT_SHORT = ("never_ends_cancelled_turn", "ignores_pending_permission")
"""Faults that make a step wait out --timeout (three times it for a client that never exits)."""


def conform(kind: str, command: list[str], out: Path, *options: str) -> tuple[int, dict[str, Any], str, Path]:
    report = out.with_suffix(".json")
    # run where the client announces a temporary cwd (conform client's fs checks put files there)
    result = subprocess.run([*ACPGEN, "conform", kind, "--json", str(report), "--junit", str(out.with_suffix(".xml")),
                             "--timeout", "30", *options, "--", *command],
                            capture_output=True, text=True, timeout=300, cwd=out.parent)
    assert report.is_file(), result.stderr
    return result.returncode, json.loads(report.read_text()), result.stdout, out.with_suffix(".xml")


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any], str, Path]]:
    """Every conform run of this module, eight at a time (each takes a few seconds, mostly waiting
    for the peer), the longest first: the fixture lasts about as long as its longest run."""
    out = tmp_path_factory.mktemp("conform")
    jobs: dict[str, tuple[str, list[str], tuple[str, ...]]] = {
        "example-agent": ("agent", [sys.executable, str(ROOT / "examples" / "agent.py")], ()),
        "example-client": ("client", [sys.executable, str(ROOT / "examples" / "client.py"), "--json"], ("--cancel-args=--cancel",)),
        "faulty-agent": ("agent", FAULTY_AGENT, ()),
        "faulty-client": ("client", FAULTY_CLIENT, ("--cancel-args=--cancel",)),
        "ts-agent": ("agent", ["node", str(PEERS / "ts_agent.mjs")], ()),
        # its cancel_request.honoured step waits out --timeout
        "py-agent": ("agent", [sys.executable, str(PEERS / "py_agent.py")], ("--timeout", "10")),
        "ts-client": ("client", ["node", str(PEERS / "ts_client.mjs")], ("--cancel-args=--cancel",)),
        "py-client": ("client", [sys.executable, str(PEERS / "py_client.py")], ("--cancel-args=--cancel",)),
        "v2-agent": ("agent", [sys.executable, str(ROOT / "examples" / "agent_v2.py")], ("--protocol", "v2")),
        "v1-agent-as-v2": ("agent", [sys.executable, str(ROOT / "examples" / "agent.py")], ("--protocol", "v2")),
        "router-as-v1": ("agent", [sys.executable, str(ROOT / "examples" / "agent_router.py")], ()),
        "router-as-v2": ("agent", [sys.executable, str(ROOT / "examples" / "agent_router.py")], ("--protocol", "v2")),
        "v2-client": ("client", [sys.executable, str(ROOT / "examples" / "client_versions.py"), "--protocol", "2", "--json"],
                      ("--protocol", "v2", "--cancel-args=--cancel")),
        "ts-v2-client": ("client", ["node", str(PEERS / "ts_v2_client.mjs")], ("--protocol", "v2", "--cancel-args=--cancel")),
        # its pending permission is never given up after session/cancel: that step waits out --timeout
        "ts-router-agent-v2": ("agent", ["node", str(PEERS / "ts_router_agent.mjs")], ("--protocol", "v2", "--timeout", "10")),
        "faulty-agent-v2": ("agent", FAULTY_AGENT_V2, ("--protocol", "v2")),
        "faulty-client-v2": ("client", FAULTY_CLIENT_V2, ("--protocol", "v2", "--cancel-args=--cancel")),
    }
    # A fault that makes a step wait out --timeout (a turn that never ends waits at each step; a
    # prompt answered only after its turn; a cancel never sent; an agent that never exits): a shorter
    # one keeps the run short, and the step fails all the same.
    short = ("--timeout", "6")
    for fault in AGENT_FAULTS_V2:
        wait = short if fault in ("no_idle", "waits_after_cancel", "late_message_id") else ()
        jobs[f"agent-v2:{fault}"] = ("agent", [*FAULTY_AGENT_V2, fault], ("--protocol", "v2", *wait))
    for fault in CLIENT_FAULTS_V2:
        wait = short if fault == "never_cancels" else ()
        jobs[f"client-v2:{fault}"] = ("client", [*FAULTY_CLIENT_V2, "--fault", fault],
                                      ("--protocol", "v2", "--cancel-args=--cancel", *wait))
    for fault in AGENT_FAULTS:
        jobs[f"agent:{fault}"] = ("agent", [*FAULTY_AGENT, fault], ())
    for fault in [*CLIENT_FAULTS, "ignores_pending_permission", "refuses_outside_cwd"]:
        wait = short if fault in CLIENT_SHORT else ()
        jobs[f"client:{fault}"] = ("client", [*FAULTY_CLIENT, "--fault", fault], ("--cancel-args=--cancel", *wait))
    # The longest runs start first (they are mostly waiting), so none of them starts last.
    order = [*LONGEST_FIRST, *(name for name in jobs if name not in LONGEST_FIRST)]
    with ThreadPoolExecutor(8) as pool:
        futures = {name: pool.submit(conform, *jobs[name][:2], out / name.replace(":", "-"), *jobs[name][2])
                   for name in order}
        return {name: future.result() for name, future in futures.items()}


# the runs that take longest (measured), longest first
LONGEST_FIRST = ("agent-v2:no_idle", "ts-router-agent-v2", "py-agent", "agent-v2:late_message_id",
                 "agent-v2:waits_after_cancel", "client-v2:never_cancels", "client:never_ends_cancelled_turn",
                 "client:ignores_pending_permission", "v2-agent",
                 "router-as-v2", "py-client", "example-agent", "faulty-agent-v2", "router-as-v1", "faulty-agent")


def test_example_agent_passes_every_must(runs: dict[str, Any]) -> None:
    code, report, table, _ = runs["example-agent"]
    assert code == 0 and report["ok"], table
    got = statuses(report)
    # What the example agent advertises is exercised, not skipped.
    for rule in ("session.load", "session.list", "session.close", "auth.advertised", "cancel.cancelled",
                 "permission.allow", "permission.reject", "permission.cancelled", "rpc.parse_error"):
        assert got[rule] == "pass", (rule, table)
    assert got["prompt.image"] == "skipped"  # not advertised


def test_example_client_passes_every_must(runs: dict[str, Any]) -> None:
    code, report, table, _ = runs["example-client"]
    assert code == 0 and report["ok"], table
    got = statuses(report)
    for rule in ("client.permission", "client.fs.read", "client.fs.write", "client.cancel.permission",
                 "client.large_update", "client.unknown_variant", "client.method_not_found"):
        assert got[rule] == "pass", (rule, table)


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_the_faulty_peers_without_a_fault_pass(runs: dict[str, Any], kind: str) -> None:
    code, report, table, _ = runs[f"faulty-{kind}"]
    assert code == 0, table
    assert not [c for c in report["checks"] if c["status"] == "fail"], table


@pytest.mark.parametrize("fault", sorted(AGENT_FAULTS))
def test_conform_agent_catches_each_fault(runs: dict[str, Any], fault: str) -> None:
    rule, must = AGENT_FAULTS[fault]
    code, report, table, _ = runs[f"agent:{fault}"]
    assert statuses(report)[rule] == "fail", table
    assert code == (1 if must else 0), table


@pytest.mark.parametrize("fault", sorted(CLIENT_FAULTS))
def test_conform_client_catches_each_fault(runs: dict[str, Any], fault: str) -> None:
    rule, must = CLIENT_FAULTS[fault]
    code, report, table, _ = runs[f"client:{fault}"]
    assert statuses(report)[rule] == "fail", table
    if must:
        assert code == 1, table
    else:  # a SHOULD fault: the run still fails when it takes a MUST step down with it
        assert report["ok"] == (code == 0), table


def test_a_pending_permission_never_answered_does_not_confound_the_late_update(runs: dict[str, Any]) -> None:
    # the fake agent waited on the unanswered permission before the late update: now the late update
    # and its ping follow the cancel whatever the permission answer, and only cancel.permission fails
    code, report, table, _ = runs["client:ignores_pending_permission"]
    got = statuses(report)
    assert {r for r, s in got.items() if s == "fail"} == {"client.cancel.permission"}, table
    assert got["client.cancel.late_update"] == "pass" and got["client.cancel.ends"] == "pass", table
    assert code == 1


def test_a_client_refusing_files_outside_its_cwd_passes_the_fs_checks(runs: dict[str, Any]) -> None:
    # the fake agent read a file outside the client's announced cwd (acpx refuses those: 3 false FAILs);
    # it now reads and writes inside that cwd, and removes what it put there
    code, report, table, _ = runs["client:refuses_outside_cwd"]
    got = statuses(report)
    assert code == 0 and not [r for r, s in got.items() if s == "fail"], table
    for rule in ("client.fs.read", "client.fs.read.content", "client.fs.write"):
        assert got[rule] == "pass", (rule, table)
    out = Path(runs["client:refuses_outside_cwd"][3]).parent
    assert not list(out.glob(".acpgen-conform-*")), "the fake agent's files stay behind"


def test_reports_agree_and_name_their_rules(runs: dict[str, Any]) -> None:
    _, report, table, junit = runs["agent:missing_cancelled"]
    failed = {c["id"] for c in report["checks"] if c["status"] == "fail"}
    assert "cancel.cancelled" in failed
    for check in report["checks"]:
        assert check["level"] in ("MUST", "SHOULD") and check["section"] and check["rule"]
        assert check["id"] in table
    assert "FAIL  MUST    cancel.cancelled" in table
    suite = ET.parse(junit).getroot()
    assert int(suite.get("failures", -1)) == report["counts"]["fail"] == len(failed)
    assert int(suite.get("skipped", -1)) == report["counts"]["skipped"]
    assert {case.get("name") for case in suite if case.find("failure") is not None} == {
        f"{c['id']} ({c['level']})" for c in report["checks"] if c["status"] == "fail"}


def test_conform_agent_v2_scripts_the_prompt_lifecycle_and_the_example_passes(runs: dict[str, Any]) -> None:
    code, report, table, _ = runs["v2-agent"]
    assert code == 0 and report["ok"] and report["schema"] == "acp_v2", table
    got = statuses(report)
    assert not [rule for rule, status in got.items() if status == "fail"], table
    # every prompt-turn rule has its v2 version, and what the example advertises is exercised
    for rule in ("prompt.text", "prompt.resource_link", "prompt.unknown_content", "prompt.message_id",
                 "prompt.user_message", "state.running", "state.idle", "state.resumes", "state.requires_action",
                 "state.stop_reason", "cancel.cancelled", "cancel.permission", "cancel.permission_withdrawn",
                 "permission.allow", "permission.reject", "permission.cancelled", "capabilities.elicitation",
                 "capabilities.auth_terminal", "session.list", "session.list.contains", "session.resume",
                 "session.resume.bad_cursor", "session.close", "session.close.cancels", "session.delete",
                 "auth.advertised", "auth.logout", "cancel_request.answered", "rpc.parse_error", "messages.valid"):
        assert got[rule] == "pass", (rule, table)
    # skipped only for what the example does not advertise
    skipped = {rule for rule, status in got.items() if status == "skipped"}
    assert skipped == {"prompt.image", "prompt.audio", "prompt.resource"}, table
    # the v1-only rules are not in a v2 report
    assert "prompt.stop_reason" not in got and "capabilities.fs" not in got and "session.load" not in got
    # A v1 agent asked for v2 answers version 1, as an agent without v2 should: "agent speaks v1"
    # (could not run, exit 3), not failures of v2 rules it never claimed.
    code, report, table, _ = runs["v1-agent-as-v2"]
    assert code == 3 and "speaks v1" in report["stopped"], table
    assert not [c for c in report["checks"] if c["status"] == "fail"], table


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_v1_v2_router_passes_every_must_in_either_version(runs: dict[str, Any], version: str) -> None:
    # Asked for 0 (v1) or 1 (v2) it answers version 1; asked for version + 1000 in v1's shape, the
    # v1 agent answers 1 (v2 cannot read v1's params) and in v2's shape the v2 agent answers 2.
    code, report, table, _ = runs[f"router-as-{version}"]
    assert code == 0 and report["ok"], table
    got = statuses(report)
    for rule in ("init.version.requested", "init.version.older", "init.version.newer", "init.version.invalid"):
        assert got[rule] == "pass", (rule, table)


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_the_faulty_v2_peers_without_a_fault_pass(runs: dict[str, Any], kind: str) -> None:
    code, report, table, _ = runs[f"faulty-{kind}-v2"]
    assert code == 0, table
    assert not [c for c in report["checks"] if c["status"] == "fail"], table


@pytest.mark.parametrize("fault", sorted(AGENT_FAULTS_V2))
def test_conform_agent_v2_catches_each_fault(runs: dict[str, Any], fault: str) -> None:
    code, report, table, _ = runs[f"agent-v2:{fault}"]
    failed = {c["id"] for c in report["checks"] if c["status"] == "fail"}
    assert failed == AGENT_FAULTS_V2[fault], table
    assert code == 1, table


def test_conform_client_v2_passes_the_example_client(runs: dict[str, Any]) -> None:
    code, report, table, _ = runs["v2-client"]
    assert code == 0 and report["ok"] and report["schema"] == "acp_v2", table
    got = statuses(report)
    for rule in ("client.initialize", "client.prompt", "client.unknown_fields", "client.unknown_variant",
                 "client.unknown_enum", "client.large_update", "client.method_not_found", "client.permission",
                 "client.turn", "client.cancel.sent", "client.cancel.permission", "client.cancel.late_update",
                 "client.messages.valid", "client.advertised_only"):
        assert got[rule] == "pass", (rule, table)
    assert {r for r, s in got.items() if s == "skipped"} == {
        "client.fs.read", "client.fs.read.content", "client.fs.write", "client.terminal"}, table


@pytest.mark.parametrize("fault", sorted(CLIENT_FAULTS_V2))
def test_conform_client_v2_catches_each_fault(runs: dict[str, Any], fault: str) -> None:
    code, report, table, _ = runs[f"client-v2:{fault}"]
    failed = {c["id"] for c in report["checks"] if c["status"] == "fail"}
    assert failed == CLIENT_FAULTS_V2[fault], table
    assert code == 1, table


@pytest.mark.parametrize("peer", sorted(SDK_FAILURES))
def test_the_sdk_peers_fail_what_the_readme_says(runs: dict[str, Any], peer: str) -> None:
    code, report, table, _ = runs[peer]
    failed = {c["id"] for c in report["checks"] if c["status"] == "fail"}
    assert failed == SDK_FAILURES[peer], table
    must = any(c["status"] == "fail" and c["level"] == "MUST" for c in report["checks"])
    assert code == (1 if must else 0)
