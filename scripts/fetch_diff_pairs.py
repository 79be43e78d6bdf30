#!/usr/bin/env python3
"""Re-fetch and verify the release schemas `acpgen diff` is tested on (tests/diff_pairs/SOURCES.json).

The same records and checks as scripts/fetch_schemas.py (npm package, version, path inside it,
sha256), for the folder tests/diff_pairs/; each record also says which schema release the file
stands for in the tests.

    python scripts/fetch_diff_pairs.py               # download, verify against SOURCES.json
    python scripts/fetch_diff_pairs.py --write       # download, verify, then copy into tests/diff_pairs/
    python scripts/fetch_diff_pairs.py --check-local # verify the committed files only (no network)

Exit status is 0 when everything matches and 1 otherwise.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAIRS_DIR = HERE.parent / "tests" / "diff_pairs"


def main(argv: list[str] | None = None) -> int:
    spec = importlib.util.spec_from_file_location("fetch_schemas", HERE / "fetch_schemas.py")
    assert spec is not None and spec.loader is not None
    fetch_schemas = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch_schemas)
    fetch_schemas.SCHEMA_DIR = PAIRS_DIR  # records name files under tests/diff_pairs/
    args = list(sys.argv[1:] if argv is None else argv)
    if "--sources" not in args:
        args += ["--sources", str(PAIRS_DIR / "SOURCES.json")]
    return int(fetch_schemas.main(args))


if __name__ == "__main__":
    sys.exit(main())
