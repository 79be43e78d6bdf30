"""Every code block of README.md and docs/*.md runs (tests/docs/blocks.py says how), so a page that
drifts from acpgen fails here: the README's quickstart from a fresh copy of the repository (its
setup command creates the venv), the reference pages in a copy with this venv's `acpgen` and
`python` first on PATH and `generated/` importable (their examples `import acp_v1`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tests.docs.blocks import PAGES, PARSED, ROOT, RUN, SHOWN, Block, blocks, console_steps

TIMEOUT = 300
BIN = Path(sys.executable).parent


def copy_repository(dest: Path) -> Path:
    """The tracked files (and new ones not ignored) without tests/: what a fresh clone holds."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in listed:
        source = ROOT / name
        if not name or name.startswith("tests/") or not source.is_file():
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return dest


class Reader:
    """One reader pasting a page's blocks in order: a shell whose folder carries over, and one
    Python interpreter."""

    def __init__(self, repo: Path, readme: bool) -> None:
        self.cwd = repo
        path = [str(repo / ".venv" / "bin")] + ([] if readme else [str(BIN)]) + [os.environ["PATH"]]
        self.env = {**os.environ, "PATH": os.pathsep.join(path)}
        self.env.pop("VIRTUAL_ENV", None)
        self.env.pop("PYTHONPATH", None)
        if not readme:
            self.env["PYTHONPATH"] = str(repo / "generated")
        self.python: subprocess.Popen[str] | None = None
        self.repo = repo

    def bash(self, script: str, block: Block, strict: bool = True) -> subprocess.CompletedProcess[str]:
        state = self.repo / ".docs-cwd"
        prologue = "set -eo pipefail\n" if strict else ""
        text = f'cd {json.dumps(str(self.cwd))}\n{prologue}{script}\npwd > {json.dumps(str(state))}\n'
        result = subprocess.run(["bash", "-c", text], env=self.env, capture_output=True, text=True,
                                timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, (
            f"{block.where}: the {block.lang} block failed (exit {result.returncode}):\n{script}\n"
            f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}")
        self.cwd = Path(state.read_text().strip())
        return result

    def run_python(self, block: Block) -> None:
        if self.python is None:
            python = self.repo / ".venv" / "bin" / "python"
            self.python = subprocess.Popen(
                [str(python if python.exists() else sys.executable), str(ROOT / "tests" / "docs" / "driver.py")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=self.env, cwd=self.cwd)
        assert self.python.stdin is not None and self.python.stdout is not None
        self.python.stdin.write(json.dumps({"code": block.text, "name": block.where, "cwd": str(self.cwd)}) + "\n")
        self.python.stdin.flush()
        answer = self.python.stdout.readline()
        assert answer, f"{block.where}: the interpreter running the page's python blocks exited"
        error = json.loads(answer)["error"]
        assert error is None, f"{block.where}: the python block failed:\n{error}"

    def close(self) -> None:
        if self.python is not None:
            assert self.python.stdin is not None
            self.python.stdin.close()
            assert self.python.wait(TIMEOUT) == 0, "the interpreter running the page's python blocks failed"

    def run(self, block: Block) -> None:
        if block.file is not None:
            target = self.cwd / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text.split("\n", 1)[1], encoding="utf-8")
        if block.lang == "toml":
            tomllib.loads(block.text)
        elif block.lang == "json":
            json.loads(block.text)
        elif block.lang == "bash":
            self.bash(block.text, block)
        elif block.lang == "console":
            for command, shown in console_steps(block):
                out = self.bash(command, block, strict=False).stdout
                got = [line.rstrip() for line in out.rstrip("\n").split("\n")] if out.strip() else []
                assert got == shown, f"{block.where}: `{command}` printed\n{out}\nthe page shows\n" + "\n".join(shown)
        elif block.lang == "python" and block.file is None:
            self.run_python(block)


def test_every_block_runs_or_says_why_not() -> None:
    problems = []
    for page in PAGES:
        for block in blocks(page):
            if block.lang not in RUN | PARSED | SHOWN:
                problems.append(f"{block.where}: fence language {block.lang!r}: use one of "
                                f"{sorted(RUN | PARSED | SHOWN)} (bash for shell commands)")
            if block.skip is not None and not block.skip:
                problems.append(f"{block.where}: `<!-- not run: -->` without a reason")
    assert not problems, "\n".join(problems)


def test_the_skip_marker_is_the_only_way_out() -> None:
    """A block is skipped only with a reason; everything else the parser finds is run."""
    page = ROOT / "README.md"
    found = blocks(page)
    assert [b.lang for b in found if b.skip is None and b.lang in RUN]
    assert all(b.skip for b in found if b.skip is not None)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_blocks_run(page: Path, tmp_path: Path) -> None:
    repo = copy_repository(tmp_path / "repo")
    reader = Reader(repo, readme=page.name == "README.md")
    try:
        for block in blocks(page):
            if block.skip is None:
                reader.run(block)
    finally:
        reader.close()
