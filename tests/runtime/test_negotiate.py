"""`negotiate` (the client side of version negotiation) against scripted agents over in-memory
pipes: one `initialize` per connection unless the answer is an error, what each answer leads to."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import acp_v1
import acp_v2
import pytest
from acp_v2.router import NegotiationError, negotiate

from tests.runtime.test_runtime import run
from tests.runtime_support import RawPeer, duplex

V1_RESULT = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
V2_RESULT = {"protocolVersion": 2, "info": {"name": "agent", "version": "1"}, "capabilities": {}}


def routes(versions: tuple[int, ...]) -> list[Any]:
    every = {
        2: acp_v2.client_route(acp_v2.Client(), acp_v2.InitializeRequest(
            protocol_version=2, info=acp_v2.Implementation(name="client", version="1"))),
        1: acp_v1.client_route(acp_v1.Client(), acp_v1.InitializeRequest(
            protocol_version=1, client_capabilities=acp_v1.ClientCapabilities())),
    }
    return [every[v] for v in versions]


async def scripted(answers: list[dict[str, Any]], versions: tuple[int, ...]) -> tuple[Any, list[dict[str, Any]]]:
    """Negotiates with an agent that answers each `initialize` with the next of `answers` (a
    `result` or an `error`); returns the outcome (or the exception) and the requests it received."""
    (client_in, client_out), (agent_in, agent_out) = duplex()
    agent = RawPeer(agent_in, agent_out)
    received: list[dict[str, Any]] = []

    async def serve() -> None:
        for answer in answers:
            request = await agent.recv()
            received.append(request)
            agent.send({"jsonrpc": "2.0", "id": request["id"], **answer})

    server = asyncio.ensure_future(serve())
    try:
        outcome: Any = await negotiate(routes(versions), client_in, client_out)
    except NegotiationError as exc:
        outcome = exc
    await asyncio.sleep(0.05)  # a second initialize, if one were sent, arrives meanwhile
    if not server.done():
        server.cancel()
    if not agent_in.at_eof() and agent_in._buffer:  # type: ignore[attr-defined]
        received.append({"unexpected": bytes(agent_in._buffer).decode()})  # type: ignore[attr-defined]
    if not isinstance(outcome, NegotiationError):
        await outcome.connection.close()
    return outcome, received


def negotiated(answers: list[dict[str, Any]], versions: tuple[int, ...] = (2, 1)) -> tuple[Any, list[dict[str, Any]]]:
    kept: list[tuple[Any, list[dict[str, Any]]]] = []

    async def body() -> None:
        kept.append(await scripted(answers, versions))

    run(body)
    return kept[0]


def test_a_v1_answer_to_v2_goes_on_as_v1_without_a_second_initialize() -> None:
    outcome, received = negotiated([{"result": V1_RESULT}])
    assert [r.get("method") for r in received] == ["initialize"]
    assert received[0]["params"]["protocolVersion"] == 2
    assert (outcome.version, outcome.tried) == (1, [2])
    assert isinstance(outcome.connection, acp_v1.ClientSideConnection)
    assert isinstance(outcome.initialize_result, acp_v1.InitializeResponse)


def test_a_v2_answer_is_v2() -> None:
    outcome, received = negotiated([{"result": V2_RESULT}])
    assert len(received) == 1 and outcome.version == 2
    assert isinstance(outcome.connection, acp_v2.ClientSideConnection)
    assert outcome.initialize_result.info.name == "agent"


def test_a_v2_claim_over_a_v1_result_goes_on_as_v1_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="acp_v2.router"):
        outcome, received = negotiated([{"result": {**V1_RESULT, "protocolVersion": 2}}])
    assert len(received) == 1 and (outcome.version, outcome.tried) == (1, [2])
    assert isinstance(outcome.initialize_result, acp_v1.InitializeResponse)
    assert [r.getMessage() for r in caplog.records] == [
        "the agent answered protocol version 2 with a result that does not read as one (as v2: info: "
        "required key is missing); going on in version 1, whose result it reads as"]


def test_an_answer_no_version_reads_is_an_error_naming_each_reading() -> None:
    # (v1's result reads nearly anything: its schema's leniency annotations default what is wrong)
    outcome, received = negotiated([{"result": {"protocolVersion": 2, "info": 7}}], versions=(2,))
    assert len(received) == 1 and isinstance(outcome, NegotiationError)
    assert str(outcome) == ("the agent answered protocol version 2 with an initialize result that no route reads "
                            "(as v2: info: expected an object, got an integer (7))")


def test_an_unknown_version_is_an_error() -> None:
    outcome, _ = negotiated([{"result": {**V2_RESULT, "protocolVersion": 7}}])
    assert isinstance(outcome, NegotiationError)
    assert str(outcome) == "the agent answered protocol version 7, which no route speaks"


def test_after_an_unsupported_version_error_it_asks_again_for_a_listed_version() -> None:
    refused = {"error": {"code": -32022, "message": "unsupported", "data": {"requested": 2, "supported": [1]}}}
    outcome, received = negotiated([refused, {"result": V1_RESULT}])
    assert [r["params"]["protocolVersion"] for r in received] == [2, 1]
    assert (outcome.version, outcome.tried) == (1, [2, 1])
