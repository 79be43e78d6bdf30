"""Shared helpers of the benchmark scripts: paths, medians, timing a whole process, machine facts."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
WORK = BENCH / ".work"  # scratch output (git-ignored)
GENERATED = ROOT / "generated"
BIN = Path(sys.executable).parent  # the venv's bin: acpgen, datamodel-codegen


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def tool(name: str) -> str | None:
    """A console script of this venv (None when its package is not installed)."""
    path = BIN / name
    return str(path) if path.exists() else None


@dataclass
class ProcessRun:
    seconds: float
    peak_rss_mib: float
    returncode: int
    stderr: str


def user_env() -> dict[str, str]:
    """The environment a user runs tools in: bytecode caching on (a shell that sets
    PYTHONDONTWRITEBYTECODE would make every run of a source-installed tool compile its modules)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_process(cmd: Sequence[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> ProcessRun:
    """Run `cmd` to completion: wall time, and peak RSS from wait4's rusage of that child.

    ru_maxrss of a waited-for child is the largest resident set of that child or of any descendant
    it waited for itself (acpgen's ruff run, datamodel-codegen's black), in KiB on Linux.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env if env is not None else user_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    stderr = proc.stderr.read()  # until the child exits and closes it
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    return ProcessRun(elapsed, usage.ru_maxrss / 1024, proc.returncode, stderr.decode("utf-8", "replace"))


def versions(*names: str) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": str(os.cpu_count()),
        "memory": mem,
        "load average at start": " ".join(f"{x:.2f}" for x in load),
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
    }


def write_json(path: Path | None, data: object) -> None:
    text = json.dumps(data, indent=2)
    if path is None:
        print(text)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")


def rel(path: Path | str) -> str:
    """A path as shown in RESULTS.md: relative to the repository, never a machine path."""
    p = Path(path)
    try:
        return p.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return p.name


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def sdk_version() -> str:
    """The official Python SDK this interpreter has (0.12.1 in .venv, 1.0.0rc3 in .venv-sdk1)."""
    try:
        return metadata.version("agent-client-protocol")
    except metadata.PackageNotFoundError:
        return "not installed"
