"""Runtime: a session/prompt turn with 100 session/update notifications, generated client <-> agent
over a pipe, vs the official Python SDK on both ends.

SLOT: the generated JSON-RPC runtime (`rpc` module of each package) is not on main yet. Until it
is, this script only reports that it was skipped and why; it never invents a figure.

    python benchmarks/bench_runtime.py [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import GENERATED, write_json


def run() -> dict[str, object]:
    if not (GENERATED / "acp_v1" / "rpc.py").exists():
        return {"status": "skipped", "reason": "the generated runtime (acp_v1/rpc.py) is not on main yet"}
    return {"status": "skipped", "reason": "the prompt-turn benchmark is not written yet"}


def markdown(data: dict[str, object]) -> str:
    return f"Skipped: {data['reason']}." if data["status"] == "skipped" else str(data)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    write_json(args.json, run())


if __name__ == "__main__":
    main()
