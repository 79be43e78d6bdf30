"""Codec: a generated package vs the official SDK's pydantic models on a corpus of ACP messages.

Operations on every message, with the stdlib `json` module as the floor:

- decode dict:  `DECODERS[def](data)`             vs `Model.model_validate(data)`
- receive:      `DECODERS[def](json.loads(text))` vs `Model.model_validate(json.loads(text))`
                (the SDK's real receive path); pydantic's own `model_validate_json(text)` is shown too
- encode dict:  `obj.to_dict()`                   vs `m.model_dump(mode="json", by_alias=True, exclude_unset=True)`
- send:         `json.dumps(obj.to_dict())`       vs `json.dumps(m.model_dump(...))`; `m.model_dump_json(...)` too

`exclude_unset=True` is the SDK dump that gives back the received wire dict (explicit nulls kept,
absent keys left out). A message is compared only when both sides round-trip it: the SDK's dump
equals the input, and the generated package's encoding contains it (it may add schema defaults).

Timing: each (message, op) is a `timeit` loop calibrated to about --target-ms; every sweep times
every op of every message back to back, and a figure is the median over --sweeps sweeps. An
aggregate is the sum over messages of per-message times; aggregate ratios are paired (the ratio of
the two sums within each sweep, then the median over sweeps).

Corpus: each --corpus folder holds `<DefName>.json` files (one instance or a list of instances of
`$defs/<DefName>`; tests/fixtures/messages/<version>/ has this layout) and/or `*.jsonl` files of
JSON-RPC frames (bare, or as scripts/record_interop.py records them: {"run", "direction",
"message"}): a request or notification is typed through the package's METHODS table, a response by
the request it answers (same run and id, opposite direction) or by a `method` recorded beside
`result`, an error response as `Error`; other frames are counted as skipped.

    python benchmarks/bench_codec.py [--corpus DIR ...] [--package acp_v1] [--sdk acp.schema]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import timeit
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import GENERATED, ROOT, median, rel, sdk_version, table, write_json

# The session/update notification carries many kinds of update: each is its own message kind.
SPLIT_BY = {"SessionNotification": ("update", "sessionUpdate"),
            "UpdateSessionNotification": ("update", "sessionUpdate")}


@dataclass
class Message:
    kind: str
    def_name: str
    data: Any
    text: str
    source: str


@dataclass
class Corpus:
    messages: list[Message] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def kind_of(def_name: str, data: Any) -> str:
    path = SPLIT_BY.get(def_name)
    if path and isinstance(data, dict):
        inner = data.get(path[0])
        if isinstance(inner, dict) and isinstance(inner.get(path[1]), str):
            return f"{def_name}[{inner[path[1]]}]"
    return def_name


def frame_types(package: Any) -> dict[str, tuple[str, str | None]]:
    """wire method -> (params $defs name, result $defs name or None)."""
    return {m.method: (m.params_def, m.result_def) for m in getattr(package, "METHODS", ())}


def load_corpus(folders: Iterable[Path], package: Any) -> Corpus:
    corpus = Corpus()
    methods = frame_types(package)
    known = set(getattr(package, "DECODERS", {}))
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            items = json.loads(path.read_text(encoding="utf-8"))
            for item in items if isinstance(items, list) else [items]:
                add(corpus, path.stem, item, rel(path), known)
        for path in sorted(folder.glob("*.jsonl")):
            add_frames(corpus, path, methods, known)
    return corpus


def add_frames(corpus: Corpus, path: Path, methods: dict[str, tuple[str, str | None]], known: set[str]) -> None:
    """JSON-RPC frames, one per line: bare, or recorded as {"run", "direction", "message"}. A
    response is typed by the request it answers (same run, same id, opposite direction), or by a
    `method` the recording put beside `result`; an error response is an `Error`."""
    pending: dict[tuple[object, object, object], str] = {}  # (run, request direction, id) -> method
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        frame = record.get("message", record) if isinstance(record, dict) else None
        if not isinstance(frame, dict):
            corpus.skipped[f"{rel(path)}: not a JSON-RPC object"] += 1
            continue
        run, direction = record.get("run"), record.get("direction")
        method = frame.get("method")
        if method is not None and "params" in frame:
            if method not in methods:
                corpus.skipped[f"{rel(path)}: unknown method"] += 1
                continue
            if "id" in frame:
                pending[(run, direction, frame["id"])] = method
            add(corpus, methods[method][0], frame["params"], rel(path), known)
            continue
        back = {"client->agent": "agent->client", "agent->client": "client->agent"}.get(str(direction))
        method = method or pending.pop((run, back, frame.get("id")), None)
        if "error" in frame:
            add(corpus, "Error", frame["error"], rel(path), known)
        elif "result" in frame and method in methods and methods[method][1]:
            add(corpus, methods[method][1] or "", frame["result"], rel(path), known)
        else:
            corpus.skipped[f"{rel(path)}: frame without a known method"] += 1


def add(corpus: Corpus, def_name: str, data: Any, source: str, known: set[str]) -> None:
    if def_name not in known:
        corpus.skipped[f"{source}: no $defs/{def_name} in the package"] += 1
        return
    corpus.messages.append(Message(kind_of(def_name, data), def_name, data, json.dumps(data), source))


def contains(big: Any, small: Any) -> bool:
    """`big` holds everything `small` does (extra object keys allowed: materialised defaults)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(k in big and contains(big[k], v) for k, v in small.items())
    if isinstance(small, list):
        return (isinstance(big, list) and len(big) == len(small)
                and all(contains(b, s) for b, s in zip(big, small, strict=True)))
    return type(big) is type(small) and big == small


DUMP = {"mode": "json", "by_alias": True, "exclude_unset": True}


@dataclass
class Case:
    """One message with every operation ready to time (name -> (statement, namespace))."""

    message: Message
    ours_exact: bool
    ours_contains: bool
    sdk_status: str  # "ok", "no model", "rejects", "differs"
    ops: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    @property
    def common(self) -> bool:
        return self.sdk_status == "ok" and self.ours_contains


def prepare(message: Message, package: Any, sdk: Any | None) -> Case:
    decoder = package.DECODERS[message.def_name]
    obj = decoder(message.data)
    to_dict = getattr(obj, "to_dict", None) or (lambda: package.encode(obj))
    encoded = to_dict()
    ns: dict[str, Any] = {"json": json, "data": message.data, "text": message.text, "dec": decoder,
                          "to_dict": to_dict, "loads": json.loads, "dumps": json.dumps, "DUMP": DUMP}
    case = Case(message, encoded == message.data, contains(encoded, message.data), "no model")
    case.ops = {
        "json.loads": ("loads(text)", ns),
        "json.dumps": ("dumps(data)", ns),
        "acpgen decode dict": ("dec(data)", ns),
        "acpgen receive": ("dec(loads(text))", ns),
        "acpgen encode dict": ("to_dict()", ns),
        "acpgen send": ("dumps(to_dict())", ns),
    }
    model = getattr(sdk, message.def_name, None) if sdk is not None else None
    if model is None or not hasattr(model, "model_validate"):
        return case
    try:
        instance = model.model_validate(message.data)
    except Exception:
        case.sdk_status = "rejects"
        return case
    dumped = instance.model_dump(**DUMP)
    case.sdk_status = "ok" if dumped == message.data else "differs"
    ns.update(validate=model.model_validate, validate_json=model.model_validate_json,
              dump=instance.model_dump, dump_json=instance.model_dump_json)
    case.ops.update({
        "sdk decode dict": ("validate(data)", ns),
        "sdk receive": ("validate(loads(text))", ns),
        "pydantic validate_json": ("validate_json(text)", ns),
        "sdk encode dict": ("dump(**DUMP)", ns),
        "sdk send": ("dumps(dump(**DUMP))", ns),
        "pydantic dump_json": ('dump_json(by_alias=True, exclude_unset=True)', ns),
    })
    return case


def calibrate(stmt: str, ns: dict[str, Any], target: float) -> int:
    """Loop count for about `target` seconds, from the fastest of three trial runs (a trial that
    the machine happened to stall would otherwise give a tiny count dominated by timer overhead)."""
    timer = timeit.Timer(stmt, globals=ns)
    number = 1
    while True:
        elapsed = min(timer.repeat(3, number))
        if elapsed >= target / 10 or number >= 1_000_000:
            return max(1, int(number * target / max(elapsed, 1e-9)))
        number *= 10


def measure(cases: list[Case], sweeps: int, target: float) -> dict[tuple[int, str], list[float]]:
    """(case index, op) -> seconds per call, one value per sweep."""
    timers = {}
    for index, case in enumerate(cases):
        for op, (stmt, ns) in case.ops.items():
            timers[(index, op)] = (timeit.Timer(stmt, globals=ns), calibrate(stmt, ns, target))
    samples: dict[tuple[int, str], list[float]] = defaultdict(list)
    for _ in range(sweeps):
        for key, (timer, number) in timers.items():
            samples[key].append(timer.timeit(number) / number)
    return samples


# (label, numerator op, denominator op): "how many times faster acpgen is", > 1 = acpgen faster.
VERSUS = [
    ("decode dict: sdk / acpgen", "sdk decode dict", "acpgen decode dict"),
    ("receive (text): sdk loads+validate / acpgen loads+decode", "sdk receive", "acpgen receive"),
    ("receive (text): pydantic validate_json / acpgen loads+decode", "pydantic validate_json", "acpgen receive"),
    ("encode dict: sdk model_dump / acpgen to_dict", "sdk encode dict", "acpgen encode dict"),
    ("send (text): sdk dumps(model_dump) / acpgen dumps(to_dict)", "sdk send", "acpgen send"),
    ("send (text): pydantic dump_json / acpgen dumps(to_dict)", "pydantic dump_json", "acpgen send"),
]
OPS_ORDER = ["json.loads", "json.dumps", "acpgen decode dict", "acpgen receive", "acpgen encode dict",
             "acpgen send", "sdk decode dict", "sdk receive", "pydantic validate_json", "sdk encode dict",
             "sdk send", "pydantic dump_json"]


def summarise(cases: list[Case], samples: dict[tuple[int, str], list[float]],
              indices: list[int], sweeps: int) -> dict[str, Any]:
    ops = [op for op in OPS_ORDER if all((i, op) in samples for i in indices)]
    per_sweep = {op: [sum(samples[(i, op)][s] for i in indices) for s in range(sweeps)] for op in ops}
    totals = {op: median(v) for op, v in per_sweep.items()}
    x_loads = {op: median([a / b for a, b in zip(per_sweep[op], per_sweep["json.loads"], strict=True)])
               for op in ops}
    versus = {}
    for label, num, den in VERSUS:
        if num in per_sweep and den in per_sweep:
            versus[label] = median([a / b for a, b in zip(per_sweep[num], per_sweep[den], strict=True)])
    return {"messages": len(indices), "total_s": totals, "x_json_loads": x_loads, "versus": versus}


def run(folders: list[Path], package_name: str, sdk_name: str | None, sweeps: int, target_ms: float) -> dict[str, Any]:
    sys.path.insert(0, str(GENERATED))
    package = importlib.import_module(package_name)
    sdk = None
    if sdk_name:
        try:
            sdk = importlib.import_module(sdk_name)
        except ImportError:
            sdk = None
    corpus = load_corpus(folders, package)
    cases = [prepare(m, package, sdk) for m in corpus.messages]
    samples = measure(cases, sweeps, target_ms / 1000)
    by_kind: dict[str, list[int]] = defaultdict(list)
    for index, case in enumerate(cases):
        by_kind[case.message.kind].append(index)
    common = [i for i, c in enumerate(cases) if c.common]
    status = defaultdict(int)
    for case in cases:
        status[case.sdk_status] += 1
    return {
        "package": package_name,
        "sdk": sdk_name if sdk else None,
        "sdk_version": sdk_version() if sdk else None,
        "corpus": [rel(f) for f in folders],
        "sweeps": sweeps,
        "target_ms": target_ms,
        "messages": len(cases),
        "skipped": dict(corpus.skipped),
        "fidelity": {
            "acpgen round trip exact": sum(c.ours_exact for c in cases),
            "acpgen round trip contains input": sum(c.ours_contains for c in cases),
            "sdk": dict(status),
            "common": len(common),
        },
        "not_common": sorted({f"{c.message.kind} ({c.sdk_status})" for c in cases if not c.common}),
        "aggregate_all": summarise(cases, samples, list(range(len(cases))), sweeps),
        "aggregate_common": summarise(cases, samples, common, sweeps) if common else None,
        "kinds": {kind: summarise(cases, samples, [i for i in idx if cases[i].common] or idx, sweeps)
                  | {"common": all(cases[i].common for i in idx)}
                  for kind, idx in sorted(by_kind.items())},
    }


def markdown(data: dict[str, Any]) -> str:
    fid = data["fidelity"]
    out = [
        f"Package `{data['package']}` vs `{data['sdk']}` (agent-client-protocol {data.get('sdk_version', '?')}) on "
        f"{data['messages']} messages from "
        + ", ".join(f"`{c}`" for c in data["corpus"])
        + f"; {data['sweeps']} sweeps, timeit loops of about {data['target_ms']} ms.",
        "",
        f"Round trips: acpgen exact {fid['acpgen round trip exact']}/{data['messages']}, "
        f"contains the input (schema defaults materialised) {fid['acpgen round trip contains input']}/"
        f"{data['messages']}; SDK: {', '.join(f'{k} {v}' for k, v in sorted(fid['sdk'].items()))}. "
        f"**{fid['common']} messages both round-trip** and make the comparison set.",
        "",
    ]
    if data["skipped"]:
        out.append("Skipped while loading: " + "; ".join(f"{k} ({v})" for k, v in data["skipped"].items()) + "\n")
    for title, agg in (("Aggregate over the comparison set", data["aggregate_common"]),
                       ("Aggregate over every message (acpgen and the floor only where the SDK fails)",
                        data["aggregate_all"])):
        if not agg:
            continue
        out.append(f"**{title}** ({agg['messages']} messages)\n")
        rows = [[op, f"{agg['total_s'][op] * 1e6:.1f}", f"{agg['x_json_loads'][op]:.2f}"] for op in agg["total_s"]]
        out.append(table(["operation", "sum of medians (us)", "x json.loads (paired)"], rows))
        out.append("")
        if agg["versus"]:
            out.append(table(["ratio (paired, > 1: acpgen faster)", "x"],
                             [[k, f"**{v:.2f}**"] for k, v in agg["versus"].items()]))
            out.append("")
    out.append("**Per message kind** (comparison set where the kind has one; x = sdk / acpgen, paired; "
               "times are sums of per-message medians in us)\n")
    rows = []
    for kind, k in data["kinds"].items():
        t = k["total_s"]
        x = [next((f"{val:.2f}" for lab, val in k["versus"].items() if lab.startswith(label)), "-")
             for label in ("decode dict", "receive (text): sdk", "encode dict", "send (text): sdk")]
        rows.append([kind + ("" if k["common"] else " *"), k["messages"], f"{t['json.loads'] * 1e6:.1f}",
                     f"{t['acpgen decode dict'] * 1e6:.1f}", x[0], x[1],
                     f"{t['acpgen encode dict'] * 1e6:.1f}", x[2], x[3]])
    out.append(table(["kind", "n", "json.loads", "acpgen decode", "x decode", "x receive",
                      "acpgen encode", "x encode", "x send"], rows))
    out.append("\n`*` = not every message of this kind round-trips through the SDK (no model, rejected, "
               "or its dump differs: fields newer than SDK 0.12.1's schema are dropped); the row then "
               "covers only the messages that do, or acpgen alone when none does.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append",
                        help="folder of messages (repeatable; default tests/fixtures/messages/v1 "
                        "and tests/fixtures/interop)")
    parser.add_argument("--package", default="acp_v1", help="generated package (under generated/)")
    parser.add_argument("--sdk", default="acp.schema", help="pydantic models module ('' for none)")
    parser.add_argument("--sweeps", type=int, default=15)
    parser.add_argument("--target-ms", type=float, default=3.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    folders = args.corpus or [ROOT / "tests" / "fixtures" / "messages" / "v1", ROOT / "tests" / "fixtures" / "interop"]
    write_json(args.json, run(folders, args.package, args.sdk or None, args.sweeps, args.target_ms))


if __name__ == "__main__":
    main()
