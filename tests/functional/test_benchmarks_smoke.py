"""The benchmark scripts run on tiny inputs and report what they measured (no timed assertions)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_codec
import bench_generation
import bench_growth
import bench_idle
import bench_import
import bench_models
import bench_remote
import bench_runtime
import run as bench_run
import synth_schema

FIXTURES = ROOT / "tests" / "fixtures" / "messages" / "v1"


def test_codec_on_a_tiny_corpus(tmp_path: Path) -> None:
    for name in ("PromptRequest", "ArchiveSessionRequest"):
        shutil.copy(FIXTURES / f"{name}.json", tmp_path)
    prompt = json.loads((FIXTURES / "PromptRequest.json").read_text())[0]
    frames = [  # bare frames: a request, a response typed by a recorded `method`, an untyped one
        {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": prompt},
        {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "result": {"stopReason": "end_turn"}},
        {"jsonrpc": "2.0", "id": 2, "result": {}},
    ]
    recorded = [  # as scripts/record_interop.py writes them: a response typed by its request
        {"run": "r", "direction": "client->agent", "message": {"jsonrpc": "2.0", "id": 7, "method": "session/new",
                                                               "params": {"cwd": "/p", "mcpServers": []}}},
        {"run": "r", "direction": "agent->client", "message": {"jsonrpc": "2.0", "id": 7, "result": {"sessionId": "s"}}},
        {"run": "r", "direction": "agent->client", "message": {"jsonrpc": "2.0", "id": 8,
                                                               "error": {"code": -32601, "message": "nope"}}},
    ]
    (tmp_path / "bare.jsonl").write_text("\n".join(json.dumps(f) for f in frames) + "\n")
    (tmp_path / "recorded.jsonl").write_text("\n".join(json.dumps(f) for f in recorded) + "\n")
    data = bench_codec.run([tmp_path], "acp_v1", "acp.schema", sweeps=1, target_ms=0.05)
    n_prompt = len(json.loads((FIXTURES / "PromptRequest.json").read_text()))
    assert data["messages"] == n_prompt + 1 + 2 + 3  # the .json instances and five typed frames
    assert data["skipped"] == {"bare.jsonl: frame without a known method": 1}
    # ArchiveSessionRequest is newer than the SDK: timed for acpgen only, outside the common set
    assert data["fidelity"]["sdk"]["no model"] == 1
    assert data["fidelity"]["common"] == n_prompt + 2 + 3
    common = data["aggregate_common"]
    assert common["messages"] == n_prompt + 2 + 3
    assert all(t > 0 for t in common["total_s"].values())
    assert set(common["versus"]) == {label for label, _, _ in bench_codec.VERSUS}
    assert {"PromptResponse", "NewSessionRequest", "NewSessionResponse", "Error", "ArchiveSessionRequest"} <= set(data["kinds"])
    text = bench_codec.markdown(data)
    assert "| PromptRequest |" in text and "| ArchiveSessionRequest * |" in text


def test_corpus_splits_session_updates_by_kind() -> None:
    import acp_v1

    corpus = bench_codec.load_corpus([FIXTURES], acp_v1)
    kinds = {m.kind for m in corpus.messages if m.def_name == "SessionNotification"}
    assert {"SessionNotification[agent_message_chunk]", "SessionNotification[tool_call]"} <= kinds


def test_import_probe_measures_a_generated_package() -> None:
    data = bench_import.run(1, ["acp_v0_4", "no_such_module_here"])
    assert data["missing"] == ["no_such_module_here"]
    row = data["modules"]["acp_v0_4"]
    assert 0 < row["import_s"] < row["process_s"]
    assert "`import acp_v0_4`" in bench_import.markdown(data)


def test_models_benchmark_compares_with_a_commit() -> None:
    fixtures = FIXTURES.parent / "v0_4"
    data = bench_models.run("HEAD", ["acp_v0_4"], "acp_v0_4", [fixtures], runs=1, sweeps=1, target_ms=0.05)
    lines = data["lines"]["acp_v0_4"]
    assert lines["before"] > 1000 and lines["after"] > 1000
    assert data["codec"]["messages"] > 10 and set(data["codec"]["ops"]) == {"decode", "encode", "encode (checked)", "construct"}
    assert all(op["before_s"] > 0 and op["after_s"] > 0 for op in data["codec"]["ops"].values())
    assert data["import"]["acp_v0_4"]["after_s"] > 0
    assert "**models.py lines**" in bench_models.markdown(data)


def test_synthetic_schema_builds(tmp_path: Path) -> None:
    schema = synth_schema.make_schema(30)
    assert len(schema["$defs"]) == 30
    assert schema == synth_schema.make_schema(30)  # deterministic
    assert not any(name[-1].isdigit() for name in schema["$defs"])
    data = bench_growth.run([12, 30], runs=1)
    assert [r["definitions"] for r in data["rows"]] == [12, 30]
    assert all(r["median_s"] > 0 and r["peak_rss_mib"] > 0 for r in data["rows"])
    assert "marginal_per_def_ms" in data["rows"][1]


@pytest.mark.parametrize("only", ["runtime"])
def test_run_writes_results(tmp_path: Path, only: str) -> None:
    out = tmp_path / "RESULTS.md"
    bench_run.main(["--quick", "--only", only, "--output", str(out), "--work", str(tmp_path / "work"),
                    "--profiles", str(tmp_path / "none.md")])
    text = out.read_text()
    assert text.startswith("# acpgen benchmarks")
    assert "| python | CPython" in text and "| agent-client-protocol | 0.12.1 |" in text
    assert "## Runtime" in text
    raw = json.loads((tmp_path / "work" / "runtime.json").read_text())
    assert raw["status"] == "ok" and raw["updates_per_turn"] == 100
    assert len(raw["rates"]["acpgen"]) == len(raw["rates"]["sdk"]) == 1
    assert all(rate > 0 for rates in raw["rates"].values() for rate in rates)
    assert "prompt turns over stdio: acpgen / SDK 0.12.1" in text
    assert "SDK: agent-client-protocol 0.12.1." in text
    split = raw["split"]  # the quick run's one-update turns split each turn's time
    assert raw["short_turns"] == 5 and all(split[name]["one_update_turn_ms"] > 0 for name in ("acpgen", "sdk"))
    assert "stdio, time each update adds: SDK 0.12.1 / acpgen" in text and "turn with 1 update" in text


def test_run_measures_the_sdk_1_0_in_the_same_run(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    bench_run.main(["--quick", "--only", "runtime,runtime-sdk1", "--output", str(out), "--work",
                    str(tmp_path / "work"), "--profiles", str(tmp_path / "none.md")])
    text = out.read_text()
    raw = json.loads((tmp_path / "work" / "runtime-sdk1.json").read_text())
    assert raw["status"] == "ok" and raw["sdk_version"] == "1.0.0rc3", raw
    assert "SDK: agent-client-protocol 1.0.0rc3." in text and "SDK: agent-client-protocol 0.12.1." in text
    assert "prompt turns over stdio: acpgen / SDK 1.0.0rc3" in text
    assert "`.venv-sdk1/bin/python benchmarks/bench_runtime.py" in text


def test_remote_turns_are_measured_over_both_profiles() -> None:
    data = bench_remote.run(rounds=1, turns=1, n_updates=5, short_turns=1)
    assert data["status"] == "ok"
    for profile in ("ws", "http"):
        figures = data[profile]
        assert set(figures["turns_per_s"]) == {"acpgen", "sdk"}
        assert all(rate > 0 for rate in figures["turns_per_s"].values())
        assert set(figures["short_turns_per_s"]) == {"acpgen", "sdk"} and "x_sdk_per_update" in figures["split"]
    text = bench_remote.markdown(data)
    assert "Streamable HTTP (HTTP/2)" in text and "turn with 1 update" in text


def test_update_replaces_a_section_and_keeps_the_blank_line_before_the_next() -> None:
    text = "# head\n\n## Targets\n\n| a | 1 |\n\n## One\n\nold\n\n## Two\n\nkept\n"
    updated = bench_run.update(text, "", ["## One\n\nnew\n"])
    assert updated == "# head\n\n## Targets\n\n| a | 1 |\n\n## One\n\nnew\n\n## Two\n\nkept\n"
    assert bench_run.update(updated, "", ["## Two\n\nlast\n"]).endswith("## One\n\nnew\n\n## Two\n\nlast\n")


def test_a_turn_splits_into_its_one_update_turn_and_what_each_update_adds() -> None:
    # acpgen: 1 ms with one update, 10 ms with 100 (so 9/99 ms an update); the SDK: 2 and 40 ms.
    split = bench_runtime.split_turn({"acpgen": 100.0, "sdk": 25.0}, {"acpgen": 1000.0, "sdk": 500.0}, 100)
    assert split["acpgen"]["one_update_turn_ms"] == pytest.approx(1.0)
    assert split["acpgen"]["per_update_ms"] == pytest.approx(9 / 99)
    assert split["sdk"]["per_update_ms"] == pytest.approx(38 / 99)
    assert split["x_sdk_per_update"] == pytest.approx(38 / 9)
    assert split["x_sdk_one_update"] == pytest.approx(2.0)
    # 4x the SDK's 40 ms turn is 10 ms: after acpgen's 1 ms, 9 ms for 99 updates.
    assert split["per_update_ms_for_target"] == pytest.approx(9 / 99)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the load benchmark reads RSS from /proc")
def test_load_benchmark_reports_floods_and_a_large_message() -> None:
    import bench_load

    data = bench_load.run(requests=300, size_mb=1, runs=1, settle=0.1)
    assert data["status"] == "ok"
    floods = data["flood"]
    assert isinstance(floods, dict) and set(floods) == {"initialize", "prompt"}
    for by_impl in floods.values():
        assert set(by_impl) == {"acpgen", "sdk"}
        assert all(f["peak_kib"] >= f["baseline_kib"] > 0 and f["requests_written"] > 0 for f in by_impl.values())
    large = data["large"]
    assert isinstance(large, dict)
    assert all(b["answer"] == {"stopReason": "end_turn"} and b["size_bytes"] > 1_000_000 for b in large.values())
    text = bench_load.markdown(data)
    assert "| prompt flood | acpgen |" in text and "Memory per large message" in text


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the flood benchmark reads RSS from /proc")
def test_flood_benchmark_reports_peaks_and_what_the_server_answered() -> None:
    import bench_flood

    data = bench_flood.run(["uvicorn"], ["session-new"], 256.0)
    assert data["status"] == "ok"
    (figures,) = data["results"].values()  # type: ignore[union-attr]
    assert figures["sessions_opened"] == 32 and figures["refused"] == 268  # max_sessions counted at admission
    assert figures["peak_mib"] >= figures["baseline_mib"] > 0
    assert "| uvicorn session-new |" in bench_flood.markdown(data)


def test_idle_connection_memory_is_measured_for_both_bindings() -> None:
    data = bench_idle.run(n=20, runs=1)
    assert set(data["rows"]) == {"acpgen", "sdk"} and data["sdk"] == "0.12.1"
    assert all(r["heap_kib"] > 0 for r in data["rows"].values())  # a connection holds some Python objects
    assert "RSS KiB / connection" in bench_idle.markdown(data)


def test_the_build_is_measured_beside_its_floor() -> None:
    cmds = bench_generation.commands("v0_4", with_dmcg=False)
    floor = cmds["floor: python start + one ruff run"]
    assert "--check" in floor[-1] and "models.py" in floor[-1]  # ruff over the files a build formats
    assert "runtime" not in bench_generation.FORMATTED and "rpc.py" not in bench_generation.FORMATTED
    for name in ("floor: python start + one ruff run", "acpgen imports (no build)"):
        assert bench_generation.run_process(cmds[name]).returncode == 0, name
