"""The agent side of the load benchmark, on stdin/stdout: `acpgen` (generated acp_v1) or `sdk` (the
official Python SDK), each with its own defaults. `initialize` answers at once; `session/prompt`
never returns when the prompt's text is "wait", else answers `end_turn` (after looking at the
text, so a large prompt is decoded in full).

    python benchmarks/load_agent.py acpgen|sdk
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def acpgen_agent() -> None:
    sys.path.insert(0, str(ROOT / "generated"))
    import acp_v1 as acp

    class LoadAgent(acp.Agent):
        async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
            return acp.InitializeResponse(protocol_version=1)

        async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
            first = params.prompt[0]
            if isinstance(first, acp.TextContentBlock) and first.text == "wait":
                await asyncio.Event().wait()
            return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    asyncio.run(acp.run_agent(LoadAgent()))


def sdk_agent() -> None:
    from acp import InitializeResponse, PromptResponse, run_agent

    class LoadAgent:
        def on_connect(self, conn: Any) -> None:
            pass

        async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
            return InitializeResponse(protocol_version=1)

        async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
            if getattr(prompt[0], "text", None) == "wait":
                await asyncio.Event().wait()
            return PromptResponse(stop_reason="end_turn")

    asyncio.run(run_agent(LoadAgent()))


if __name__ == "__main__":
    {"acpgen": acpgen_agent, "sdk": sdk_agent}[sys.argv[1]]()
