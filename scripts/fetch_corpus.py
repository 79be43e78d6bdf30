#!/usr/bin/env python3
"""Fetch, verify or rediscover the published-schema corpus in tests/corpus/.

The corpus is every distinct JSON file under `schema/` in every published version of the two npm
packages that ship the ACP schema (stable and unstable schemas, and the `meta.json` files beside
them). Each distinct file (by sha256) is stored once, in the folder of the first release that
shipped it; tests/corpus/SOURCES.json records, per file, its sha256, the package and every version
that ships it, and its path inside the package; `pairs` lists each distinct (stable, unstable)
combination a release shipped, which the corpus test builds merged. Only the standard library and
the `npm` client are used.

    python scripts/fetch_corpus.py               # download every recorded release, verify SOURCES.json
    python scripts/fetch_corpus.py --check-local # verify the committed files only (no network)
    python scripts/fetch_corpus.py --discover    # list the packages' versions again, rewrite the corpus

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
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "tests" / "corpus"
SOURCES = CORPUS / "SOURCES.json"
PACKAGES = {"@zed-industries/agent-client-protocol": "zed", "@agentclientprotocol/sdk": "sdk"}
SCHEMA_FOLDER = "package/schema/"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def npm(*args: str, cwd: Path | None = None) -> str:
    if shutil.which("npm") is None:
        raise SystemExit("error: the `npm` client is required (or use --check-local)")
    proc = subprocess.run(["npm", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: `npm {' '.join(args)}` failed:\n{proc.stderr.strip()}")
    return proc.stdout


def versions_of(package: str) -> list[str]:
    versions = json.loads(npm("view", package, "versions", "--json"))
    return [versions] if isinstance(versions, str) else list(versions)


def schema_members(package: str, version: str, workdir: Path) -> dict[str, bytes]:
    """path inside the package -> bytes, for every JSON file under its `schema/` folder."""
    workdir.mkdir(parents=True)
    npm("pack", f"{package}@{version}", "--silent", cwd=workdir)
    tarballs = sorted(workdir.glob("*.tgz"))
    if len(tarballs) != 1:
        raise SystemExit(f"error: expected one tarball for {package}@{version}, found {len(tarballs)}")
    out: dict[str, bytes] = {}
    with tarfile.open(tarballs[0], mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith(SCHEMA_FOLDER) and member.name.endswith(".json"):
                handle = tar.extractfile(member)
                assert handle is not None
                with handle:
                    out[member.name[len("package/"):]] = handle.read()
    shutil.rmtree(workdir)
    return out


def companion_of(path: str) -> str | None:
    """`schema/v1/schema.json` -> `schema/v1/schema.unstable.json` (None for other files)."""
    if path.endswith(".unstable.json") or not path.endswith("schema.json"):
        return None
    return path[: -len(".json")] + ".unstable.json"


def discover() -> int:
    records: dict[str, dict[str, object]] = {}  # sha256 -> record
    pairs: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="acp-corpus-") as tmp:
        for package, short in PACKAGES.items():
            for version in versions_of(package):
                print(f"npm pack {package}@{version}", flush=True)
                members = schema_members(package, version, Path(tmp) / f"{short}-{version}")
                by_path: dict[str, str] = {}
                for path, data in sorted(members.items()):
                    digest = sha256_bytes(data)
                    by_path[path] = digest
                    if digest in records:
                        shipped = records[digest]["shipped_in"]
                        assert isinstance(shipped, list)
                        shipped.append({"package": package, "version": version, "path_in_package": path})
                        continue
                    name = f"{short}-{version}/{path[len('schema/'):]}"
                    records[digest] = {
                        "file": name, "sha256": digest,
                        "shipped_in": [{"package": package, "version": version, "path_in_package": path}],
                    }
                    target = CORPUS / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                for path, digest in sorted(by_path.items()):
                    companion = companion_of(path)
                    if companion in by_path:
                        pair = {"stable": str(records[digest]["file"]),
                                "unstable": str(records[by_path[companion]]["file"])}
                        if pair not in pairs:
                            pairs.append(pair)
    SOURCES.write_text(json.dumps({"files": list(records.values()), "pairs": pairs}, indent=1) + "\n",
                       encoding="utf-8")
    print(f"{len(records)} distinct files, {len(pairs)} stable+unstable pairs -> tests/corpus/")
    return 0


def load_sources() -> dict[str, list[dict[str, object]]]:
    data = json.loads(SOURCES.read_text(encoding="utf-8"))
    for record in data["files"]:
        target = (CORPUS / str(record["file"])).resolve()
        if CORPUS.resolve() not in target.parents:
            raise SystemExit(f"error: a record points outside tests/corpus/: {record['file']!r}")
    return data  # type: ignore[no-any-return]


def check_local() -> int:
    failures = 0
    for record in load_sources()["files"]:
        target = CORPUS / str(record["file"])
        if not target.is_file():
            print(f"MISSING   tests/corpus/{record['file']}")
            failures += 1
        elif sha256_bytes(target.read_bytes()) != record["sha256"]:
            print(f"MISMATCH  tests/corpus/{record['file']}")
            failures += 1
        else:
            print(f"ok        tests/corpus/{record['file']}")
    return failures


def fetch() -> int:
    """Download every release SOURCES.json names and check each recorded file's bytes."""
    wanted: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for record in load_sources()["files"]:
        for shipped in record["shipped_in"]:  # type: ignore[attr-defined]
            key = (shipped["package"], shipped["version"])
            wanted.setdefault(key, []).append((shipped["path_in_package"], str(record["sha256"])))
    failures = 0
    with tempfile.TemporaryDirectory(prefix="acp-corpus-") as tmp:
        for index, ((package, version), files) in enumerate(sorted(wanted.items())):
            members = schema_members(package, version, Path(tmp) / str(index))
            for path, digest in files:
                data = members.get(path)
                if data is None or sha256_bytes(data) != digest:
                    print(f"MISMATCH  {package}@{version}:{path}")
                    failures += 1
                else:
                    print(f"ok        {package}@{version}:{path}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check-local", action="store_true", help="verify the committed files only (no network)")
    mode.add_argument("--discover", action="store_true",
                      help="list every published version again and rewrite tests/corpus/ from them")
    args = parser.parse_args(argv)
    if args.discover:
        return discover()
    failures = check_local() if args.check_local else fetch()
    if failures:
        print(f"\n{failures} file(s) do not match SOURCES.json.", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
