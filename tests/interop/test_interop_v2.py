"""Protocol v2 and the version router against the pinned TypeScript SDK 2.4.0 (tests/peers).

- the TS v2 client drives examples/agent_v2.py through every stable agent method, a full turn and
  a cancelled one; the TS v1 client gets -32022 from it;
- examples/client_versions.py (our v2 client) drives a TS v2 agent;
- examples/agent_router.py (our v1 and v2 agents behind our router) is driven by the TS v1 and
  v2 clients and by our v1 and v2 clients;
- our v1 and v2 clients drive a TS agent behind `AgentProtocolRouter`, and our "try v2, fall back
  to v1" client finds v1 on a TS v1 agent and on our v1 agent.

Every message is validated by both sides: the TS peers run the SDK's zod schemas over everything
they receive (their summaries list any failure in `errors`), and our side decodes everything it
receives with the generated codecs (a message that does not decode is logged and lands in our
client's `errors`, or on our agent's stderr, which must stay free of our package names)."""

from __future__ import annotations

import sys

import pytest

from tests.interop.test_interop import EXAMPLES, PEERS, peers_installed, run_peer  # noqa: F401

TS_V1_CLIENT = ["node", str(PEERS / "ts_client.mjs")]
TS_V2_CLIENT = ["node", str(PEERS / "ts_v2_client.mjs")]
TS_ROUTER_AGENT = ["node", str(PEERS / "ts_router_agent.mjs")]
OUR_V2_AGENT = [sys.executable, str(EXAMPLES / "agent_v2.py")]
OUR_V1_AGENT = [sys.executable, str(EXAMPLES / "agent.py")]
OUR_ROUTER = [sys.executable, str(EXAMPLES / "agent_router.py")]
OUR_CLIENT = [sys.executable, str(EXAMPLES / "client_versions.py"), "--json"]

V2_TURN = ["user_message", "state_update:running", "agent_message_chunk", "tool_call_update",
           "state_update:requires_action", "state_update:running", "tool_call_update", "agent_message_chunk",
           "state_update:idle"]
V2_CANCELLED = ["user_message", "state_update:running", "agent_message_chunk", "state_update:idle"]
V1_TURN = ["agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
TS_V2_TURN = ["user_message", "state_update:running", "agent_message_chunk", "tool_call_update", "tool_call_update",
              "agent_message_chunk", "state_update:idle"]
STABLE_METHODS = {"auth/login": "ok", "session/list": "ok", "session/set_config_option": "ok",
                  "tool_call/cancel": -32602, "terminal/cancel": -32602, "session/resume": "ok",
                  "session/close": "ok", "session/delete": "ok", "auth/logout": "ok"}
PAUSE = {"ACP_EXAMPLE_PAUSE_S": "2"}


def clean(stderr: str) -> None:
    assert "acp_v1" not in stderr and "acp_v2" not in stderr and "Traceback" not in stderr, stderr


@pytest.mark.parametrize("agent", ["v2", "router"])
def test_ts_v2_client_drives_our_agent_through_every_stable_method(agent: str) -> None:
    rc, summary, stderr = run_peer([*TS_V2_CLIENT, "--all-methods", *(OUR_V2_AGENT if agent == "v2" else OUR_ROUTER)])
    assert summary["errors"] == [], stderr
    assert (summary["protocolVersion"], summary["stopReason"]) == (2, "end_turn")
    assert summary["messageId"].startswith("msg-")
    # The turn, then the state update session/resume must send before answering.
    assert summary["updates"] == [*V2_TURN, "state_update:idle"]
    assert summary["permissionRequests"] == 1
    assert summary["methods"] == STABLE_METHODS
    assert rc == 0
    clean(stderr)


@pytest.mark.parametrize("agent", ["v2", "router"])
def test_ts_v2_client_cancels_our_agents_turn(agent: str) -> None:
    rc, summary, stderr = run_peer([*TS_V2_CLIENT, "--cancel", *(OUR_V2_AGENT if agent == "v2" else OUR_ROUTER)], env=PAUSE)
    # The prompt was answered with its messageId (no -32800) and the turn ended idle/cancelled.
    assert summary["errors"] == [], stderr
    assert summary["messageId"].startswith("msg-")
    assert (summary["stopReason"], summary["updates"]) == ("cancelled", V2_CANCELLED)
    assert rc == 0
    clean(stderr)


def test_ts_v1_client_gets_32022_from_our_v2_only_agent() -> None:
    rc, summary, stderr = run_peer([*TS_V1_CLIENT, *OUR_V2_AGENT])
    assert summary["errors"] == ['RequestError: Unsupported protocol version {"requested":1,"supported":[2]}']
    assert summary["updates"] == [] and rc == 1
    clean(stderr)


@pytest.mark.parametrize("cancel", [False, True])
def test_ts_v1_client_drives_our_router(cancel: bool) -> None:
    rc, summary, stderr = run_peer([*TS_V1_CLIENT, *(["--cancel"] if cancel else []), *OUR_ROUTER], env=PAUSE if cancel else None)
    assert summary["errors"] == [], stderr
    assert (summary["stopReason"], summary["updates"]) == (("cancelled", V1_TURN[:1]) if cancel else ("end_turn", V1_TURN))
    assert rc == 0
    clean(stderr)


@pytest.mark.parametrize(("protocol", "cancel"), [("1", False), ("2", False), ("auto", False), ("2", True), ("1", True)])
def test_our_clients_drive_our_router(protocol: str, cancel: bool) -> None:
    command = [*OUR_CLIENT, "--protocol", protocol, *(["--cancel"] if cancel else []), *OUR_ROUTER]
    rc, summary, stderr = run_peer(command, env=PAUSE if cancel else None)
    assert summary["errors"] == [], stderr
    version = 1 if protocol == "1" else 2
    assert summary["protocolVersion"] == version and summary["tried"] == [version]
    if cancel:
        assert (summary["stopReason"], summary["updates"]) == ("cancelled", V2_CANCELLED if version == 2 else V1_TURN[:1])
    else:
        assert (summary["stopReason"], summary["updates"]) == ("end_turn", V2_TURN if version == 2 else V1_TURN)
    assert rc == 0
    clean(stderr)


@pytest.mark.parametrize(("protocol", "version"), [("1", 1), ("2", 2), ("auto", 2)])
def test_our_clients_drive_a_ts_agent_behind_agent_protocol_router(protocol: str, version: int) -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--protocol", protocol, *TS_ROUTER_AGENT])
    assert summary["errors"] == [], stderr
    assert (summary["protocolVersion"], summary["stopReason"]) == (version, "end_turn")
    assert summary["updates"] == (TS_V2_TURN if version == 2 else V1_TURN)
    assert f"routed v{version} (requested {version})" in stderr  # the TS router's own choice
    assert "invalid" not in stderr and rc == 0


@pytest.mark.parametrize("cancel", [False, True])
def test_our_v2_client_drives_a_ts_v2_agent(cancel: bool) -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--protocol", "2", *(["--cancel"] if cancel else []),
                                    *TS_ROUTER_AGENT, "--only", "v2"])
    assert summary["errors"] == [], stderr
    assert summary["messageId"].startswith("ts2-user-")
    if cancel:
        assert (summary["stopReason"], summary["updates"]) == ("cancelled", V2_CANCELLED)
    else:
        assert (summary["stopReason"], summary["updates"], summary["permissionRequests"]) == ("end_turn", TS_V2_TURN, 1)
    assert "invalid" not in stderr and rc == 0


def test_ts_v2_client_drives_a_ts_agent_behind_the_router() -> None:
    # The peers agree with each other, so a failure in the tests above is ours, not theirs.
    rc, summary, stderr = run_peer([*TS_V2_CLIENT, *TS_ROUTER_AGENT])
    assert (rc, summary["errors"], summary["stopReason"], summary["updates"]) == (0, [], "end_turn", TS_V2_TURN), stderr


@pytest.mark.parametrize("agent", ["ts", "ours"])
def test_try_v2_then_fall_back_to_v1(agent: str) -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, *([*TS_ROUTER_AGENT, "--only", "v1"] if agent == "ts" else OUR_V1_AGENT)])
    assert summary["errors"] == [], stderr
    assert (summary["protocolVersion"], summary["tried"], summary["stopReason"]) == (1, [2], "end_turn")
    assert summary["updates"] == V1_TURN
    assert rc == 0


def test_a_v1_only_client_is_refused_by_a_ts_v2_agent() -> None:
    rc, summary, _ = run_peer([*OUR_CLIENT, "--protocol", "1", *TS_ROUTER_AGENT, "--only", "v2"])
    assert rc == 1 and summary["protocolVersion"] is None
    assert summary["errors"] == ["NegotiationError: the agent refused protocol version 1: {'code': -32022, "
                                 "'message': 'Unsupported protocol version', 'data': {'requested': 1, 'supported': [2]}}"]
