"""docs/v2.md's "v1 -> v2" table (moved there from the README): every change its last column names is in `acpgen diff acp_v1 acp_v2`,
and the v2 rules the prose states are the ones the generated packages have."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from acp_v1 import rpc as rpc1
from acp_v2 import rpc as rpc2

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## v1 -> v2: what an agent author must change"


def table_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "v2.md").read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("| ") and not line.startswith("| ---") and not line.startswith("| v1 |"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_every_row_names_changes_acpgen_diff_reports() -> None:
    diff = subprocess.run([sys.executable, "-m", "acpgen", "diff", "acp_v1", "acp_v2", "--format", "json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert diff.returncode == 0, diff.stderr
    reported = {(c["kind"], c["path"]) for c in json.loads(diff.stdout)["changes"]}
    rows = table_rows()
    assert len(rows) >= 10
    for row in rows:
        named = re.findall(r"`([a-z-]+) ([^`]+)`", row[2])
        assert named, f"row without diff changes: {row}"
        for kind, path in named:
            assert (kind, path) in reported, f"docs/v2.md says `{kind} {path}`; acpgen diff does not report it"


def test_the_prose_rules_hold_in_the_generated_packages() -> None:
    # -32022 and its data exist in v2 only; v2 ids are never null; v1 cancels prompts by session.
    assert rpc2.NEGOTIATE is not None and rpc2.NEGOTIATE[:3] == ("initialize", "protocolVersion", 2)
    assert rpc2.NEGOTIATE[3](1, [2]).to_json()["code"] == -32022
    assert rpc1.NEGOTIATE is None
    assert (rpc1.NULL_REQUEST_ID, rpc2.NULL_REQUEST_ID) == (True, False)
    assert (frozenset({"session/prompt"}), frozenset()) == (rpc1.CANCELLED_BY_SESSION, rpc2.CANCELLED_BY_SESSION)
