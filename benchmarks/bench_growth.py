"""Growth: `acpgen build` time and peak memory on synthetic schemas of growing size.

The schemas come from synth_schema.py (same seed, so the same files every run). Each size is built
as a whole process --runs times (interleaved across sizes, after a warm-up); per-definition time is
median / N. The marginal figure, (t(N) - t(previous N)) / (N - previous N), is the stricter view:
it leaves out the fixed cost (start-up, imports) that makes a big build look cheaper per definition.

    python benchmarks/bench_growth.py [--sizes 100,1000,5000] [--runs N] [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import WORK, fmt_ms, median, run_process, table, tool, write_json
from synth_schema import make_schema


def schema_path(size: int) -> Path:
    import json

    path = WORK / "growth" / f"synth_{size}" / "schema.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(make_schema(size), indent=2) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def command(size: int) -> list[str]:
    acpgen = tool("acpgen")
    assert acpgen, "acpgen is not installed in this venv"
    out = WORK / "growth" / f"synth_{size}" / "out" / "synth"
    return [acpgen, "build", str(schema_path(size)), "-o", str(out), "--package", "synth", "-q"]


def run(sizes: list[int], runs: int) -> dict[str, object]:
    cmds = {size: command(size) for size in sizes}
    for size, cmd in cmds.items():
        result = run_process(cmd)
        if result.returncode != 0:
            raise SystemExit(f"build of the {size}-definition schema failed:\n{result.stderr[-2000:]}")
    samples: dict[int, list[tuple[float, float]]] = {size: [] for size in sizes}
    for _ in range(runs):
        for size, cmd in cmds.items():
            r = run_process(cmd)
            samples[size].append((r.seconds, r.peak_rss_mib))
    rows = []
    previous: tuple[int, float] | None = None
    for size in sizes:
        t = median([s for s, _ in samples[size]])
        row = {"definitions": size, "median_s": t, "per_def_ms": t / size * 1000,
               "peak_rss_mib": median([m for _, m in samples[size]]), "seconds": [s for s, _ in samples[size]]}
        if previous:
            row["marginal_per_def_ms"] = (t - previous[1]) / (size - previous[0]) * 1000
        rows.append(row)
        previous = (size, t)
    by_size = {r["definitions"]: r for r in rows}
    summary = {}
    if 1000 in by_size and 5000 in by_size:
        summary["per_def_5000_over_1000"] = by_size[5000]["per_def_ms"] / by_size[1000]["per_def_ms"]
        if "marginal_per_def_ms" in by_size[1000] and "marginal_per_def_ms" in by_size[5000]:
            summary["marginal_5000_over_1000"] = (by_size[5000]["marginal_per_def_ms"]
                                                  / by_size[1000]["marginal_per_def_ms"])
    return {"runs": runs, "rows": rows, "summary": summary}


def markdown(data: dict[str, object]) -> str:
    rows = data["rows"]
    assert isinstance(rows, list)
    out = [
        f"`acpgen build` of `synth_schema.py N` (whole process, median of {data['runs']} runs).",
        "",
        table(["definitions", "median", "per definition", "marginal per definition", "peak RSS MiB"],
              [[r["definitions"], fmt_ms(r["median_s"]), f"{r['per_def_ms']:.2f} ms",
                f"{r['marginal_per_def_ms']:.2f} ms" if "marginal_per_def_ms" in r else "-",
                f"{r['peak_rss_mib']:.0f}"] for r in rows]),
    ]
    summary = data["summary"]
    assert isinstance(summary, dict)
    if summary:
        out.append("")
        out.append(f"Per-definition time at 5,000 / at 1,000: **{summary['per_def_5000_over_1000']:.2f}** "
                   "(target <= 1.5)"
                   + (f"; marginal 5,000 / marginal 1,000: {summary['marginal_5000_over_1000']:.2f}"
                      if "marginal_5000_over_1000" in summary else "") + ".")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    write_json(args.json, run([int(s) for s in args.sizes.split(",")], args.runs))


if __name__ == "__main__":
    main()
