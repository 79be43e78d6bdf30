#!/usr/bin/env python3
"""A scripted stand-in for an LLM API on loopback, so that real agents run whole turns offline.

    python tests/peers/llm_standin.py [--port 0] [--text TEXT] [--log FILE]

Prints `PORT <n>` on stdout once it listens on 127.0.0.1, then serves until killed:
- `POST /v1/responses` (OpenAI Responses API, what codex uses): a streamed answer (SSE) of one
  assistant message with TEXT, `response.created` ... `response.completed`;
- `POST /v1/chat/completions` (Chat Completions, streamed or not): TEXT as the assistant's reply;
- `GET /v1/models`: one model, `standin`.
Every request's method, path and JSON body (truncated) is appended to --log as a JSON line, so a
test can see what the agent asked. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "standin"


class StandIn(BaseHTTPRequestHandler):
    text = "Hello from the stand-in model."
    log_file: str | None = None
    lock = threading.Lock()
    counter = 0
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the log file records requests
        pass

    def record(self, body: Any) -> None:
        if self.log_file is None:
            return
        if len(json.dumps(body, default=str)) > 20000:
            body = {"truncated": json.dumps(body, default=str)[:2000]}
        line = json.dumps({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body},
                          default=str)
        with self.lock, open(self.log_file, "a", encoding="utf-8") as out:
            out.write(line + "\n")

    def next_id(self) -> int:
        with self.lock:
            StandIn.counter += 1
            return StandIn.counter

    def read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        size = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(size) if size else b""

    def read_json(self) -> Any:
        raw = self.read_body()
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding in ("gzip", "deflate"):
            import zlib

            raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
        elif encoding:
            return {"unreadable": f"Content-Encoding {encoding}", "headers": dict(self.headers)}
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return {"unparsed": raw[:2000].decode("utf-8", "replace")}

    def send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, name: str | None, data: Any) -> None:
        head = f"event: {name}\n" if name else ""
        self.wfile.write(f"{head}data: {json.dumps(data) if not isinstance(data, str) else data}\n\n".encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        self.record(None)
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "standin"}]})
        else:
            self.send_json(404, {"error": {"message": f"no such path {self.path}"}})

    def do_POST(self) -> None:
        body = self.read_json()
        self.record(body)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/responses"):
            self.responses_api(body)
        elif path.endswith("/chat/completions"):
            self.chat_completions(body)
        else:
            self.send_json(404, {"error": {"message": f"no such path {self.path}"}})

    def responses_api(self, body: Any) -> None:
        n = self.next_id()
        response_id, item_id = f"resp_{n}", f"msg_{n}"
        model = body.get("model", MODEL) if isinstance(body, dict) else MODEL
        base: dict[str, Any] = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": model,
                "status": "in_progress", "output": []}
        item = {"id": item_id, "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": self.text, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        self.start_sse()
        self.event("response.created", {"type": "response.created", "response": base})
        self.event("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                  "item": {**item, "status": "in_progress", "content": []}})
        self.event("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item_id,
                                                  "output_index": 0, "content_index": 0, "delta": self.text})
        self.event("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item})
        self.event("response.completed", {"type": "response.completed",
                                          "response": {**base, "status": "completed", "output": [item], "usage": usage}})

    def chat_completions(self, body: Any) -> None:
        n = self.next_id()
        model = body.get("model", MODEL) if isinstance(body, dict) else MODEL
        stream = isinstance(body, dict) and bool(body.get("stream"))
        head = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": model}
        if not stream:
            self.send_json(200, {**head, "object": "chat.completion", "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": self.text}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
            return
        self.start_sse()
        chunk = {**head, "object": "chat.completion.chunk"}
        self.event(None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
        self.event(None, {**chunk, "choices": [{"index": 0, "delta": {"content": self.text}}]})
        self.event(None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        self.event(None, "[DONE]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default=StandIn.text)
    parser.add_argument("--log", default=None)
    args = parser.parse_args()
    StandIn.text, StandIn.log_file = args.text, args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), StandIn)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
