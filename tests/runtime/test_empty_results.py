"""Empty results: a request whose result is an object with no required field decodes `null` as `{}`
(peers send either; the Python SDK 0.12.1 answers an unimplemented `terminal/wait_for_exit` with
`null`), and our side sends `{}`. Results with required fields, and extension results, are unchanged."""

from __future__ import annotations

import asyncio
import importlib
import json
import socket
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import acp_v1
import pytest

from tests.runtime_support import RawPeer, duplex

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"acp_v0_4": "v0_4", "acp_v1": "v1", "acp_v2": "v2"}


def run(body: Callable[[], Awaitable[None]], timeout: float = 20.0) -> None:
    asyncio.run(asyncio.wait_for(body(), timeout))


def schema_defs(version: str) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for name in ("schema.json", "schema.unstable.json"):
        path = ROOT / "schema" / version / name
        if path.exists():
            defs.update(json.loads(path.read_text())["$defs"])
    return defs


def empty_by_schema(definition: dict[str, Any]) -> bool:
    """`{}` is a valid value of this `$defs` entry: a plain object with nothing required."""
    return (
        definition.get("type") == "object"
        and not definition.get("required")
        and not any(key in definition for key in ("oneOf", "anyOf", "allOf", "$ref"))
    )


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_null_decodes_as_empty_exactly_for_results_with_nothing_required(package: str) -> None:
    pkg = importlib.import_module(package)
    defs = schema_defs(PACKAGES[package])
    empty, strict = set(), set()
    for info in pkg.METHODS:
        if info.notification:
            continue
        assert info.result_def is not None and info.decode_result is not None
        definition = defs[info.result_def]
        assert info.empty_result == empty_by_schema(definition), info.method
        if not any(key in definition for key in ("type", "oneOf", "anyOf", "allOf", "$ref", "properties")):
            assert info.decode_result(None) is None  # any JSON (`proxy/successor`): passed through as is
        elif empty_by_schema(definition):
            empty.add(info.method)
            assert info.decode_result(None) == info.decode_result({}) == info.result()
            with pytest.raises(pkg.ValidationError):
                info.decode_result([])  # only null stands for `{}`
        else:
            strict.add(info.method)
            with pytest.raises(pkg.ValidationError):
                info.decode_result(None)
    # Both kinds exist in every version (not a vacuous pass).
    assert {"session/new", "session/prompt", "initialize"} <= strict
    assert len(empty) >= 7, empty
    assert ("authenticate" in empty) or ("auth/login" in empty)


def test_v1_empty_results_are_the_ones_the_typescript_sdk_maps_to_an_empty_object() -> None:
    # The TS SDK 2.4.0 turns a missing v1 result into `{}` for these methods (`emptyObjectResponse`);
    # each is one of ours. Ours also cover session/resume and terminal/wait_for_exit, whose results
    # have nothing required either.
    ts = {"session/load", "session/delete", "session/archive", "session/unarchive", "session/close",
          "session/set_mode", "authenticate", "providers/set", "providers/disable", "logout",
          "fs/write_text_file", "terminal/release", "terminal/kill"}
    ours = {m.method for m in acp_v1.METHODS if m.decode_result is not None and _takes_null(m.decode_result)}
    assert ts <= ours
    assert ours - ts == {"session/resume", "terminal/wait_for_exit", "proxy/successor"}  # the last: any JSON


def _takes_null(decode: Callable[[object], object]) -> bool:
    try:
        decode(None)
    except acp_v1.ValidationError:
        return False
    return True


# -- over a connection ------------------------------------------------------------------------


def client_with_raw_peer() -> tuple[acp_v1.ClientSideConnection, RawPeer]:
    (ours_in, ours_out), (peer_in, peer_out) = duplex()
    conn = acp_v1.ClientSideConnection(acp_v1.Client(), ours_in, ours_out)
    return conn, RawPeer(peer_in, peer_out)


def test_a_null_result_reaches_the_caller_as_the_empty_response() -> None:
    async def body() -> None:
        conn, peer = client_with_raw_peer()
        call = asyncio.ensure_future(conn.authenticate(method_id="token"))
        sent = await peer.recv()
        assert sent["method"] == "authenticate"
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": None})
        assert await call == acp_v1.AuthenticateResponse()

        call = asyncio.ensure_future(conn.session_set_mode(session_id="s", mode_id="m"))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"_meta": {"k": 1}}})
        assert await call == acp_v1.SetSessionModeResponse(meta={"k": 1})

        # A result with a required field is still checked: null is not a session.
        call = asyncio.ensure_future(conn.session_new(cwd="/", mcp_servers=[]))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": None})
        with pytest.raises(acp_v1.ValidationError, match="expected an object, got null"):
            await call

        # Extension results are raw JSON: null stays null.
        call = asyncio.ensure_future(conn.ext_method("_acme/ping", {}))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": None})
        assert await call is None
        await conn.close()

    run(body)


class EmptyAgent(acp_v1.Agent):
    async def authenticate(self, params: acp_v1.AuthenticateRequest) -> acp_v1.AuthenticateResponse:
        return acp_v1.AuthenticateResponse()

    async def logout(self, params: acp_v1.LogoutRequest) -> acp_v1.LogoutResponse:
        return None  # type: ignore[return-value]  # what an untyped handler often does

    async def session_set_mode(self, params: acp_v1.SetSessionModeRequest) -> acp_v1.SetSessionModeResponse:
        return acp_v1.SetSessionModeResponse()


def test_our_side_sends_an_empty_result_as_an_empty_object() -> None:
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        conn = acp_v1.AgentSideConnection(EmptyAgent(), ours_in, ours_out)
        peer = RawPeer(peer_in, peer_out)
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "authenticate", "params": {"methodId": "token"}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "result": {}}
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "session/set_mode",
                   "params": {"sessionId": "s", "modeId": "m"}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "logout", "params": {}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 3, "result": {}}  # None is answered {}, not null
        peer.close()
        await conn.wait_closed()

    run(body)


# -- against the official Python SDK, which answers with null -----------------------------------


class SdkClientWithoutTerminals:
    """An SDK client that implements no terminal methods: the SDK answers them itself."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def test_the_python_sdks_null_answer_decodes() -> None:
    sdk = pytest.importorskip("acp")
    from acp.connection import StreamDirection, StreamEvent

    async def body() -> None:
        answers: list[dict[str, Any]] = []

        def observe(event: StreamEvent) -> None:
            if event.direction == StreamDirection.OUTGOING and "method" not in event.message:
                answers.append(event.message)

        left, right = socket.socketpair()
        sdk_reader, sdk_writer = await asyncio.open_connection(sock=left)
        our_reader, our_writer = await asyncio.open_connection(sock=right)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            sdk_conn = sdk.connect_to_agent(SdkClientWithoutTerminals(), sdk_writer, sdk_reader, observers=[observe])
        ours = acp_v1.AgentSideConnection(acp_v1.Agent(), our_reader, our_writer)
        try:
            result = await ours.terminal_wait_for_exit(session_id="s", terminal_id="t")
            assert result == acp_v1.WaitForTerminalExitResponse()
            assert [a.get("result", "absent") for a in answers] == [None]  # the SDK did send null
            released = await ours.terminal_release(session_id="s", terminal_id="t")
            assert released == acp_v1.ReleaseTerminalResponse()
            assert answers[-1]["result"] == {}  # and {} where it normalises
        finally:
            await ours.close()
            close = getattr(sdk_conn, "close", None)
            if close is not None:
                await close()

    run(body)
