"""`acpgen inspect -- CMD ...`: a byte-transparent stdio proxy that decodes what it forwards.

Three pump threads copy bytes as they arrive (our stdin -> the agent's stdin, the agent's stdout
-> our stdout, the agent's stderr -> our stderr) and only then hand a copy to one analyser thread,
which splits lines, decodes them (`Observer`), reports violations and writes the trace. Nothing the
analyser does (or fails to do) can change, reorder or hold back a byte of the session: a line
that is not JSON, a line too long to decode, or an analyser backlog is reported, never acted on.
When the agent exits, the proxy exits with its status."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from acpgen.kit.bindings import Binding
from acpgen.kit.observe import TO_AGENT, TO_CLIENT, Observer

CHUNK = 1 << 16
MAX_DECODED_LINE = 64 * 1024 * 1024
"""Longer lines are forwarded but not decoded (reported once each)."""
MAX_BACKLOG = 256 * 1024 * 1024
"""Bytes waiting for the analyser beyond which it skips (and says so) rather than grow further."""
STDERR = "agent-stderr"


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def raw_text(line: bytes) -> str:
    """The line as JSON-safe text that maps back to the exact bytes (surrogateescape)."""
    return line.decode("utf-8", errors="surrogateescape")


class Analyser:
    """Splits each direction into lines and decodes them, in arrival order, on its own thread."""

    def __init__(self, observer: Observer, report: Callable[[str], None], trace: IO[str] | None,
                 max_line: int = MAX_DECODED_LINE, max_backlog: int = MAX_BACKLOG) -> None:
        self.observer = observer
        self.report = report
        self.trace = trace
        self.max_line = max_line
        self.max_backlog = max_backlog
        self.queue: queue.SimpleQueue[tuple[str, float, bytes] | None] = queue.SimpleQueue()
        self.backlog = 0
        self.lock = threading.Lock()
        self.buffers: dict[str, bytearray] = {TO_AGENT: bytearray(), TO_CLIENT: bytearray(), STDERR: bytearray()}
        self.overlong: dict[str, bool] = dict.fromkeys(self.buffers, False)
        self.skipping = False
        self.messages = 0
        self.violations = 0
        self.tolerated = 0
        self.start = time.monotonic()
        self.records: list[dict[str, Any]] | None = None
        """Set to a list to keep every trace record (for --html); long lines are cut to 128 KiB."""
        self.thread = threading.Thread(target=self.run, name="acpgen-inspect-analyser", daemon=True)
        self.thread.start()

    def put(self, direction: str, data: bytes) -> None:
        with self.lock:
            if self.backlog + len(data) > self.max_backlog:
                if not self.skipping:
                    self.skipping = True
                    self.report(f"analysis behind by {self.backlog} bytes: skipping {direction} traffic "
                                "until it catches up (the session itself is not affected)")
                return
            self.backlog += len(data)
        self.queue.put((direction, time.monotonic() - self.start, data))

    def close(self, timeout: float) -> None:
        self.queue.put(None)
        self.thread.join(timeout)

    def run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                for direction, rest in self.buffers.items():
                    if rest and not self.overlong[direction]:
                        self.line(direction, time.monotonic() - self.start, bytes(rest), partial=True)
                return
            direction, at, data = item
            with self.lock:
                self.backlog -= len(data)
                self.skipping = self.skipping and self.backlog > 0
            try:
                self.split(direction, at, data)
            except Exception as exc:  # never let the analyser die silently
                self.report(f"internal error while analysing {direction} traffic: {type(exc).__name__}: {exc}")

    def split(self, direction: str, at: float, data: bytes) -> None:
        buffer = self.buffers[direction]
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                if not self.overlong[direction]:
                    buffer += data[start:]
                    if len(buffer) > self.max_line:
                        self.overlong[direction] = True
                        self.report(f"{direction}: a line longer than {self.max_line} bytes was forwarded "
                                    "but is not decoded")
                        buffer.clear()
                return
            if self.overlong[direction]:
                self.overlong[direction] = False
            else:
                buffer += data[start:end]
                line = bytes(buffer)
                buffer.clear()
                self.line(direction, at, line)
            start = end + 1

    def line(self, direction: str, at: float, line: bytes, partial: bool = False) -> None:
        record: dict[str, Any] = {"t": round(at, 6), "dir": direction, "line": raw_text(line)}
        if direction == STDERR or not line.strip():
            if self.trace is not None and direction == STDERR:
                self.write_trace(record)
            return
        self.messages += 1
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.violations += 1
            self.report(f"{direction}: not UTF-8 at byte {exc.start}; JSON-RPC messages MUST be UTF-8")
            record["kind"] = "invalid"
            self.write_trace(record)
            return
        switched = self.observer.switched_to
        observations = self.observer.feed(direction, text)
        for obs in observations:
            for violation in obs.violations:
                self.violations += 1
                self.report(violation.render())
            for note in obs.tolerated:
                self.tolerated += 1
                self.report(note.render())
        if switched is None and self.observer.switched_to is not None:
            self.report(f"the agent answered initialize with protocolVersion {self.observer.switched_to}: "
                        f"the session is checked with {self.observer.binding.name} from here on")
        if partial:
            record["partial"] = True
        first = observations[0]
        record.update(kind=first.kind, method=first.method, id=first.id)
        found = [v.to_json() for o in observations for v in o.violations]
        if found:
            record["violations"] = found
        tolerated = [v.to_json() for o in observations for v in o.tolerated]
        if tolerated:
            record["tolerated"] = tolerated
        self.write_trace(record)

    def write_trace(self, record: dict[str, Any]) -> None:
        if self.records is not None:
            kept = dict(record)
            if len(kept["line"]) > 128 * 1024:
                kept["line"] = kept["line"][:128 * 1024]
            self.records.append(kept)
        if self.trace is not None:
            self.trace.write(json.dumps(record, ensure_ascii=True) + "\n")
            self.trace.flush()


def pump(src: int, dst: int | None, analyser: Analyser, direction: str,
         on_eof: Callable[[], None] | None = None) -> None:
    """Copy src to dst as bytes arrive, queueing a copy for the analyser just before forwarding.

    Queueing first (a non-blocking put) keeps cause before effect: the peer cannot answer bytes
    it has not received, so an answer is never analysed before the request it answers (with the
    put after the write, the other direction's pump could queue the answer first)."""
    while True:
        try:
            data = os.read(src, CHUNK)
        except OSError:
            data = b""
        if not data:
            break
        analyser.put(direction, data)
        if dst is not None:
            try:
                write_all(dst, data)
            except OSError:
                dst = None  # the reader went away; keep draining so the writer never blocks
    if on_eof is not None:
        on_eof()


def run_inspect(binding: Binding, command: list[str], trace_path: Path | None,
                report_path: Path | None, quiet: bool = False, html_path: Path | None = None) -> int:
    report_lock = threading.Lock()
    report_file: IO[str] | None = report_path.open("w", encoding="utf-8") if report_path else None  # a run's report is its own

    def report(text: str) -> None:
        with report_lock:
            if report_file is not None:
                report_file.write(text + "\n")
                report_file.flush()
            elif not quiet:
                with contextlib.suppress(OSError):
                    write_all(2, f"[acpgen inspect] {text}\n".encode("utf-8", "replace"))

    trace = trace_path.open("w", encoding="utf-8") if trace_path else None
    try:
        # a process group of its own: what the agent starts ends with it (see below)
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
    except OSError as exc:
        report(f"could not start {command[0]!r}: {exc.strerror or exc}")
        return 127
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    analyser = Analyser(Observer(binding, follow_version=True), report, trace)
    if html_path is not None:
        analyser.records = []
    child_in = proc.stdin.fileno()

    def close_child_stdin() -> None:
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]

    def signal_group(signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, lambda signum, _frame: signal_group(signum))
    threads = [
        threading.Thread(target=pump, args=(0, child_in, analyser, TO_AGENT, close_child_stdin), daemon=True),
        threading.Thread(target=pump, args=(proc.stdout.fileno(), 1, analyser, TO_CLIENT), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr.fileno(), 2, analyser, STDERR), daemon=True),
    ]
    for thread in threads:
        thread.start()
    code = proc.wait()
    # Children the agent left behind would hold its stdout and stderr open (what the agent wrote
    # stays readable in the pipes): the agent's end is the end of the session, as for spawn_agent.
    signal_group(signal.SIGKILL)
    for thread in threads[1:]:
        thread.join(5)  # whatever the agent wrote before exiting is still delivered
    analyser.close(30)
    if analyser.violations or analyser.tolerated:
        report(f"{analyser.messages} messages, {analyser.violations} violations"
               + (f", {analyser.tolerated} tolerated under the schema's leniency annotations" if analyser.tolerated else ""))
    if trace is not None:
        trace.close()
    if html_path is not None and analyser.records is not None:
        from acpgen.kit.html_report import write_html

        write_html(html_path, analyser.records, "acpgen inspect: " + " ".join(command))
    if report_file is not None:
        report_file.close()
    with contextlib.suppress(OSError):
        sys.stdout.flush()
    return code if code >= 0 else 128 - code
