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
import shutil
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
# Early stable releases whose meta.json lists methods no `x-method` of their schema names: with the
# meta found beside the schema (the card's command) that is a warning, with --meta an error.
META_UNANNOTATED = {f"acp_release_{v}_schema_schema_json" for v in (
    "v0_0_14", "v0_0_16", "v0_0_17", "v0_0_18", "v0_0_19", "v0_0_27", "v0_0_30", "v0_1_3_alpha_0",
    "v0_2_0_alpha_3", "v0_2_0_alpha_4", "v0_2_0_alpha_6", "v0_2_0_alpha_7", "v0_2_0_alpha_8", "v0_2_0", "v0_2_1")}


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
    assert {c.package for c in CASES} >= META_UNANNOTATED


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Result]]:
    out = tmp_path_factory.mktemp("acp_releases")
    results = {}
    for case in CASES:
        # As published: the release's meta.json beside its schema.json, where the build finds it.
        folder = out / "src" / case.package
        folder.mkdir(parents=True)
        shutil.copy(CORPUS / case.stable, folder / "schema.json")
        if case.meta:
            shutil.copy(CORPUS / case.meta, folder / "meta.json")
        target = Target(
            name=case.package, schema=folder / "schema.json", output=out / case.package, package=case.package,
            unstable=CORPUS / case.unstable if case.unstable else None,
            include_unstable=case.unstable is not None, find_unstable=False, command="acpgen build schema.json",
        )
        results[case.package] = build(target)
    return out, results


@pytest.mark.parametrize("case", [pytest.param(c, id=c.package.removeprefix("acp_release_")) for c in CASES])
def test_every_release_builds_imports_and_names_every_type(
    case: Case, built: tuple[Path, dict[str, Result]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, results = built
    result = results[case.package]
    assert result.ok, [d.render() for d in result.diagnostics if d.level == "error"]
    unannotated = any(d.code == "meta-unknown-method" for d in result.diagnostics)
    assert unannotated == (case.package in META_UNANNOTATED)
    monkeypatch.syspath_prepend(str(out))
    importlib.invalidate_caches()
    pkg = importlib.import_module(case.package)
    stated = json.loads((CORPUS / case.meta).read_text(encoding="utf-8")).get("version") if case.meta else None
    # the release's meta.json states the version the package negotiates; without one it knows none
    assert ((stated,) if isinstance(stated, int) else ()) == pkg.SUPPORTED_PROTOCOL_VERSIONS
    document: dict[str, Any] = json.loads((CORPUS / (case.unstable or case.stable)).read_text(encoding="utf-8"))
    defs = document.get("$defs", document.get("definitions", {}))
    assert set(pkg.TYPES) == set(defs)
    models = importlib.import_module(case.package + ".models")
    numbered = sorted(n for n in vars(models) if not n.startswith("_") and NUMBERED.search(n) and n not in defs)
    assert numbered == [], f"{case.package}: names invented from a position: {numbered}"


def test_every_release_passes_mypy_strict(built: tuple[Path, dict[str, Result]]) -> None:
    out, results = built
    packages = [p for p, r in results.items() if r.ok]
    assert set(results) == set(packages)
    args = [a for p in sorted(packages) for a in ("-p", p)]
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(out / ".mypy"), *args],
                          cwd=out, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-5000:]
