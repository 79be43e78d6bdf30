"""The code blocks of README.md and docs/*.md, and how tests/docs/test_docs_blocks.py runs them.

A page's blocks run in order, in a copy of the repository's tracked files (tests/ left out), as a
reader would paste them:
- ```bash: a bash script (`set -eo pipefail`); the folder it ends in is where the next block starts
  (a `cd` carries over, as in one terminal);
- ```console: each `$ command` runs in bash and its stdout must be the lines under it, exactly;
- ```python whose first line is `# file: PATH`: written to PATH (from the current folder);
- other ```python: executed in one interpreter per page, in order, sharing their names (top-level
  `await` allowed); stdout is not compared;
- ```toml and ```json: parsed (a toml `# file: PATH` block is also written there);
- ```text and ```yaml: shown only (output excerpts, other tools' files).
A block that cannot run is preceded by `<!-- not run: REASON -->` with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
RUN = {"python", "bash", "console"}
PARSED = {"toml", "json"}
SHOWN = {"text", "yaml"}
SKIP = re.compile(r"^\s*<!-- not run: (.*) -->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
FILE = re.compile(r"^# file: (\S+)\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    skip: str | None  # the reason given by a `<!-- not run: ... -->` line above it

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def file(self) -> str | None:
        """The PATH of a `# file: PATH` first line."""
        first = self.text.split("\n", 1)[0]
        match = FILE.match(first)
        return match.group(1) if match else None


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, lang = opening.groups()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        skip = SKIP.match(previous)
        found.append(Block(page, i + 1, lang, "\n".join(body) + "\n", skip.group(1).strip() if skip else None))
        i = j + 1
    return found


def console_steps(block: Block) -> list[tuple[str, list[str]]]:
    """(command, the stdout lines shown under it) for each `$ ` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.text.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line.rstrip())
        else:
            raise ValueError(f"{block.where}: a console block starts with `$ command`, not {line!r}")
    return steps
