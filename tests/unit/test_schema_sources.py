"""The vendored schema files match their recorded provenance (schema/SOURCES.json)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"
RECORDS = json.loads((SCHEMA_DIR / "SOURCES.json").read_text(encoding="utf-8"))
REQUIRED_KEYS = {"file", "package", "version", "path_in_package", "sha256"}


def test_records_are_well_formed() -> None:
    assert isinstance(RECORDS, list) and RECORDS
    files = [rec["file"] for rec in RECORDS]
    assert len(files) == len(set(files)), "a file is recorded twice"
    for rec in RECORDS:
        assert set(rec) >= REQUIRED_KEYS, rec
        assert len(rec["sha256"]) == 64 and int(rec["sha256"], 16) >= 0, rec


@pytest.mark.parametrize("record", RECORDS, ids=[rec["file"] for rec in RECORDS])
def test_committed_file_matches_recorded_sha256(record: dict) -> None:
    path = SCHEMA_DIR / record["file"]
    assert path.is_file(), f"schema/{record['file']} is recorded but missing"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == record["sha256"], (
        f"schema/{record['file']} changed; re-fetch with scripts/fetch_schemas.py --write "
        "or update SOURCES.json deliberately"
    )


def test_every_schema_file_is_recorded() -> None:
    recorded = {rec["file"] for rec in RECORDS}
    present = {
        path.relative_to(SCHEMA_DIR).as_posix()
        for path in SCHEMA_DIR.rglob("*.json")
        if path.name != "SOURCES.json"
    }
    unrecorded = sorted(present - recorded)
    assert not unrecorded, f"schema files without a SOURCES.json record: {unrecorded}"
