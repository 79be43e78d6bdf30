"""What `mypy --strict` says of code using a generated package: the mistakes a user makes with the
API are type errors (issue 24: typed keyword proxies, no catch-all package attribute, closed enum
fields that take their wire values), and the correct calls are not."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

USER_CODE = '''\
import acp_v1
from acp_v1 import NoSuchThing  # line 2: no such export


async def agent_side(conn: acp_v1.AgentSideConnection, update: acp_v1.SessionUpdate) -> None:
    await conn.session_update(session_id="s", update=update)
    await conn.session_update(acp_v1.SessionNotification(session_id="s", update=update))
    await conn.session_update(session_id=42, update=update)  # line 8: mistyped keyword
    await conn.session_update(session_id="s", updat=update)  # line 9: misspelt keyword
    read = await conn.fs_read_text_file(session_id="s", path="/x", line=3)
    await conn.fs_read_text_file(session_id="s", path="/x", lines=3)  # line 11: misspelt keyword
    print(read.content)


def results() -> None:
    acp_v1.PromptResponse(stop_reason="end_turn")
    acp_v1.PromptResponse(stop_reason=acp_v1.StopReason.CANCELLED)
    acp_v1.PromptResponse(stop_reason="end-turn")  # line 18: not a wire value
    version: int = acp_v1.PROTOCOL_VERSION
    print(version, acp_v1.nothing_here)  # line 20: no such attribute
'''


def test_mypy_rejects_the_mistakes_and_accepts_the_rest(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(USER_CODE, encoding="utf-8")
    env = {"MYPYPATH": str(ROOT / "generated"), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
                          str(tmp_path / "cache"), "--no-error-summary", "user.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    lines = sorted({int(m.group(1)) for m in re.finditer(r"^user\.py:(\d+): error", run.stdout, re.M)})
    assert lines == [2, 8, 9, 11, 18, 20], run.stdout
