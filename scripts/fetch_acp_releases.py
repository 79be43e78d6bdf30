#!/usr/bin/env python3
"""Vendor or verify every ACP schema file published under a release tag of the spec repository.

The spec repository (agentclientprotocol/agent-client-protocol) tags each release; the schema files
sit at `schema.json` (the first tags), `schema/schema.json` (with `meta.json`, later the unstable
pair), then `schema/v1/...` and `schema/v2/...`. tests/corpus/acp-releases/SOURCES.json records,
per distinct file (by sha256), where it is stored and every (tag, commit, path) that publishes it;
`pairs` lists every distinct (stable, unstable, meta) combination a tag published. A file already in
the npm corpus (tests/corpus/SOURCES.json) with the same sha256 is referenced, not copied again;
any other file is stored once, under the folder of the first tag (in version order) publishing it.
Only the standard library and the `git` client are used.

    python scripts/fetch_acp_releases.py --check-local        # verify the committed files only
    python scripts/fetch_acp_releases.py --git-dir CLONE      # verify against a clone's tags
    python scripts/fetch_acp_releases.py --git-dir CLONE --write   # rewrite the corpus from it

Exit status is 0 when everything matches and 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "tests" / "corpus"
RELEASES = CORPUS / "acp-releases"
SOURCES = RELEASES / "SOURCES.json"
REPOSITORY = "agentclientprotocol/agent-client-protocol"
SCHEMA_PATH = re.compile(r"^(schema\.json|schema/(v[0-9]+/)?(schema|meta)(\.unstable)?\.json)$")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git(git_dir: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: `git {' '.join(args)}` failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def version_key(tag: str) -> tuple[object, ...]:
    """Order tags by their version: schema-v1.13.7 after v1.7.0, prereleases before the release."""
    match = re.search(r"(\d+)\.(\d+)\.(\d+)(?:-(\w+)\.(\d+))?$", tag)
    if match is None:
        return (1, tag)
    major, minor, patch, pre, num = match.groups()
    return (0, int(major), int(minor), int(patch), pre is None, pre or "", int(num or 0), tag)


def published(git_dir: Path) -> list[dict[str, object]]:
    """One row per (tag, schema path) with the tag's commit and the file's bytes."""
    rows: list[dict[str, object]] = []
    tags = sorted(git(git_dir, "tag").decode().split(), key=version_key)
    for tag in tags:
        commit = git(git_dir, "rev-list", "-n", "1", tag).decode().strip()
        names = git(git_dir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
        for path in sorted(n for n in names if SCHEMA_PATH.match(n)):
            rows.append({"tag": tag, "commit": commit, "path": path, "data": git(git_dir, "show", f"{commit}:{path}")})
    return rows


def npm_corpus_files() -> dict[str, str]:
    """sha256 -> path (relative to tests/corpus) of the files the npm corpus already stores."""
    sources = json.loads((CORPUS / "SOURCES.json").read_text(encoding="utf-8"))
    return {r["sha256"]: r["file"] for r in sources["files"]}


def layout(rows: list[dict[str, object]]) -> tuple[dict[str, object], dict[str, bytes]]:
    known = npm_corpus_files()
    files: dict[str, dict[str, object]] = {}
    new: dict[str, bytes] = {}
    by_tag: dict[str, dict[str, str]] = {}
    for row in rows:
        data = row["data"]
        assert isinstance(data, bytes)
        digest = sha256_bytes(data)
        if digest not in files:
            stored = known.get(digest) or f"acp-releases/{row['tag']}/{row['path']}"
            if digest not in known:
                new[stored] = data
            files[digest] = {"file": stored, "sha256": digest, "published": []}
        published_at = files[digest]["published"]
        assert isinstance(published_at, list)
        published_at.append({"tag": row["tag"], "commit": row["commit"], "path": row["path"]})
        by_tag.setdefault(str(row["tag"]), {})[str(row["path"])] = str(files[digest]["file"])
    pairs: dict[tuple[str, str, str | None], list[str]] = {}
    for tag, paths in by_tag.items():
        for path, stored in paths.items():
            if not path.endswith("schema.unstable.json"):
                continue
            folder = path[: -len("schema.unstable.json")]
            stable = paths.get(folder + "schema.json")
            if stable is None:
                continue
            pairs.setdefault((stable, stored, paths.get(folder + "meta.json")), []).append(f"{tag}:{folder}")
    document = {
        "repository": REPOSITORY,
        "files": list(files.values()),
        "pairs": [{"stable": s, "unstable": u, "meta": m, "published": where} for (s, u, m), where in pairs.items()],
    }
    return document, new


def check_local() -> list[str]:
    problems = []
    sources = json.loads(SOURCES.read_text(encoding="utf-8"))
    for record in sources["files"]:
        path = CORPUS / record["file"]
        if not path.is_file():
            problems.append(f"{record['file']}: missing")
        elif sha256_bytes(path.read_bytes()) != record["sha256"]:
            problems.append(f"{record['file']}: sha256 differs from SOURCES.json")
    recorded = {r["file"] for r in sources["files"]}
    for path in sorted(RELEASES.rglob("*.json")):
        name = path.relative_to(CORPUS).as_posix()
        if path != SOURCES and name not in recorded:
            problems.append(f"{name}: not recorded in SOURCES.json")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--git-dir", type=Path, help="a clone (bare or .git folder) of the spec repository")
    parser.add_argument("--write", action="store_true", help="rewrite the corpus from the clone's tags")
    parser.add_argument("--check-local", action="store_true", help="verify the committed files only")
    args = parser.parse_args()
    if args.git_dir is None:
        problems = check_local()
    else:
        document, new = layout(published(args.git_dir))
        if args.write:
            for stored, data in new.items():
                target = CORPUS / stored
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            SOURCES.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        committed = json.loads(SOURCES.read_text(encoding="utf-8"))
        problems = check_local()
        if committed != document:
            problems.append("SOURCES.json differs from the clone's tags (run with --write and review the diff)")
    for problem in problems:
        print(f"error: {problem}")
    if not problems:
        print("ok: every file matches SOURCES.json")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
