#!/usr/bin/env python3
"""Re-fetch and verify the vendored ACP schema files listed in schema/SOURCES.json.

Each record in SOURCES.json names a file under schema/, the npm package and
version it comes from, the path of that file inside the package, and its
sha256.  This script uses only the standard library plus the `npm` client.

    python scripts/fetch_schemas.py               # download, verify against SOURCES.json
    python scripts/fetch_schemas.py --write       # download, verify, then copy into schema/
    python scripts/fetch_schemas.py --check-local # verify the committed files only (no network)

Exit status is 0 when everything matches and 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import OrderedDict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO_ROOT / "schema"
SOURCES = SCHEMA_DIR / "SOURCES.json"
REQUIRED_KEYS = ("file", "package", "version", "path_in_package", "sha256")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_records(path: Path) -> list[dict]:
    records = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise SystemExit(f"error: {path.name} must hold a JSON list of records")
    for i, rec in enumerate(records):
        missing = [k for k in REQUIRED_KEYS if k not in rec]
        if missing:
            raise SystemExit(f"error: record {i} in {path.name} lacks {', '.join(missing)}")
        target = (SCHEMA_DIR / rec["file"]).resolve()
        if SCHEMA_DIR.resolve() not in target.parents:
            raise SystemExit(f"error: record {i} points outside schema/: {rec['file']!r}")
    return records


def check_local(records: list[dict]) -> int:
    failures = 0
    for rec in records:
        target = SCHEMA_DIR / rec["file"]
        if not target.is_file():
            print(f"MISSING   schema/{rec['file']}")
            failures += 1
            continue
        actual = sha256_bytes(target.read_bytes())
        if actual != rec["sha256"]:
            print(f"MISMATCH  schema/{rec['file']}: expected {rec['sha256']}, found {actual}")
            failures += 1
        else:
            print(f"ok        schema/{rec['file']}")
    return failures


def npm_pack(package: str, version: str, dest: Path) -> Path:
    """Run `npm pack PACKAGE@VERSION` inside dest and return the tarball's path."""
    spec = f"{package}@{version}"
    if shutil.which("npm") is None:
        raise SystemExit(
            "error: the `npm` client is required to fetch packages (or use --check-local)"
        )
    proc = subprocess.run(
        ["npm", "pack", spec, "--silent"],
        cwd=dest,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"error: `npm pack {spec}` failed:\n{proc.stderr.strip()}")
    tarballs = sorted(dest.glob("*.tgz"))
    if len(tarballs) != 1:
        raise SystemExit(
            f"error: expected one tarball from `npm pack {spec}`, found {len(tarballs)}"
        )
    return tarballs[0]


def read_member(tarball: Path, path_in_package: str) -> bytes | None:
    """Return the bytes of package/<path_in_package> from an npm tarball, or None."""
    wanted = f"package/{path_in_package}"
    with tarfile.open(tarball, mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.name == wanted and member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                with handle:
                    return handle.read()
    return None


def fetch(records: list[dict], write: bool) -> int:
    groups: OrderedDict[tuple[str, str], list[dict]] = OrderedDict()
    for rec in records:
        groups.setdefault((rec["package"], rec["version"]), []).append(rec)

    fetched: list[tuple[dict, bytes]] = []
    failures = 0
    with tempfile.TemporaryDirectory(prefix="acp-schemas-") as tmp:
        for index, ((package, version), recs) in enumerate(groups.items()):
            workdir = Path(tmp) / str(index)
            workdir.mkdir()
            print(f"npm pack {package}@{version}")
            tarball = npm_pack(package, version, workdir)
            for rec in recs:
                data = read_member(tarball, rec["path_in_package"])
                if data is None:
                    print(f"MISSING   {rec['path_in_package']} not in {package}@{version}")
                    failures += 1
                    continue
                actual = sha256_bytes(data)
                if actual != rec["sha256"]:
                    print(
                        f"MISMATCH  {package}@{version}:{rec['path_in_package']} "
                        f"expected {rec['sha256']}, got {actual}"
                    )
                    failures += 1
                    continue
                print(
                    f"ok        {package}@{version}:{rec['path_in_package']} -> schema/{rec['file']}"
                )
                fetched.append((rec, data))

    if failures:
        print(f"\n{failures} file(s) did not match SOURCES.json; nothing written.", file=sys.stderr)
        return failures

    if write:
        for rec, data in fetched:
            target = SCHEMA_DIR / rec["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            print(f"wrote     schema/{rec['file']}")
    else:
        stale = [
            rec
            for rec, data in fetched
            if not (SCHEMA_DIR / rec["file"]).is_file()
            or (SCHEMA_DIR / rec["file"]).read_bytes() != data
        ]
        for rec in stale:
            print(f"note: schema/{rec['file']} differs from the package copy (run with --write)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--write", action="store_true", help="after verifying, copy the fetched files into schema/"
    )
    mode.add_argument(
        "--check-local",
        action="store_true",
        help="only verify the committed files' checksums (no network)",
    )
    parser.add_argument(
        "--sources",
        type=Path,
        default=SOURCES,
        help="path to SOURCES.json (default: schema/SOURCES.json)",
    )
    args = parser.parse_args(argv)

    records = load_records(args.sources)
    if args.check_local:
        failures = check_local(records)
        if failures:
            print(f"\n{failures} committed file(s) do not match SOURCES.json.", file=sys.stderr)
        return 1 if failures else 0
    return 1 if fetch(records, write=args.write) else 0


if __name__ == "__main__":
    sys.exit(main())
