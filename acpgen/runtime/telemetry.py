"""Trace context on ACP messages: W3C `traceparent` / `tracestate` in `params._meta` (the keys ACP
reserves for it), and OpenTelemetry spans per request when `opentelemetry` is installed.

Off unless asked for: `AgentSideConnection(..., tracing=Tracing())` or `conn.tracing = Tracing()`.
Then every request and notification sent carries the current trace context in `params._meta`
(a `traceparent` already there is kept), and each request handled runs in the context its
`params._meta` carries, so the calls a handler makes continue the caller's trace.

With `opentelemetry` importable (and `Tracing(opentelemetry=None)` or `True`), a span is recorded
for each call (kind CLIENT) and each request handled (kind SERVER), named by the method, with the
attributes `rpc.system` (`jsonrpc`), `rpc.method`, `rpc.jsonrpc.request_id` and `acp.outcome`
(`ok`, `error <code>`, `cancelled`, `timeout`, ...); the context goes through OpenTelemetry's
propagators. Without it the context is kept here with the standard library alone (no spans): the
trace id and a new span id for each message sent. `opentelemetry` is imported only when a
`Tracing` is created with it allowed; this package never needs it.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import secrets
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from ._codec import JsonValue

__all__ = ["TRACEPARENT", "TRACESTATE", "TraceContext", "Tracing", "current_trace"]

TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")


@dataclass(frozen=True, slots=True)
class TraceContext:
    """One W3C trace context: `traceparent` is `00-<trace_id>-<span_id>-<flags>`."""

    trace_id: str
    span_id: str
    flags: str = "01"
    state: str = ""

    @classmethod
    def new(cls) -> TraceContext:
        """The root of a new trace (sampled)."""
        return cls(secrets.token_hex(16), secrets.token_hex(8))

    @classmethod
    def parse(cls, traceparent: object, tracestate: object = "") -> TraceContext | None:
        """The context a `traceparent` value names, or None if it is not a valid version-00 one
        (an all-zero trace or span id is invalid)."""
        if not isinstance(traceparent, str):
            return None
        match = _TRACEPARENT.fullmatch(traceparent.strip())
        if match is None or set(match[1]) == {"0"} or set(match[2]) == {"0"}:
            return None
        state = tracestate if isinstance(tracestate, str) else ""
        return cls(match[1], match[2], match[3], state)

    def child(self) -> TraceContext:
        """The same trace, a new span id: what a message sent from within this context carries."""
        return TraceContext(self.trace_id, secrets.token_hex(8), self.flags, self.state)

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-{self.flags}"


_CURRENT: ContextVar[TraceContext | None] = ContextVar("acp_trace_context", default=None)


def current_trace() -> TraceContext | None:
    """The trace context a handler runs in (from its request's `params._meta`), without
    OpenTelemetry; None outside one."""
    return _CURRENT.get()


Finish = Callable[[str], None]
"""Ends what `Tracing.call` or `Tracing.handle` started, with the outcome (`ok`, `error -32603`...)."""


def _meta_of(params: object) -> dict[str, JsonValue] | None:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


class Tracing:
    """Trace context propagation and, with OpenTelemetry, spans: see the module docstring.

    `opentelemetry`: None uses it when it is importable, True requires it (ImportError naming the
    package to install otherwise), False never imports it. `tracer_name` names the OpenTelemetry
    tracer (default `acp`); `tracer` replaces it (any `opentelemetry.trace.Tracer`)."""

    def __init__(
        self, *, opentelemetry: bool | None = None, tracer_name: str = "acp", tracer: object = None
    ) -> None:
        self._otel: Any = None
        self._tracer: Any = tracer
        if opentelemetry is not False:
            try:
                trace = importlib.import_module("opentelemetry.trace")
                propagate = importlib.import_module("opentelemetry.propagate")
                context = importlib.import_module("opentelemetry.context")
            except ImportError:
                if opentelemetry:
                    raise ImportError(
                        "Tracing(opentelemetry=True) needs the opentelemetry-api package "
                        "(pip install opentelemetry-sdk); pass opentelemetry=None to fall back "
                        "to propagating the trace context alone"
                    ) from None
            else:
                self._otel = (trace, propagate, context)
                if self._tracer is None:
                    self._tracer = trace.get_tracer(tracer_name)

    @property
    def uses_opentelemetry(self) -> bool:
        return self._otel is not None

    def call(self, method: str, request_id: int | None, params: object) -> tuple[object, Finish]:
        """A message about to be sent (`request_id` None for a notification): the params with the
        trace context in `_meta`, and what ends its span once answered."""
        meta = dict(_meta_of(params) or {})
        if TRACEPARENT in meta or not isinstance(params, dict):
            return params, _nothing
        if self._otel is None:
            parent = _CURRENT.get()
            if parent is None and request_id is None:
                return params, _nothing  # a notification outside a trace starts none
            sent = parent.child() if parent is not None else TraceContext.new()
            meta[TRACEPARENT] = sent.traceparent
            if sent.state:
                meta[TRACESTATE] = sent.state
            return {**params, "_meta": meta}, _nothing
        trace, propagate, _context = self._otel
        if request_id is None:  # a notification: the current context, no span
            propagate.inject(meta)
            return {**params, "_meta": meta}, _nothing
        span = self._tracer.start_span(
            method, kind=trace.SpanKind.CLIENT, attributes=_attributes(method, request_id)
        )
        propagate.inject(meta, context=trace.set_span_in_context(span))
        return {**params, "_meta": meta}, self._ender(span)

    @contextlib.contextmanager
    def handle(self, method: str, request_id: object, params: JsonValue) -> Iterator[Finish]:
        """Run a request's handler in the context its `params._meta` carries (and, with
        OpenTelemetry, in a SERVER span); yields what records its outcome."""
        meta = _meta_of(params) or {}
        if self._otel is None:
            received = TraceContext.parse(meta.get(TRACEPARENT), meta.get(TRACESTATE, ""))
            token = _CURRENT.set(received)
            try:
                yield _nothing
            finally:
                _CURRENT.reset(token)
            return
        trace, propagate, context = self._otel
        parent = propagate.extract({k: v for k, v in meta.items() if isinstance(v, str)})
        span = self._tracer.start_span(
            method,
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=_attributes(method, request_id),
        )
        token = context.attach(trace.set_span_in_context(span, parent))
        finish = self._ender(span)
        try:
            yield finish
        finally:
            context.detach(token)
            finish("")  # ends it if the outcome was not recorded

    def _ender(self, started: object) -> Finish:
        trace = self._otel[0]
        span: Any = started  # an opentelemetry Span
        ended = False

        def finish(outcome: str) -> None:
            nonlocal ended
            if ended:
                return
            ended = True
            if outcome:
                span.set_attribute("acp.outcome", outcome)
                if outcome != "ok":
                    span.set_status(trace.Status(trace.StatusCode.ERROR, outcome))
            span.end()

        return finish


def _attributes(method: str, request_id: object) -> dict[str, str]:
    return {
        "rpc.system": "jsonrpc",
        "rpc.method": method,
        "rpc.jsonrpc.request_id": str(request_id),
    }


def _nothing(outcome: str) -> None:
    return None
