"""The published-schema corpus (tests/corpus/, provenance in tests/corpus/SOURCES.json): every
distinct schema file any published version of the two ACP npm packages ships builds with no
configuration, alone and merged with its unstable companion, and the package imports, lists every
`$defs` entry and routes every method (or the build warned why not). No release ships message
fixtures, so there are none to replay.

`ACPGEN_CORPUS_SLOW=1` adds the slow layer (about 10 minutes): one instance of every definition,
generated from the schema itself, round-trips (encode(decode(x)) against the wire normalisations),
and `mypy --strict` passes on every built package.
`python scripts/fetch_corpus.py --check-local` verifies the files; `--discover` refreshes them.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from acpgen.config import Target
from acpgen.load import load_schema
from acpgen.pipeline import build
from tests.conftest import ROOT
from tests.schema_strategies import SchemaStrategies
from tests.wire_semantics import WireSemantics

CORPUS = ROOT / "tests" / "corpus"
SOURCES = json.loads((CORPUS / "SOURCES.json").read_text(encoding="utf-8"))
SLOW = os.environ.get("ACPGEN_CORPUS_SLOW", "") not in ("", "0")


def cases() -> list[Any]:
    out = [pytest.param(r["file"], None, id=r["file"]) for r in SOURCES["files"]]
    out += [pytest.param(p["stable"], p["unstable"], id=f"{p['stable']}+{p['unstable']}") for p in SOURCES["pairs"]]
    return out


def test_the_corpus_matches_its_sources() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_corpus.py"), "--check-local"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    # acp-releases/, real/ and jsts/ have their own SOURCES.json and tests (test_acp_releases.py,
    # test_real_schemas.py, test_jsts_suite.py).
    files = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.json")
             if p.relative_to(CORPUS).parts[0] not in ("acp-releases", "real", "jsts")} - {"SOURCES.json"}
    assert files == {r["file"] for r in SOURCES["files"]}
    # Both packages, stable and unstable files, several schema generations.
    packages = {s["package"] for r in SOURCES["files"] for s in r["shipped_in"]}
    assert packages == {"@zed-industries/agent-client-protocol", "@agentclientprotocol/sdk"}
    assert any(r["file"].endswith(".unstable.json") for r in SOURCES["files"]) and SOURCES["pairs"]


ONE_EXAMPLE = settings(max_examples=1, derandomize=True, database=None, deadline=None,
                       suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(("stable", "unstable"), cases())
def test_every_published_schema_builds_imports_and_round_trips(
    stable: str, unstable: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = "corpus_" + "".join(c if c.isalnum() else "_" for c in stable + (unstable or ""))
    schema = CORPUS / stable
    target = Target(name=package, schema=schema, output=tmp_path / package, package=package,
                    unstable=CORPUS / unstable if unstable else None, include_unstable=unstable is not None,
                    find_unstable=False, command="acpgen build (corpus test)")
    result = build(target)
    assert result.ok, [d.render() for d in result.diagnostics if d.level == "error"]
    unrouted = {d.message.split("x-method ")[1].split(" ")[0].strip("'\"") for d in result.diagnostics
                if d.code == "unrouted-method-type"}
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    pkg = importlib.import_module(package)
    loaded, reports = load_schema(schema, target.unstable, None, find_companion=False)
    assert loaded is not None, [d.render() for r in reports for d in r.items]
    document = loaded.effective.document
    defs = document.get("$defs", document.get("definitions", {}))
    assert set(pkg.TYPES) == set(defs)
    wired = {s["x-method"] for s in defs.values() if isinstance(s, dict) and isinstance(s.get("x-method"), str)}
    routed = {m.method for m in pkg.METHODS}
    # A method type no routing definition mentions is left out of the table, never silently.
    assert wired - routed == unrouted - routed, sorted(wired - routed)
    assert set(pkg.AGENT_METHODS) | set(pkg.CLIENT_METHODS) <= routed

    if SLOW:
        strategies = SchemaStrategies(document)
        wire = WireSemantics(strategies)
        # Every definition round-trips (a union inside an object variant, as 0.5.1's response
        # envelopes have, is read from and written into the object).
        for def_name in sorted(strategies.defs):
            round_trip(pkg, wire, def_name, strategies)
        mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
                               os.devnull, package], cwd=tmp_path, capture_output=True, text=True, timeout=900)
        assert mypy.returncode == 0, mypy.stdout[-3000:]
    del sys.modules[package]


def round_trip(pkg: Any, wire: WireSemantics, def_name: str, strategies: SchemaStrategies) -> None:
    @ONE_EXAMPLE
    @given(strategies.strategy(def_name))
    def check(instance: Any) -> None:
        encoded = pkg.encode(pkg.decode(def_name, instance))
        assert encoded == wire.normalise_def(def_name, instance), (def_name, instance, encoded)

    check()
