"""Models: the generated packages of this checkout vs those of an earlier commit, side by side.

What a change to the model shape costs or saves (issue 10 made the models real dataclasses with
shared behaviour in `_codec.Model`; `--before` names the commit before it):

- lines: `models.py` of each package, before and after;
- import: `import <pkg>` in fresh interpreters, before and after interleaved, cached bytecode
  (a warm-up run writes the .pyc files first), CPU time of the import statement, the median of
  --runs;
- codec: decode (dict -> objects), encode (`obj.to_dict()`, and the package's `encode(obj)`, the
  entry that reports a bad value as ValidationError) and construct (the class called with the
  decoded object's fields as keywords) over a corpus of messages, both packages loaded in one
  process (the earlier one under the name `<pkg>_before`) and timed back to back in each sweep, in
  CPU time of the process (`time.process_time`); a figure is the sum over messages, and a ratio the
  median of the per-sweep ratios.

    python benchmarks/bench_models.py --before REV [--package acp_v1] [--corpus DIR ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import shutil
import subprocess
import sys
import time
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import GENERATED, ROOT, WORK, fmt_ms, median, rel, table, user_env, write_json
from bench_codec import load_corpus

BEFORE_DIR = WORK / "models_before"
# CPU time of the import (the machine is shared: wall time also counts the other jobs).
PROBE = "import time; t = time.process_time(); import {m}; print(time.process_time() - t)"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def extract(rev: str, package: str) -> str:
    """Write `generated/<package>` as of `rev` to .work as the package `<package>_before`."""
    name = f"{package}_before"
    target = BEFORE_DIR / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    prefix = f"generated/{package}/"
    for path in git("ls-tree", "-r", "--name-only", rev, prefix).splitlines():
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True).stdout
        (target / path[len(prefix):]).write_bytes(text)
    return name


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def import_env() -> dict[str, str]:
    env = user_env()
    env["PYTHONPATH"] = os.pathsep.join([str(GENERATED), str(BEFORE_DIR), env.get("PYTHONPATH", "")])
    return env


def import_once(module: str) -> float:
    out = subprocess.run([sys.executable, "-c", PROBE.format(m=module)], env=import_env(), check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip())


def measure_import(pairs: list[tuple[str, str]], runs: int) -> dict[str, Any]:
    rows = {}
    for before, after in pairs:
        import_once(before), import_once(after)  # write bytecode
        b, a = [], []
        for _ in range(runs):
            b.append(import_once(before))
            a.append(import_once(after))
        rows[after] = {"before_s": median(b), "after_s": median(a),
                       "after_over_before_paired": median([y / x for x, y in zip(b, a, strict=True)])}
    return rows


def kwargs_of(obj: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return {name: getattr(obj, name) for name in type(obj).__slots__}


def timed(stmt: str, ns: dict[str, Any], target: float) -> tuple[timeit.Timer, int]:
    # CPU time of this process: on a shared machine, wall time also counts the other jobs.
    timer = timeit.Timer(stmt, globals=ns, timer=time.process_time)
    number = 1
    while True:
        elapsed = min(timer.repeat(3, number))
        if elapsed >= target / 10 or number >= 1_000_000:
            return timer, max(1, int(number * target / max(elapsed, 1e-9)))
        number *= 10


OPS = {"decode": "dec(data)", "encode": "obj.to_dict()", "encode (checked)": "encode(obj)",
       "construct": "cls(**kw)"}


def measure_codec(package: str, before: str, folders: list[Path], sweeps: int, target: float) -> dict[str, Any]:
    sys.path[:0] = [str(GENERATED), str(BEFORE_DIR)]
    pkgs = {"before": importlib.import_module(before), "after": importlib.import_module(package)}
    corpus = load_corpus(folders, pkgs["after"])
    timers: dict[tuple[int, str, str], tuple[timeit.Timer, int]] = {}
    skipped = 0
    for index, message in enumerate(corpus.messages):
        prepared = {}
        for side, pkg in pkgs.items():
            dec = pkg.DECODERS.get(message.def_name)
            obj = dec(message.data) if dec else None
            if obj is None or not hasattr(obj, "to_dict") or obj.to_dict() != pkgs["after"].encode(
                    pkgs["after"].DECODERS[message.def_name](message.data)):
                break
            prepared[side] = {"dec": dec, "data": message.data, "obj": obj, "cls": type(obj), "kw": kwargs_of(obj),
                              "encode": pkg.encode}
        else:
            for side, ns in prepared.items():
                for op, stmt in OPS.items():
                    timers[(index, side, op)] = timed(stmt, ns, target)
            continue
        skipped += 1
    indices = sorted({i for i, _, _ in timers})
    samples: dict[tuple[str, str], list[float]] = {(s, op): [] for s in pkgs for op in OPS}
    for _ in range(sweeps):
        for op in OPS:
            totals = dict.fromkeys(pkgs, 0.0)
            for index in indices:
                for side in pkgs:  # back to back: before, then after
                    timer, number = timers[(index, side, op)]
                    totals[side] += timer.timeit(number) / number
            for side, total in totals.items():
                samples[(side, op)].append(total)
    result = {"messages": len(indices), "skipped": skipped, "ops": {}}
    for op in OPS:
        b, a = samples[("before", op)], samples[("after", op)]
        result["ops"][op] = {"before_s": median(b), "after_s": median(a),
                             "after_over_before_paired": median([y / x for x, y in zip(b, a, strict=True)])}
    return result


def run(rev: str, packages: list[str], codec_package: str, folders: list[Path], runs: int, sweeps: int,
        target_ms: float) -> dict[str, Any]:
    commit = git("rev-parse", "--short", rev).strip()
    names = {p: extract(rev, p) for p in packages}
    counts = {p: {"before": lines(BEFORE_DIR / names[p] / "models.py"), "after": lines(GENERATED / p / "models.py")}
              for p in packages}
    start = time.perf_counter()
    imports = measure_import([(names[p], p) for p in packages], runs)
    codec = measure_codec(codec_package, names[codec_package], folders, sweeps, target_ms / 1000)
    return {"before": commit, "lines": counts, "import": imports, "import_runs": runs, "codec": codec,
            "codec_package": codec_package, "corpus": [rel(f) for f in folders], "sweeps": sweeps,
            "seconds": time.perf_counter() - start}


def markdown(data: dict[str, Any]) -> str:
    rows = [[f"`{p}`", c["before"], c["after"], f"{c['after'] / c['before']:.0%}"] for p, c in data["lines"].items()]
    out = [f"Before = the generated packages of commit `{data['before']}`; after = this checkout.", "",
           "**models.py lines**", "", table(["package", "before", "after", "after / before"], rows), "",
           f"**import** (fresh interpreters, cached bytecode, CPU time of the import statement, median of "
           f"{data['import_runs']} interleaved runs)", ""]
    rows = [[f"`import {p}`", fmt_ms(r["before_s"]), fmt_ms(r["after_s"]), f"**{r['after_over_before_paired']:.2f}**"]
            for p, r in data["import"].items()]
    out += [table(["module", "before", "after", "after / before (paired)"], rows), ""]
    codec = data["codec"]
    out += [f"**codec** (`{data['codec_package']}`, {codec['messages']} messages of "
            f"{', '.join(data['corpus'])}, CPU time, sums over messages, median of {data['sweeps']} sweeps; "
            "construct = the class called with the fields as keywords)", ""]
    rows = [[op, f"{r['before_s'] * 1e6:.1f} µs", f"{r['after_s'] * 1e6:.1f} µs", f"**{r['after_over_before_paired']:.2f}**"]
            for op, r in codec["ops"].items()]
    out.append(table(["operation", "before", "after", "after / before (paired)"], rows))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit whose generated/ is 'before'")
    parser.add_argument("--packages", default="acp_v1,acp_v2,acp_v0_4")
    parser.add_argument("--package", default="acp_v1", help="the package whose codec is timed")
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sweeps", type=int, default=15)
    parser.add_argument("--target-ms", type=float, default=3.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    folders = args.corpus or [ROOT / "tests" / "fixtures" / "messages" / args.package.removeprefix("acp_")]
    write_json(args.json, run(args.before, args.packages.split(","), args.package, folders, args.runs,
                              args.sweeps, args.target_ms))


if __name__ == "__main__":
    main()
