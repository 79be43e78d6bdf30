"""Protocol v2 and the version router against the official Python SDK 1.0.0rc3 (tests/peers, in
.venv-sdk1), whose experimental v2 is built from spec tag schema-v2.0.0-alpha.5 while acpgen's
acp_v2 comes from the TypeScript SDK 2.4.0 draft:

- the SDK's v2 client (py_v2_client.py) drives examples/agent_v2.py and examples/agent_router.py
  through a turn and a cancelled turn; pydantic validates everything it receives;
- our clients (examples/client_versions.py) drive the SDK's `AgentProtocolRouter`
  (py_router_agent.py) as v1, as v2 and with "try v2, fall back to v1".

The v1 peers of this SDK run in test_interop.py beside those of 0.12.1."""

from __future__ import annotations

import sys

import pytest

from tests.interop.test_interop import EXAMPLES, PEERS, SDK1_PYTHON, peers_installed, run_peer  # noqa: F401
from tests.interop.test_interop_v2 import V1_TURN, V2_CANCELLED, V2_TURN, clean

SDK1_V2_CLIENT = [str(SDK1_PYTHON), str(PEERS / "py_v2_client.py")]
SDK1_ROUTER_AGENT = [str(SDK1_PYTHON), str(PEERS / "py_router_agent.py")]
OUR_AGENTS = {"v2": [sys.executable, str(EXAMPLES / "agent_v2.py")],
              "router": [sys.executable, str(EXAMPLES / "agent_router.py")]}
OUR_CLIENT = [sys.executable, str(EXAMPLES / "client_versions.py"), "--json"]
SDK1_V2_TURN = ["user_message", "state_update:running", "agent_message_chunk", "state_update:idle"]


@pytest.mark.parametrize("agent", sorted(OUR_AGENTS))
def test_sdk1_v2_client_drives_our_agent_through_a_turn(agent: str) -> None:
    rc, summary, stderr = run_peer([*SDK1_V2_CLIENT, *OUR_AGENTS[agent]])
    assert summary["errors"] == [], stderr
    assert (summary["protocolVersion"], summary["stopReason"]) == (2, "end_turn")
    assert summary["messageId"].startswith("msg-")
    assert (summary["updates"], summary["permissionRequests"]) == (V2_TURN, 1)
    assert rc == 0
    clean(stderr)


@pytest.mark.parametrize("agent", sorted(OUR_AGENTS))
def test_sdk1_v2_client_cancels_our_agents_turn(agent: str) -> None:
    rc, summary, stderr = run_peer([*SDK1_V2_CLIENT, "--cancel", *OUR_AGENTS[agent]], env={"ACP_EXAMPLE_PAUSE_S": "2"})
    assert summary["errors"] == [], stderr
    assert (summary["stopReason"], summary["updates"]) == ("cancelled", V2_CANCELLED)
    assert rc == 0
    clean(stderr)


@pytest.mark.parametrize(("protocol", "version"), [("1", 1), ("2", 2), ("auto", 2)])
def test_our_clients_drive_the_sdk1_agent_protocol_router(protocol: str, version: int) -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--protocol", protocol, *SDK1_ROUTER_AGENT])
    assert summary["errors"] == [], stderr
    assert (summary["protocolVersion"], summary["tried"], summary["stopReason"]) == (version, [version], "end_turn")
    assert summary["updates"] == (SDK1_V2_TURN if version == 2 else V1_TURN)
    assert f"routed v{version} (requested {version})" in stderr  # the SDK router's own choice
    assert rc == 0


def test_try_v2_then_fall_back_to_v1_on_a_sdk1_router_with_only_v1() -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--protocol", "auto", *SDK1_ROUTER_AGENT, "--only", "v1"])
    assert summary["errors"] == [], stderr
    assert (summary["protocolVersion"], summary["stopReason"], summary["updates"]) == (1, "end_turn", V1_TURN)
    assert rc == 0
