"""Generation: `acpgen build` of each vendored version vs `datamodel-codegen` on the same schema.

Every figure is a whole process (interpreter start, imports, formatting, writing). Commands run
interleaved, round after round, after one warm-up round; a ratio is median(other) / median(acpgen)
from the same run. datamodel-codegen reads one file, so it gets the effective schema: the unstable
file where one exists (a superset of the stable one, and what acpgen generates from), else the
stable file.

    python benchmarks/bench_generation.py [--runs N] [--versions v1,v2] [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import ROOT, WORK, fmt_ms, median, rel, run_process, table, tool, write_json

from acpgen.render import OUTPUTS, runtime_outputs
from acpgen.render.format import RUFF_ARGS, ruff_binary

# The files a build runs ruff on: the rendered modules (the runtime's are copied as they are).
FORMATTED = sorted(name for name in OUTPUTS if name.endswith(".py") and name not in runtime_outputs())

VERSIONS = {"v1": "acp_v1", "v2": "acp_v2", "v0_4": "acp_v0_4"}
# name -> (output model type, extra arguments); "default" = datamodel-codegen's default formatters
# (black + isort), what a user gets without choosing; "builtin" = no external formatter (its fastest).
DMCG_VARIANTS = {
    "dmcg pydantic v2 (default formatters)": ("pydantic_v2.BaseModel", ()),
    "dmcg dataclass (default formatters)": ("dataclasses.dataclass", ()),
    "dmcg dataclass (--formatters builtin)": ("dataclasses.dataclass", ("--formatters", "builtin")),
}


def schema_files(version: str) -> tuple[Path, Path]:
    """(the file acpgen is given, the effective file datamodel-codegen is given)."""
    stable = ROOT / "schema" / version / "schema.json"
    unstable = stable.with_name("schema.unstable.json")
    return stable, unstable if unstable.exists() else stable


def commands(version: str, with_dmcg: bool) -> dict[str, list[str]]:
    acpgen = tool("acpgen")
    assert acpgen, "acpgen is not installed in this venv (pip install -e .)"
    stable, effective = schema_files(version)
    out = WORK / "generation" / version
    build = [acpgen, "build", str(stable), "-o", str(out / VERSIONS[version]), "--package", VERSIONS[version], "-q"]
    # The second acpgen row compiles every template again and runs ruff on everything, as the first
    # build on a machine does (the first row has the compiled templates and ruff's output cached).
    cmds = {"acpgen build": build, "acpgen build, no caches": ["env", "ACPGEN_NO_CACHE=1", *build]}
    # The floor of this design: the interpreter's start plus one ruff run over the files a build
    # formats (the snapshot in generated/, the same text; --check does the same work, writing
    # nothing); and what importing costs.
    formatted = [str(p) for name in FORMATTED if (p := ROOT / "generated" / VERSIONS[version] / name).exists()]
    ruff = [ruff_binary(), "format", "--check", *RUFF_ARGS, "--no-cache", *formatted]
    cmds["floor: python start + one ruff run"] = [
        sys.executable, "-c", f"import subprocess, sys; sys.exit(subprocess.run({ruff!r}).returncode)"]
    cmds["acpgen imports (no build)"] = [sys.executable, "-c", "import acpgen.launch, acpgen.commands, acpgen.pipeline, acpgen.render, jinja2"]
    dmcg = tool("datamodel-codegen")
    if with_dmcg and dmcg:
        for index, (name, (model_type, extra)) in enumerate(DMCG_VARIANTS.items()):
            cmds[name] = [dmcg, "--input", str(effective), "--input-file-type", "jsonschema",
                          "--output-model-type", model_type, *extra,
                          "--output", str(out / f"dmcg_{index}.py")]
    return cmds


def shown(cmd: list[str]) -> str:
    """The command as RESULTS.md prints it: console scripts by name, files relative to the repo."""
    if cmd[0] == sys.executable and cmd[1] == "-c":
        return f"python -c {cmd[2].replace(ruff_binary(), 'ruff').replace(str(ROOT) + '/', '')!r}"
    if cmd[0] == "env":
        return f"{cmd[1]} {shown(cmd[2:])}"
    return " ".join(Path(c).name if i == 0 else rel(c) if "/" in c else c for i, c in enumerate(cmd))


def measure(version: str, runs: int, with_dmcg: bool) -> dict[str, object]:
    cmds = commands(version, with_dmcg)
    for cmd in cmds.values():  # warm-up: .pyc files, page cache; also proves each command works
        result = run_process(cmd)
        if result.returncode != 0:
            raise SystemExit(f"{shown(cmd)} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            result = run_process(cmd)
            samples[name].append((result.seconds, result.peak_rss_mib))
    base = [s for s, _ in samples["acpgen build"]]
    rows = {}
    for name, values in samples.items():
        secs = [s for s, _ in values]
        rows[name] = {
            "command": shown(cmds[name]),
            "seconds": secs,
            "median_s": median(secs),
            "peak_rss_mib": median([m for _, m in values]),
            "x_acpgen": median(secs) / median(base),
            # paired: each round's ratio, then the median of those
            "x_acpgen_paired": median([a / b for a, b in zip(secs, base, strict=True)]),
        }
    return {"stable": rel(schema_files(version)[0]), "effective": rel(schema_files(version)[1]), "rows": rows}


def startup(runs: int) -> float:
    return median([run_process([sys.executable, "-c", "pass"]).seconds for _ in range(max(runs, 3))])


def run(runs: int, versions: list[str], with_dmcg: bool = True) -> dict[str, object]:
    return {
        "runs": runs,
        "python_startup_s": startup(runs),
        "versions": {v: measure(v, runs, with_dmcg) for v in versions},
    }


def markdown(data: dict[str, object]) -> str:
    out = [
        f"Whole processes, median of {data['runs']} interleaved runs after a warm-up; peak RSS from "
        "`wait4` rusage (the largest process of the tree: acpgen's ruff or dmcg's black included). "
        f"`python -c pass` takes {fmt_ms(float(data['python_startup_s']))}. "
        "**x acpgen** = median(that command) / median(acpgen build); paired = median of the per-round ratios.",
        "",
    ]
    versions = data["versions"]
    assert isinstance(versions, dict)
    for version, result in versions.items():
        merged = " (+ the unstable file beside it)" if result["effective"] != result["stable"] else ""
        out.append(f"**{version}**: acpgen reads `{result['stable']}`{merged}; "
                   f"datamodel-codegen reads `{result['effective']}`.\n")
        rows = []
        for name, r in result["rows"].items():
            rows.append([name, fmt_ms(r["median_s"]), f"{r['peak_rss_mib']:.0f}",
                         f"{r['x_acpgen']:.1f}", f"{r['x_acpgen_paired']:.1f}"])
        out.append(table(["command", "median", "peak RSS MiB", "x acpgen", "x acpgen (paired)"], rows))
        out.append("")
        out.append("<details><summary>commands</summary>\n")
        out += [f"- {name}: `{r['command']}`" for name, r in result["rows"].items()]
        out.append("\n</details>\n")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--versions", default="v1,v2,v0_4")
    parser.add_argument("--no-dmcg", action="store_true", help="acpgen only")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    data = run(args.runs, args.versions.split(","), not args.no_dmcg)
    write_json(args.json, data)


if __name__ == "__main__":
    main()
