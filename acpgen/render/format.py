"""Stage 4: format the rendered sources with the pinned ruff, independent of any user config."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Collection
from itertools import pairwise
from pathlib import Path

from acpgen.diagnostics import Diagnostics

RUFF_ARGS = ("--isolated", "--line-length", "100", "--target-version", "py310")
# ruff formats the files of one run on parallel threads but each file on one: a large module
# (models.py is 0.5 MiB) is cut into pieces of at least this size, one per CPU, formatted side by
# side and joined again (`split_module`).
PIECE_BYTES = 96 * 1024
MAX_PIECES = 8


def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(os.fspath(find_ruff_bin()))
    except (ImportError, FileNotFoundError):  # pragma: no cover - ruff is a dependency
        return str(Path(sys.executable).with_name("ruff"))


def split_module(text: str, pieces: int) -> list[str]:
    """`text` cut into at most `pieces` parts, each cut before a top-level `class` statement that
    follows a blank line after an indented line (the end of the previous class or function body):
    ruff puts exactly two blank lines there, and formats what is on either side alone as it formats
    it in the whole module, so `"\\n\\n".join` of the formatted parts is the formatted module.
    A cut that is not between statements (the line is inside a string or brackets that span lines)
    leaves the first part unterminated, which ruff refuses: `format_sources` then formats the whole
    module instead. Parts are roughly equal in size; one part when there is nowhere to cut."""
    if pieces < 2 or "fmt:" in text or "yapf:" in text:  # suppression comments may span a cut
        return [text]
    cuts = [0]
    for k in range(1, pieces):
        at = text.find("\nclass ", max(len(text) * k // pieces - 1, cuts[-1]))
        while at != -1 and not after_a_body(text, at):
            at = text.find("\nclass ", at + 1)
        if at == -1:
            break
        cuts.append(at + 1)
    cuts.append(len(text) + 1)
    return [text[a : b - 1] for a, b in pairwise(cuts)]


def after_a_body(text: str, at: int) -> bool:
    """Whether the newline at `at` ends a blank line that follows an indented line (the end of a
    class or function body, not a decorator or a comment that belongs to the next statement)."""
    line_start = text.rfind("\n", 0, at) + 1
    if text[line_start:at].strip():
        return False  # the line before the `class` line is not blank
    end = line_start - 1
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        if text[start:end].strip():
            return text[start] in (" ", "\t")
        end = start - 1
    return False


def format_sources(
    files: dict[str, str], diags: Diagnostics, formatted: Collection[str] = ()
) -> dict[str, str] | None:
    """Format every .py file in one ruff run; a failure is a diagnostic, never a half result. The
    `formatted` files are left out: the runtime's modules, copied below a comment header, are kept
    in ruff's format with these arguments (tests/unit/test_runtime_sources.py). A large module is
    formatted in pieces side by side (`split_module`), or whole when a piece does not parse."""
    python = {name: text for name, text in files.items() if name.endswith(".py") and name not in formatted}
    cpus = min(os.cpu_count() or 1, MAX_PIECES)
    split = {name: split_module(text, min(cpus, len(text) // PIECE_BYTES)) for name, text in python.items()}
    if all(len(parts) == 1 for parts in split.values()):
        out = run_ruff(split, diags)
    else:
        out = run_ruff(split, Diagnostics(diags.file))
        if out is None:  # a cut at a bad place, or a template's invalid Python: the whole modules
            out = run_ruff({name: [text] for name, text in python.items()}, diags)
    return None if out is None else {**files, **out}


def run_ruff(split: dict[str, list[str]], diags: Diagnostics) -> dict[str, str] | None:
    """One ruff run over every part (`models.py` whole, or `models.py.0.py`, `models.py.1.py`, ...),
    the parts of each module joined again."""
    with tempfile.TemporaryDirectory(prefix="acpgen-format-") as tmp:
        root = Path(tmp)
        for name, parts in split.items():
            for path, text in zip(part_names(name, len(parts)), parts, strict=True):
                (root / path).write_text(text, encoding="utf-8")
        try:
            proc = subprocess.run(
                [ruff_binary(), "format", *RUFF_ARGS, "--no-cache", "."],
                cwd=root, capture_output=True, text=True, timeout=120, check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            diags.error("formatter-failed", "", f"could not run ruff: {exc}", "reinstall acpgen (ruff is a dependency)")
            return None
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            diags.error("formatter-failed", "", "ruff could not format the generated code: "
                        + " | ".join(detail[:8]), "a template produced invalid Python; fix the template")
            return None
        return {
            name: "\n\n".join((root / path).read_text(encoding="utf-8") for path in part_names(name, len(parts)))
            for name, parts in split.items()
        }


def part_names(name: str, count: int) -> list[str]:
    """The file names a module's parts are formatted under."""
    return [name] if count == 1 else [f"{name}.{i}.py" for i in range(count)]
