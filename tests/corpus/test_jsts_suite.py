"""The JSON-Schema-Test-Suite (draft2020-12) through acpgen: the per-keyword table is committed
(tests/corpus/jsts/RESULTS.md) so any change shows in review, and silent and crash must be 0.

After an intended change: ACPGEN_UPDATE_JSTS=1 pytest tests/corpus/test_jsts_suite.py, then review the
diff of RESULTS.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import jsts_runner

RESULTS = jsts_runner.ROOT / "tests" / "corpus" / "jsts" / "RESULTS.md"
SOURCES = jsts_runner.ROOT / "tests" / "corpus" / "jsts" / "SOURCES.json"


@pytest.fixture(scope="module")
def package_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("jsts")


@pytest.fixture(scope="module")
def outcomes(package_dir: Path) -> list[jsts_runner.Outcome]:
    results, _ = jsts_runner.run(keep=package_dir)
    return results


def test_the_package_passes_mypy_strict(outcomes: list[jsts_runner.Outcome], package_dir: Path) -> None:
    """Every output type-checks, the suite's odd schemas (checked JSON values, nested nullable
    unions, literal helpers) included."""
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
                           str(package_dir / ".mypy"), "-p", jsts_runner.PACKAGE],
                          cwd=package_dir, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_vendored_files_match_their_provenance() -> None:
    doc = json.loads(SOURCES.read_text(encoding="utf-8"))
    listed = {rec["file"] for rec in doc["files"]}
    on_disk = {p.relative_to(SOURCES.parent).as_posix() for p in jsts_runner.SUITE.glob("*.json")}
    assert on_disk == {f for f in listed if f.startswith("draft2020-12/")}
    for rec in doc["files"]:
        data = (SOURCES.parent / rec["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == rec["sha256"], rec["file"]


def test_every_test_is_classified(outcomes: list[jsts_runner.Outcome]) -> None:
    groups = jsts_runner.load_groups()
    assert len(outcomes) == sum(len(g.tests) for g in groups) > 1000
    assert {o.outcome for o in outcomes} <= set(jsts_runner.OUTCOMES)


def test_table_matches_the_committed_one(outcomes: list[jsts_runner.Outcome]) -> None:
    got = jsts_runner.table(outcomes)
    if os.environ.get("ACPGEN_UPDATE_JSTS"):
        RESULTS.write_text(got, encoding="utf-8")
    assert got == RESULTS.read_text(encoding="utf-8"), (
        "the suite table changed: review it, then ACPGEN_UPDATE_JSTS=1 to update tests/corpus/jsts/RESULTS.md")


def test_refusals_are_located_in_their_group(outcomes: list[jsts_runner.Outcome]) -> None:
    for o in outcomes:
        if o.outcome == "refused":
            assert any(d.pointer.startswith(o.group.pointer) and d.level == "error" for d in o.group.errors)


def test_nothing_silent_nothing_crashes(outcomes: list[jsts_runner.Outcome]) -> None:
    bad = [o for o in outcomes if o.outcome in ("silent", "crash")]
    assert not bad, jsts_runner.details(bad)[:4000]


def test_most_tests_agree(outcomes: list[jsts_runner.Outcome]) -> None:
    agree = sum(o.outcome == "agree" for o in outcomes)
    assert agree >= 1100, f"{agree} tests agree"
