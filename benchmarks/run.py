"""Run every benchmark and write benchmarks/RESULTS.md.

    .venv/bin/pip install -e '.[test,bench]'
    .venv/bin/python benchmarks/run.py            # everything, about 10 minutes on 2 shared vCPUs
    .venv/bin/python benchmarks/run.py --quick    # a smoke run with few repeats (figures are rough)
    .venv/bin/python benchmarks/run.py --only codec,import

Each benchmark runs in its own process (python benchmarks/bench_<name>.py --json ...) one after the
other, so they never compete with each other for the CPU; the raw figures land in
benchmarks/.work/<name>.json and RESULTS.md is rendered from them. Only medians and ratios
measured in the same run are reported: absolute times on a shared machine drift.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BENCH, WORK, machine, rel, table, versions

# name -> (title, arguments of a full run, arguments of a --quick run)
BENCHMARKS: dict[str, tuple[str, list[str], list[str]]] = {
    "generation": ("Generation: acpgen build vs datamodel-codegen", ["--runs", "5"],
                   ["--runs", "1", "--versions", "v0_4"]),
    "codec": ("Codec: generated acp_v1 vs the SDK's pydantic models (acp.schema)",
              ["--sweeps", "15", "--target-ms", "3"], ["--sweeps", "2", "--target-ms", "0.2"]),
    "import": ("Import: generated packages vs acp.schema", ["--runs", "15"], ["--runs", "2"]),
    "models": ("Models: the dataclass models (issue 10) vs the models before them (commit adff3c8)",
               ["--before", "adff3c8", "--runs", "15", "--sweeps", "15", "--target-ms", "3"],
               ["--before", "adff3c8", "--runs", "2", "--sweeps", "2", "--target-ms", "0.2"]),
    "growth": ("Growth: synthetic schemas", ["--runs", "3"], ["--runs", "1", "--sizes", "20,40"]),
    # Rounds of prompt turns last 0.1-0.5 s: rounds of 20 turns (20 ms for acpgen) split into a fast
    # and a slow group by where the scheduler put the two processes on a 2-CPU machine.
    "runtime": ("Runtime: prompt turns with 100 session/update notifications, over a pipe",
                ["--rounds", "7", "--turns", "100", "--short-turns", "300"],
                ["--rounds", "1", "--turns", "2", "--short-turns", "5"]),
    "remote": ("Remote: prompt turns over WebSocket and Streamable HTTP (HTTP/2), Hypercorn on loopback",
               ["--rounds", "7", "--turns", "40", "--short-turns", "100"],
               ["--rounds", "1", "--turns", "2", "--short-turns", "3"]),
    "flood": ("Remote floods (issue 22): worst server RSS at the default Limits, Hypercorn and Uvicorn",
              [], ["--servers", "uvicorn", "--floods", "posts,session-new"]),
    "idle": ("Memory per idle connection: the agent side of 1,000 connections past session/new",
             ["--connections", "1000", "--runs", "3"], ["--connections", "50", "--runs", "1"]),
    "load": ("Runtime under load: request floods and a large message, agent RSS",
             ["--requests", "50000", "--size-mb", "40", "--runs", "3"],
             ["--requests", "2000", "--size-mb", "4", "--runs", "1"]),
}
# The same benchmarks run again by the interpreter of .venv-sdk1, whose `acp` is the Python SDK
# 1.0.0rc3 (bash scripts/install-test-peers.sh makes it): acpgen against both SDKs in one run.
SDK1_PYTHON = BENCH.parent / ".venv-sdk1" / "bin" / "python"
SDK1 = {"codec-sdk1": "codec", "runtime-sdk1": "runtime", "remote-sdk1": "remote", "idle-sdk1": "idle"}
for _name, _base in SDK1.items():
    _title, _full, _quick = BENCHMARKS[_base]
    BENCHMARKS[_name] = (_title.replace("the SDK's", "the SDK 1.0.0rc3's") + " (SDK 1.0.0rc3)", _full, _quick)
PACKAGES = ("acpgen", "datamodel-code-generator", "agent-client-protocol", "pydantic", "pydantic-core",
            "ruff", "black", "isort", "jinja2", "jsonschema", "typer", "pyinstrument")


def run_one(name: str, args: list[str], work: Path) -> tuple[dict[str, object], str, float]:
    out = work / f"{name}.json"
    python, script = (SDK1_PYTHON, SDK1[name]) if name in SDK1 else (Path(sys.executable), name)
    if name in SDK1 and not SDK1_PYTHON.exists():
        return {"status": "skipped", "reason": "no .venv-sdk1 (bash scripts/install-test-peers.sh)"}, "", 0.0
    cmd = [str(python), str(BENCH / f"bench_{script}.py"), *args, "--json", str(out)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    shown = (".venv-sdk1/bin/python " if name in SDK1 else "python ") + " ".join(
        rel(c) if "/" in c else c for c in cmd[1:])
    return json.loads(out.read_text(encoding="utf-8")), shown, time.perf_counter() - start


def targets(figures: dict[str, dict[str, Any]]) -> str:
    """The issue's targets next to what this run measured (only those whose benchmark ran)."""
    rows: list[list[str]] = []

    def row(what: str, goal: float | None, got: float | None, at_most: bool = False) -> None:
        if got is None:
            return
        if goal is None:  # shown beside a target, not one itself
            rows.append([what, "-", f"{got:.2f}", "for reference"])
            return
        ok = got <= goal if at_most else got >= goal
        rows.append([what, f"{'<=' if at_most else '>='} {goal:g}", f"{got:.2f}", "met" if ok else "**missed**"])

    gen = figures.get("generation", {}).get("versions", {}).get("v1")
    if gen:
        for name, r in gen["rows"].items():
            if name.startswith("dmcg"):
                row(f"build v1: {name} / acpgen build (paired)", 10, r["x_acpgen_paired"])
        cold, dmcg = gen["rows"].get("acpgen build, no caches"), gen["rows"].get("dmcg pydantic v2 (default formatters)")
        if cold and dmcg:  # the first build on a machine: no compiled templates, no formatted parts
            row("build v1: dmcg pydantic v2 / acpgen build with no caches (paired)", None,
                median([d / c for d, c in zip(dmcg["seconds"], cold["seconds"], strict=True)]))
        floor = gen["rows"].get("floor: python start + one ruff run")
        if floor:  # the alternative target: within 1.5x of the floor
            row("build v1: acpgen build / floor (python start + one ruff run)", 1.5, 1 / floor["x_acpgen"], at_most=True)
    for key, sdk, goals in (("codec", "0.12.1", (3, 5)), ("codec-sdk1", "1.0.0rc3", (1, 1))):
        versus = ((figures.get(key) or {}).get("aggregate_common") or {}).get("versus", {})
        row(f"decode dict: SDK {sdk} / acpgen", goals[0], versus.get("decode dict: sdk / acpgen"))
        row(f"encode dict: SDK {sdk} / acpgen", goals[1], versus.get("encode dict: sdk model_dump / acpgen to_dict"))
        row(f"receive (JSON text): SDK {sdk} loads+validate / acpgen", 1.4 if sdk == "0.12.1" else 1,
            versus.get("receive (text): sdk loads+validate / acpgen loads+decode"))
    for key, sdk, goal in (("runtime", "0.12.1", 4), ("runtime-sdk1", "1.0.0rc3", 1)):
        runtime = figures.get(key, {})
        if runtime.get("status") == "ok":
            row(f"prompt turns over stdio: acpgen / SDK {sdk}", goal, runtime.get("x_sdk"))
            split = runtime.get("split")
            if isinstance(split, dict):  # what the ratio tends to with many updates a turn
                row(f"stdio, time each update adds: SDK {sdk} / acpgen", None, split.get("x_sdk_per_update"))
    for key, sdk, goal in (("remote", "0.12.1", 4), ("remote-sdk1", "1.0.0rc3", 1)):
        remote = figures.get(key, {})
        if remote.get("status") == "ok":
            for profile, label in (("ws", "WebSocket"), ("http", "Streamable HTTP")):
                row(f"prompt turns over {label}: acpgen / SDK {sdk}", goal, (remote.get(profile) or {}).get("x_sdk"))
                split = (remote.get(profile) or {}).get("split")
                if isinstance(split, dict):
                    row(f"{label}, time each update adds: SDK {sdk} / acpgen", None, split.get("x_sdk_per_update"))
    imports = figures.get("import", {}).get("modules", {}).get("acp_v1", {})
    row("import acp.schema / import acp_v1 (import statement)", 5, imports.get("baseline_over_import"))
    row("import acp.schema / import acp_v1 (whole process)", 5, imports.get("baseline_over_process"))
    growth = figures.get("growth", {}).get("summary", {})
    row("growth: per-definition time at 5,000 / at 1,000", 1.5, growth.get("per_def_5000_over_1000"), at_most=True)
    load = figures.get("load", {})
    if load.get("status") == "ok":
        prompt_flood = load["flood"]["prompt"]["acpgen"]
        row("prompt flood: acpgen agent RSS growth, MiB (issue 12)", 64, prompt_flood["growth_kib"] / 1024, at_most=True)
    flood = figures.get("flood", {})
    if flood.get("status") == "ok":
        row("remote floods: worst server RSS, MiB (issue 22)", float(flood["bound_mib"]), flood["worst_peak_mib"],
            at_most=True)
    if not rows:
        return ""
    return "## Targets (issues 6, 12, 22 and 26)\n\n" + table(["target", "goal", "this run", ""], rows) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run every benchmark and write benchmarks/RESULTS.md.")
    parser.add_argument("--quick", action="store_true", help="few repeats: checks the scripts, not the figures")
    parser.add_argument("--only", help=f"comma-separated subset of {','.join(BENCHMARKS)}")
    parser.add_argument("--output", type=Path, default=BENCH / "RESULTS.md")
    parser.add_argument("--work", type=Path, default=WORK, help="folder for the raw JSON figures")
    parser.add_argument("--update", action="store_true",
                        help="with --only: replace just those sections (and their target rows) in the "
                        "existing RESULTS.md, keeping the rest of it")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite RESULTS.md from the JSON figures of the last run (no measuring)")
    parser.add_argument("--profiles", type=Path, default=BENCH / "PROFILES.md",
                        help="hand-written profile summaries appended to RESULTS.md when the file exists")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(BENCHMARKS)
    unknown = set(names) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    sections = []
    figures: dict[str, dict[str, Any]] = {}
    measured_on = machine()
    for name in names:
        title, full, quick = BENCHMARKS[name]
        print(f"== {name}", flush=True)
        if args.render_only:
            if not (args.work / f"{name}.json").exists():
                parser.error(f"no figures of {name} in {rel(args.work)}: run without --render-only first")
            data = json.loads((args.work / f"{name}.json").read_text(encoding="utf-8"))
            shown, elapsed = str(data.get("_command", "")), float(data.get("_seconds", 0))
        else:
            data, shown, elapsed = run_one(name, quick if args.quick else full, args.work)
            data.update(_command=shown, _seconds=elapsed, _machine=machine())
            (args.work / f"{name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
        figures[name] = data
        if name == names[0]:
            measured_on = data.get("_machine", measured_on)
        module = importlib.import_module(f"bench_{SDK1.get(name, name)}")
        body = f"Skipped: {data.get('reason')}." if data.get("status") == "skipped" else module.markdown(data)
        sections.append(f"## {title}\n\n`{shown}` ({elapsed:.0f} s)\n\n{body}\n")
    header = [
        "# acpgen benchmarks",
        "",
        "Written by `python benchmarks/run.py" + (" --quick" if args.quick else "")
        + (f" --only {args.only}" if args.only else "") + "`; do not edit by hand. "
        "The machine is shared and noisy: read the ratios (both sides measured in the same run), "
        "not the absolute times." + (" **Quick run: few repeats, rough figures.**" if args.quick else ""),
        "",
        "| machine | |",
        "|---|---|",
        *[f"| {k} | {v.split(' (')[0] if k == 'python' else v} |" for k, v in measured_on.items()],
        *[f"| {k} | {v} |" for k, v in versions(*PACKAGES).items()],
        "",
    ]
    if args.update and args.output.exists():
        text = update(args.output.read_text(encoding="utf-8"), targets(figures), sections)
        args.output.write_text(text.rstrip() + "\n", encoding="utf-8")
        print(f"updated {rel(args.output)}")
        return
    text = "\n".join(header) + "\n" + targets(figures) + "\n" + "\n".join(sections)
    if args.profiles.exists():
        text += "\n" + args.profiles.read_text(encoding="utf-8")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text.rstrip() + "\n", encoding="utf-8")
    print(f"wrote {rel(args.output)}")


def update(text: str, new_targets: str, sections: list[str]) -> str:
    """`text` (a RESULTS.md) with `sections` put in place of those of the same title (else before
    the profiles, or at the end) and the rows of `new_targets` in place of the same rows."""
    for section in sections:
        title = section.split("\n", 1)[0]
        start = text.find(title + "\n")
        if start < 0:
            at = text.find("\n## Profiles")
            at = len(text) if at < 0 else at + 1
            text = text[:at] + section + "\n" + text[at:]
            continue
        end = text.find("\n## ", start + len(title))
        # A section ends in one newline; the blank line before the next section is kept.
        text = text[:start] + section + ("\n" + text[end + 1:] if end >= 0 else "")
    lines = text.split("\n")
    for row in new_targets.split("\n"):
        if not row.startswith("| ") or row.startswith("| target"):
            continue
        name = row.split(" | ")[0]
        same = [i for i, line in enumerate(lines) if line.split(" | ")[0] == name]
        if same:
            lines[same[0]] = row
        else:
            head = next((i for i, line in enumerate(lines) if line.startswith("## Targets")), None)
            if head is None:
                continue
            last = head + 1
            while last + 1 < len(lines) and (lines[last + 1].startswith("|") or not lines[last].startswith("|")):
                last += 1
            lines.insert(last + 1, row)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
