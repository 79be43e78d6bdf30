#!/usr/bin/env python3
"""The v2 client of examples/client_versions.py (`--protocol 2`) with one fault switched on, for
`acpgen conform client --protocol v2` to catch. Without a fault it is the example client.

    python faulty_client_v2.py [--fault NAME] [--cancel] AGENT_CMD [ARGS...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
spec = importlib.util.spec_from_file_location("example_client_versions", ROOT / "examples" / "client_versions.py")
assert spec is not None and spec.loader is not None
example: Any = importlib.util.module_from_spec(spec)
sys.modules["example_client_versions"] = example
spec.loader.exec_module(example)
acp = example.acp_v2

FAULTS = {
    "wrong_option": "selects a permission option that was not offered",
    "allows_after_cancel": "answers the pending permission request with allow after cancelling",
    "image_prompt": "sends an image block the agent did not advertise",
    "relative_cwd": "session/new with a relative cwd",
    "never_cancels": "asked to cancel, it never sends session/cancel",
    "logs_in": "calls auth/login though the agent advertised no auth methods",
}
parser = argparse.ArgumentParser()
parser.add_argument("--fault", default="", choices=["", *FAULTS])
parser.add_argument("--cancel", action="store_true")
parser.add_argument("command", nargs=argparse.REMAINDER)
ARGS = parser.parse_args()
FAULT = ARGS.fault
original_turn = example.v2_turn


class FaultyV2Client(example.ExampleV2Client):  # type: ignore[misc]
    def __init__(self, cancel: bool) -> None:
        super().__init__(cancel and FAULT != "never_cancels")

    async def session_request_permission(self, params: Any) -> Any:
        if FAULT == "wrong_option":
            return acp.RequestPermissionResponse(outcome=acp.SelectedRequestPermissionOutcome(option_id="not-offered"))
        if FAULT == "allows_after_cancel" and self.cancel_sent:
            return acp.RequestPermissionResponse(
                outcome=acp.SelectedRequestPermissionOutcome(option_id=params.options[0].option_id))
        return await super().session_request_permission(params)


async def faulty_turn(conn: Any, client: Any, args: argparse.Namespace) -> dict[str, object]:
    if FAULT in ("allows_after_cancel", "wrong_option"):
        conn.withdraw_on_cancel = False  # the runtime would answer `cancelled` for the faulty handler
    if FAULT == "relative_cwd":
        args.cwd = "relative/dir"
    if FAULT == "logs_in":
        with contextlib.suppress(acp.RequestError):  # the agent does not know it: calling it is the fault
            await conn.auth_login(acp.LoginAuthRequest(method_id="acpgen-guess"))
    if FAULT == "image_prompt":
        client.conn = conn
        session = await conn.session_new(acp.NewSessionRequest(cwd=args.cwd))
        await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=[
            acp.TextContentBlock(text=args.prompt), acp.ImageContentBlock(mime_type="image/png", data="iVBORw0KGgo=")]))
        await asyncio.wait_for(client.idle.wait(), args.timeout)
        return {"stopReason": client.stop_reason}
    result: dict[str, object] = await original_turn(conn, client, args)
    return result


example.ExampleV2Client = FaultyV2Client
example.v2_turn = faulty_turn
sys.argv = [sys.argv[0], "--protocol", "2", "--json", *(["--cancel"] if ARGS.cancel else []), *ARGS.command]
sys.exit(example.main())
