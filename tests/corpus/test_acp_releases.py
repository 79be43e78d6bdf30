"""Every ACP release as the spec repository tagged it (tests/corpus/acp-releases/, provenance in its
SOURCES.json: repository, tag, commit, path and sha256 of every file): each stable + unstable pair
builds with the card's command (`acpgen build schema.json`, the unstable file and the `meta.json`
published beside it read), and so does every stable file a tag published alone (15 of those are
refused today with their own meta.json: META_REFUSED). Each package imports, lists
every `$defs` entry, has no invented numbered names, and all of them pass one `mypy --strict` run.

`python scripts/fetch_acp_releases.py --check-local` verifies the files; with `--git-dir CLONE` it
compares them against a clone's tags.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from acpgen.config import Target
from acpgen.pipeline import Result, build
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "corpus"
SOURCES = json.loads((CORPUS / "acp-releases" / "SOURCES.json").read_text(encoding="utf-8"))
# A name the generator invented from a position: a letter then digits at the end (`SessionUpdateVariant4`).
NUMBERED = re.compile(r"[A-Za-z]\d+$")


class Case(NamedTuple):
    package: str
    stable: str
    unstable: str | None
    meta: str | None


def cases() -> list[Case]:
    def package(where: str) -> str:
        return "acp_release_" + re.sub(r"\W", "_", where).strip("_")

    out = [Case(package(p["published"][0]), p["stable"], p["unstable"], p["meta"]) for p in SOURCES["pairs"]]
    paired = {p["stable"] for p in SOURCES["pairs"]}
    for record in SOURCES["files"]:
        alone = [p for p in record["published"] if p["path"].endswith("schema.json") and "unstable" not in p["path"]]
        if alone and record["file"] not in paired:
            first = alone[0]
            meta = next((r["file"] for r in SOURCES["files"] for p in r["published"]
                         if p["tag"] == first["tag"] and p["path"] == first["path"].replace("schema.json", "meta.json")), None)
            out.append(Case(package(f"{first['tag']}:{first['path']}"), record["file"], None, meta))
    return out


CASES = cases()
# Stable releases refused today with the meta.json published beside them (the card's command reads
# it): meta-unknown-method, the meta lists methods no `x-method` of those early schemas names.
# Strict: a fix must drop them from the list (issue 20).
META_REFUSED = {f"acp_release_{v}_schema_schema_json" for v in (
    "v0_0_14", "v0_0_16", "v0_0_17", "v0_0_18", "v0_0_19", "v0_0_27", "v0_0_30", "v0_1_3_alpha_0",
    "v0_2_0_alpha_3", "v0_2_0_alpha_4", "v0_2_0_alpha_6", "v0_2_0_alpha_7", "v0_2_0_alpha_8", "v0_2_0", "v0_2_1")}
STRICT_XFAIL = pytest.mark.xfail(strict=True, reason="meta-unknown-method with the release's own meta.json (issue 20)")


def test_the_release_corpus_matches_its_sources() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_acp_releases.py"), "--check-local"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert SOURCES["repository"] == "agentclientprotocol/agent-client-protocol"
    tags = {p["tag"] for r in SOURCES["files"] for p in r["published"]}
    # The first tag (a root schema.json), the v1/v2 folders, and the schema-v* release line are all in.
    assert {"v0.0.1", "v0.7.0", "v1.0.0", "schema-v2.0.0-alpha.1"} <= tags
    assert all(re.fullmatch(r"[0-9a-f]{40}", p["commit"]) for r in SOURCES["files"] for p in r["published"])
    assert len({c.package for c in CASES}) == len(CASES)
    assert {c.package for c in CASES} >= META_REFUSED


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Result]]:
    out = tmp_path_factory.mktemp("acp_releases")
    results = {}
    for case in CASES:
        target = Target(
            name=case.package, schema=CORPUS / case.stable, output=out / case.package, package=case.package,
            unstable=CORPUS / case.unstable if case.unstable else None,
            meta=CORPUS / case.meta if case.meta else None,
            include_unstable=case.unstable is not None, find_unstable=False, command="acpgen build schema.json",
        )
        results[case.package] = build(target)
    return out, results


@pytest.mark.parametrize("case", [pytest.param(c, id=c.package.removeprefix("acp_release_"),
                                               marks=[STRICT_XFAIL] if c.package in META_REFUSED else [])
                                  for c in CASES])
def test_every_release_builds_imports_and_names_every_type(
    case: Case, built: tuple[Path, dict[str, Result]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, results = built
    result = results[case.package]
    assert result.ok, [d.render() for d in result.diagnostics if d.level == "error"]
    monkeypatch.syspath_prepend(str(out))
    importlib.invalidate_caches()
    pkg = importlib.import_module(case.package)
    document: dict[str, Any] = json.loads((CORPUS / (case.unstable or case.stable)).read_text(encoding="utf-8"))
    defs = document.get("$defs", document.get("definitions", {}))
    assert set(pkg.TYPES) == set(defs)
    models = importlib.import_module(case.package + ".models")
    numbered = sorted(n for n in vars(models) if not n.startswith("_") and NUMBERED.search(n) and n not in defs)
    assert numbered == [], f"{case.package}: names invented from a position: {numbered}"


def test_every_release_passes_mypy_strict(built: tuple[Path, dict[str, Result]]) -> None:
    out, results = built
    packages = [p for p, r in results.items() if r.ok]
    assert set(results) - set(packages) == META_REFUSED
    args = [a for p in sorted(packages) for a in ("-p", p)]
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(out / ".mypy"), *args],
                          cwd=out, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-5000:]
