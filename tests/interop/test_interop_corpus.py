"""Every message recorded from the interop runs (tests/fixtures/interop/v1.jsonl, made by
scripts/record_interop.py from the official SDKs' traces) decodes with acp_v1: params by method,
results by the method of the request they answer, and decoding is stable under re-encoding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import acp_v1 as acp

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "interop" / "v1.jsonl"


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def test_recorded_interop_messages_decode() -> None:
    records = load()
    assert len(records) > 100
    requests: dict[tuple[str, str, object], str] = {}
    counts = {"params": 0, "results": 0, "errors": 0}
    for record in records:
        message, run, direction = record["message"], record["run"], record["direction"]
        table = acp.AGENT_METHODS if direction == "client->agent" else acp.CLIENT_METHODS
        if "method" in message:
            info = table[message["method"]]
            value = info.decode_params(message.get("params"))
            assert info.decode_params(acp.encode(value)) == value, record
            counts["params"] += 1
            if "id" in message:
                requests[(run, direction, message["id"])] = message["method"]
        elif "error" in message:
            assert isinstance(message["error"]["code"], int)
            counts["errors"] += 1
        else:
            back = "agent->client" if direction == "client->agent" else "client->agent"
            method = requests[(run, back, message["id"])]
            info = (acp.AGENT_METHODS if back == "client->agent" else acp.CLIENT_METHODS)[method]
            assert info.decode_result is not None
            value = info.decode_result(message["result"])
            assert info.decode_result(acp.encode(value)) == value, record
            counts["results"] += 1
    assert counts["params"] > 50 and counts["results"] > 30, counts
