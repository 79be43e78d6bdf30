"""Import: each generated package vs the official SDK's `import acp.schema`, in fresh processes.

Two figures per module, each the median of --runs fresh interpreters run interleaved (after one
warm-up run that writes the .pyc files, so every figure is a cached-bytecode import):
- import: the time of the `import` statement itself, measured inside the process with
  `time.perf_counter()` around it (interpreter start-up excluded);
- process: the wall time of `python -c "import X"` (start-up included), as a user feels it.

    python benchmarks/bench_import.py [--runs N] [--json OUT]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import GENERATED, fmt_ms, median, table, user_env, write_json

MODULES = ["acp_v1", "acp_v2", "acp_v0_4", "acp.schema", "pydantic"]
BASELINE = "acp.schema"
PROBE = "import time; t = time.perf_counter(); import {m}; print(time.perf_counter() - t)"


def env() -> dict[str, str]:
    e = user_env()
    e["PYTHONPATH"] = str(GENERATED) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def once(module: str) -> tuple[float, float]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", PROBE.format(m=module)], env=env(), check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip()), time.perf_counter() - start


def run(runs: int, modules: list[str]) -> dict[str, object]:
    available = []
    for module in modules:
        try:
            once(module)  # warm-up, and proves it imports
            available.append(module)
        except subprocess.CalledProcessError:
            pass
    samples: dict[str, list[tuple[float, float]]] = {m: [] for m in available}
    start = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env(), check=True)
        start.append(time.perf_counter() - t0)
        for module in available:
            samples[module].append(once(module))
    rows = {}
    for module, values in samples.items():
        rows[module] = {"import_s": median([i for i, _ in values]), "process_s": median([p for _, p in values]),
                        "import_samples": [i for i, _ in values]}
    base = rows.get(BASELINE)
    for row in rows.values():
        if base:
            row["baseline_over_import"] = base["import_s"] / row["import_s"]
            row["baseline_over_process"] = base["process_s"] / row["process_s"]
            # paired: per-run ratios (the module and the baseline ran back to back)
            row["baseline_over_import_paired"] = median([
                b / a for a, b in zip(row["import_samples"], base["import_samples"], strict=True)])
    return {"runs": runs, "python_startup_s": median(start), "modules": rows, "missing": sorted(set(modules) - set(available))}


def markdown(data: dict[str, object]) -> str:
    rows = []
    modules = data["modules"]
    assert isinstance(modules, dict)
    for module, r in modules.items():
        rows.append([f"`import {module}`", fmt_ms(r["import_s"]), fmt_ms(r["process_s"]),
                     f"**{r['baseline_over_import']:.1f}**" if "baseline_over_import" in r else "-",
                     f"{r['baseline_over_import_paired']:.1f}" if "baseline_over_import_paired" in r else "-",
                     f"{r['baseline_over_process']:.1f}" if "baseline_over_process" in r else "-"])
    out = [
        f"Fresh interpreters, cached bytecode, median of {data['runs']} interleaved runs; "
        f"`python -c pass` takes {fmt_ms(float(data['python_startup_s']))}. "
        f"**x** = `{BASELINE}` / module (> 1: faster than the SDK's models).",
        "",
        table(["module", "import statement", "whole process", "x (import)", "x (import, paired)", "x (process)"], rows),
    ]
    if data["missing"]:
        out.append(f"\nNot importable here: {', '.join(data['missing'])}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--modules", default=",".join(MODULES))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    write_json(args.json, run(args.runs, args.modules.split(",")))


if __name__ == "__main__":
    main()
