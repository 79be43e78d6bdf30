#!/usr/bin/env python3
"""Vendor or verify the corpus of real, non-ACP JSON Schemas (tests/corpus/real/).

Every dated MCP schema, the A2A specification at its JSON-schema tags, and four SchemaStore schemas,
each with the example instances its repository ships (MCP: schema/<date>/examples/<Type>/*.json;
SchemaStore: src/test/<name>/ and src/negative_test/<name>/). tests/corpus/real/SOURCES.json records,
per stored file: the repository, the ref and commit it comes from, the path there and the sha256 of
the file as published; a YAML instance (SchemaStore's github-workflow tests) is stored as the JSON
PyYAML's `safe_load` reads from it (`converted`: the stored file's own sha256 is recorded too).

    python scripts/fetch_real_schemas.py --check-local                       # verify the committed files
    python scripts/fetch_real_schemas.py --write OWNER/NAME=GITDIR ...       # rewrite from clones

The `--write` form needs a clone (bare or .git folder) of each repository and, for the YAML
instances, PyYAML. Exit status is 0 when everything matches and 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
REAL = REPO_ROOT / "tests" / "corpus" / "real"
SOURCES = REAL / "SOURCES.json"
MCP = "modelcontextprotocol/modelcontextprotocol"
A2A = "a2aproject/A2A"
STORE = "SchemaStore/schemastore"
STORE_SCHEMAS = ("github-workflow", "dependabot-2.0", "tsconfig", "babelrc")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git(git_dir: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: `git {' '.join(args)}` failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def listing(git_dir: Path, commit: str) -> list[str]:
    return git(git_dir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()


def plan(clones: dict[str, Path]) -> list[dict[str, Any]]:
    """Every schema to vendor: name, repository, ref, commit, path, and its instances (path, valid)."""
    out: list[dict[str, Any]] = []
    mcp = clones[MCP]
    head = git(mcp, "rev-parse", "HEAD").decode().strip()
    names = listing(mcp, head)
    for path in sorted(n for n in names if n.startswith("schema/") and n.endswith("/schema.json") and n.count("/") == 2):
        date = path.split("/")[1]
        if date == "draft":
            continue  # not a release
        examples = [(n, None) for n in names if n.startswith(f"schema/{date}/examples/") and n.endswith(".json")]
        out.append({"name": f"mcp-{date}", "repository": MCP, "ref": "HEAD", "commit": head, "path": path,
                    "instances": sorted(examples)})
    a2a = clones[A2A]
    for tag in ("v0.2.6", "v0.3.0"):
        commit = git(a2a, "rev-list", "-n", "1", tag).decode().strip()
        out.append({"name": f"a2a-{tag}", "repository": A2A, "ref": tag, "commit": commit,
                    "path": "specification/json/a2a.json", "instances": []})
    store = clones[STORE]
    head = git(store, "rev-parse", "HEAD").decode().strip()
    names = listing(store, head)
    for name in STORE_SCHEMAS:
        instances = [(n, True) for n in names if n.startswith(f"src/test/{name}/")]
        instances += [(n, False) for n in names if n.startswith(f"src/negative_test/{name}/")]
        out.append({"name": f"schemastore-{name}", "repository": STORE, "ref": "HEAD", "commit": head,
                    "path": f"src/schemas/json/{name}.json", "instances": sorted(i for i in instances if i[0].endswith((".json", ".yaml", ".yml")))})
    return out


def write(clones: dict[str, Path]) -> None:
    records = []
    for schema in plan(clones):
        git_dir = clones[schema["repository"]]
        folder = REAL / schema["name"]
        data = git(git_dir, "show", f"{schema['commit']}:{schema['path']}")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "schema.json").write_bytes(data)
        instances = []
        for index, (path, valid) in enumerate(schema["instances"]):
            raw = git(git_dir, "show", f"{schema['commit']}:{path}")
            stored_name = f"instances/{index:03d}-{Path(path).stem}.json"
            record: dict[str, Any] = {"file": stored_name, "path": path, "sha256": sha256_bytes(raw)}
            if valid is not None:
                record["shipped_as"] = "valid" if valid else "invalid"
            if path.endswith((".yaml", ".yml")):
                import yaml  # only for --write

                try:
                    value = yaml.safe_load(raw)
                    raw = (json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n").encode()
                except yaml.YAMLError:
                    continue
                record["converted"] = {"from": "yaml", "by": "PyYAML safe_load", "sha256": sha256_bytes(raw)}
            (folder / stored_name).parent.mkdir(exist_ok=True)
            (folder / stored_name).write_bytes(raw)
            instances.append(record)
        records.append({"name": schema["name"], "repository": schema["repository"], "ref": schema["ref"],
                        "commit": schema["commit"], "path": schema["path"], "sha256": sha256_bytes(data),
                        "instances": instances})
    SOURCES.write_text(json.dumps({"schemas": records}, indent=2) + "\n", encoding="utf-8")


def check_local() -> list[str]:
    problems = []
    recorded = {SOURCES}
    for schema in json.loads(SOURCES.read_text(encoding="utf-8"))["schemas"]:
        folder = REAL / schema["name"]
        files = [(folder / "schema.json", schema["sha256"])]
        files += [(folder / i["file"], i.get("converted", i)["sha256"]) for i in schema["instances"]]
        for path, digest in files:
            recorded.add(path)
            if not path.is_file():
                problems.append(f"{path.relative_to(REPO_ROOT)}: missing")
            elif sha256_bytes(path.read_bytes()) != digest:
                problems.append(f"{path.relative_to(REPO_ROOT)}: sha256 differs from SOURCES.json")
    for path in sorted(REAL.rglob("*.json")):
        if path not in recorded:
            problems.append(f"{path.relative_to(REPO_ROOT)}: not recorded in SOURCES.json")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", nargs="+", metavar="OWNER/NAME=GITDIR", help="rewrite from these clones")
    parser.add_argument("--check-local", action="store_true", help="verify the committed files only")
    args = parser.parse_args()
    if args.write:
        clones = {k: Path(v) for k, v in (a.split("=", 1) for a in args.write)}
        missing = {MCP, A2A, STORE} - clones.keys()
        if missing:
            raise SystemExit(f"error: give a clone of {', '.join(sorted(missing))}")
        write(clones)
    problems = check_local()
    for problem in problems:
        print(f"error: {problem}")
    if not problems:
        print("ok: every file matches SOURCES.json")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
