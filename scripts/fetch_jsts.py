#!/usr/bin/env python3
"""Re-fetch and verify the vendored JSON-Schema-Test-Suite files listed in tests/corpus/jsts/SOURCES.json.

The suite ships inside the jsonschema sdist on PyPI; SOURCES.json names the sdist, its sha256,
and for every vendored file its path inside the sdist and its sha256. Uses the standard library
plus the `pip` client (`pip download --no-deps --no-binary :all:`).

    python scripts/fetch_jsts.py               # download, verify against SOURCES.json
    python scripts/fetch_jsts.py --write       # download, verify, then copy into tests/corpus/jsts/
    python scripts/fetch_jsts.py --check-local # verify the committed files only (no network)

Exit status is 0 when everything matches and 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SUITE_DIR = REPO_ROOT / "tests" / "corpus" / "jsts"
SOURCES = SUITE_DIR / "SOURCES.json"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_sources(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    for key in ("package", "version", "sdist", "sdist_sha256", "files"):
        if key not in doc:
            raise SystemExit(f"error: {path.name} lacks {key!r}")
    for i, rec in enumerate(doc["files"]):
        missing = [k for k in ("file", "path_in_sdist", "sha256") if k not in rec]
        if missing:
            raise SystemExit(f"error: file record {i} in {path.name} lacks {', '.join(missing)}")
        target = (SUITE_DIR / rec["file"]).resolve()
        if SUITE_DIR.resolve() not in target.parents:
            raise SystemExit(f"error: file record {i} points outside tests/corpus/jsts/: {rec['file']!r}")
    return doc


def check_local(doc: dict) -> int:
    failures = 0
    for rec in doc["files"]:
        target = SUITE_DIR / rec["file"]
        if not target.is_file():
            print(f"MISSING   {rec['file']}")
            failures += 1
        elif sha256_bytes(target.read_bytes()) != rec["sha256"]:
            print(f"MISMATCH  {rec['file']}")
            failures += 1
        else:
            print(f"ok        {rec['file']}")
    listed = {rec["file"] for rec in doc["files"]}
    for extra in sorted(p.relative_to(SUITE_DIR).as_posix() for p in SUITE_DIR.rglob("*.json")):
        if extra not in listed and extra != "SOURCES.json":
            print(f"UNLISTED  {extra} (not in SOURCES.json)")
            failures += 1
    return failures


def download_sdist(doc: dict, dest: Path) -> Path:
    spec = f"{doc['package']}=={doc['version']}"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", spec, "-d", str(dest)],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"error: `pip download {spec}` failed:\n{proc.stderr.strip()}")
    sdist = dest / doc["sdist"]
    if not sdist.is_file():
        raise SystemExit(f"error: `pip download {spec}` did not produce {doc['sdist']}")
    return sdist


def fetch(doc: dict, write: bool) -> int:
    with tempfile.TemporaryDirectory(prefix="jsts-") as tmp:
        sdist = download_sdist(doc, Path(tmp))
        actual = sha256_bytes(sdist.read_bytes())
        if actual != doc["sdist_sha256"]:
            print(f"MISMATCH  {doc['sdist']}: expected {doc['sdist_sha256']}, got {actual}", file=sys.stderr)
            return 1
        print(f"ok        {doc['sdist']}")
        fetched: list[tuple[dict, bytes]] = []
        failures = 0
        with tarfile.open(sdist, mode="r:gz") as tar:
            for rec in doc["files"]:
                try:
                    handle = tar.extractfile(rec["path_in_sdist"])
                except KeyError:
                    handle = None
                if handle is None:
                    print(f"MISSING   {rec['path_in_sdist']} not in {doc['sdist']}")
                    failures += 1
                    continue
                with handle:
                    data = handle.read()
                if sha256_bytes(data) != rec["sha256"]:
                    print(f"MISMATCH  {rec['path_in_sdist']}")
                    failures += 1
                    continue
                fetched.append((rec, data))
    if failures:
        print(f"\n{failures} file(s) did not match SOURCES.json; nothing written.", file=sys.stderr)
        return 1
    for rec, data in fetched:
        target = SUITE_DIR / rec["file"]
        if write:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            print(f"wrote     {rec['file']}")
        elif not target.is_file() or target.read_bytes() != data:
            print(f"note: {rec['file']} differs from the sdist copy (run with --write)")
        else:
            print(f"ok        {rec['file']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="after verifying, copy the files into tests/corpus/jsts/")
    mode.add_argument("--check-local", action="store_true", help="only verify the committed files (no network)")
    args = parser.parse_args(argv)
    doc = load_sources(SOURCES)
    if args.check_local:
        return 1 if check_local(doc) else 0
    return fetch(doc, write=args.write)


if __name__ == "__main__":
    sys.exit(main())
