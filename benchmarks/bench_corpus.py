"""Corpus: how long acpgen takes to build everything it is tested against, in one process.

Every ACP release of the spec repository's tags (tests/corpus/acp-releases/, each with the meta.json
published beside it), every real schema (tests/corpus/real/: MCP, A2A, SchemaStore), and the
JSON-Schema-Test-Suite run (its batched builds plus decoding the 1,257 instances). In-process
builds (load, IR, render, ruff), no writes; figures are wall-clock seconds of this machine, so run
it on a quiet one.

    python benchmarks/bench_corpus.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acpgen.config import Target  # noqa: E402
from acpgen.pipeline import generate  # noqa: E402
from tests.corpus import jsts_runner  # noqa: E402
from tests.corpus.test_acp_releases import CASES, CORPUS  # noqa: E402
from tests.corpus.test_real_schemas import REAL, SCHEMAS, package  # noqa: E402


def releases(out: Path) -> int:
    failed = 0
    for case in CASES:
        folder = out / "src" / case.package
        folder.mkdir(parents=True)
        shutil.copy(CORPUS / case.stable, folder / "schema.json")
        if case.meta:
            shutil.copy(CORPUS / case.meta, folder / "meta.json")
        result = generate(Target(
            name=case.package, schema=folder / "schema.json", output=out / case.package, package=case.package,
            unstable=CORPUS / case.unstable if case.unstable else None, include_unstable=case.unstable is not None,
            find_unstable=False, command="acpgen build schema.json"))
        failed += not result.ok
    return failed


def real(out: Path) -> int:
    failed = 0
    for name in SCHEMAS:
        pkg = package(name)
        result = generate(Target(name=pkg, schema=REAL / name / "schema.json", output=out / pkg, package=pkg,
                                 include_unstable=False, find_unstable=False, command="acpgen build schema.json"))
        failed += not result.ok
    return failed


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="acpgen-corpus-") as tmp:
        start = time.perf_counter()
        refused_releases = releases(Path(tmp) / "releases")
        mid = time.perf_counter()
        refused_real = real(Path(tmp) / "real")
        end = time.perf_counter()
        results, builds = jsts_runner.run()
        done = time.perf_counter()
    print(f"ACP releases: {len(CASES)} builds ({refused_releases} refused) in {mid - start:.1f} s")
    print(f"real schemas: {len(SCHEMAS)} builds ({refused_real} refused) in {end - mid:.1f} s")
    print(f"JSON-Schema-Test-Suite: {builds} builds, {len(results)} tests decoded in {done - end:.1f} s")
    print(f"total {done - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
