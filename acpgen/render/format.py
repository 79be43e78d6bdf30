"""Stage 4: format the rendered sources with the pinned ruff, independent of any user config."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Collection
from itertools import pairwise
from pathlib import Path

from acpgen.diagnostics import Diagnostics
from acpgen.render.cache import private_folder

RUFF_ARGS = ("--isolated", "--line-length", "100", "--target-version", "py310")
# ruff formats the files of one run on parallel threads, each file on one, and a large file more
# slowly per byte than several small ones: a module of at least 2 * PIECE_BYTES (models.py is
# 0.5 MiB) is cut into pieces, formatted side by side and joined again (`split_module`). A cut is
# made where the `class` line's checksum is a multiple of CUT_EVERY (pieces of 16 classes on
# average), and wherever a piece would grow beyond MAX_PIECE. v1's models.py: 15 pieces, formatted
# in 23 ms (2 CPUs) instead of 34 ms whole.
PIECE_BYTES = 64 * 1024
CUT_EVERY = 16
MAX_PIECE = 4 * PIECE_BYTES
FORMAT_TIMEOUT = 120
CLASS_LINE = "\nclass "
SUPPRESSIONS = ("fmt:", "yapf:")  # comments whose effect may span a cut
FORMAT_CACHE_VERSION = 1
FORMAT_CACHE_ENTRIES = 1024  # the oldest entries beyond this are removed when new ones are stored


@functools.cache
def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(os.fspath(find_ruff_bin()))
    except (ImportError, FileNotFoundError):  # pragma: no cover - ruff is a dependency
        return str(Path(sys.executable).with_name("ruff"))


def split_module(text: str) -> list[str]:
    """`text` cut into parts, each cut before a top-level `class` statement that follows a blank
    line after an indented line (the end of the previous class or function body): ruff puts exactly
    two blank lines there, and formats what is on either side alone as it formats it in the whole
    module, so `"\\n\\n".join` of the formatted parts is the formatted module. A cut that is not
    between statements (the line is inside a string or brackets that span lines) leaves the first
    part unterminated, which ruff refuses: the whole module is then formatted instead.

    Where a cut is made depends on the `class` line after it only (its checksum, `CUT_EVERY`), not
    on offsets, so a module that changes in one place (a schema update adds a class) keeps its
    other parts, which `FormatCache` then has; only a piece that would grow beyond MAX_PIECE is cut
    where it reaches that size. One part when the module is small or has nowhere to cut."""
    if len(text) < 2 * PIECE_BYTES or any(mark in text for mark in SUPPRESSIONS):
        return [text]
    cuts = [0]
    at = next_cut(text, 0)
    while at != -1:
        line_end = text.find("\n", at + 1)
        line = text[at + 1 : line_end if line_end != -1 else len(text)]
        if zlib.crc32(line.encode("utf-8", "surrogatepass")) % CUT_EVERY == 0 or at - cuts[-1] >= MAX_PIECE:
            cuts.append(at + 1)
        at = next_cut(text, at + 1)
    cuts.append(len(text) + 1)
    return [text[a : b - 1] for a, b in pairwise(cuts)]


def next_cut(text: str, start: int) -> int:
    """The first newline at or after `start` that `text` may be cut at (`split_module`), or -1."""
    at = text.find(CLASS_LINE, start)
    while at != -1 and not after_a_body(text, at):
        at = text.find(CLASS_LINE, at + 1)
    return at


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


class FormatCache:
    """ruff's output for texts it formatted before, by the SHA-256 of the text: a rebuild, an
    `acpgen check`, or a build after a schema update that changed a few classes runs ruff on the
    parts that changed only. The folder's name carries the ruff binary (path, size, time) and its
    arguments, so another ruff never answers from it. An entry starts with the SHA-256 of the
    formatted text, checked on every read; entries are written whole (a rename) and the oldest
    removed beyond FORMAT_CACHE_ENTRIES. An optimisation only: any error is a miss, and
    ACPGEN_NO_CACHE=1 turns it off (with the template cache; both live under the same rules,
    acpgen.render.cache)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def open(cls) -> FormatCache | None:
        if os.environ.get("ACPGEN_NO_CACHE"):
            return None
        binary = ruff_binary()
        try:
            stat = os.stat(binary)
        except OSError:
            return None
        what = (FORMAT_CACHE_VERSION, binary, stat.st_size, stat.st_mtime_ns, RUFF_ARGS)
        folder = private_folder(f"ruff-{hashlib.sha256(repr(what).encode()).hexdigest()[:16]}")
        return None if folder is None else cls(folder)

    def get(self, text: str) -> str | None:
        try:
            stored = (self.folder / digest(text)).read_text(encoding="utf-8")
        except (OSError, ValueError):
            return None
        check, _, formatted = stored.partition("\n")
        return formatted if check == digest(formatted) else None

    def put(self, texts: dict[str, str]) -> None:
        """Store each formatted text under what it was formatted from."""
        with contextlib.suppress(OSError):
            for text, formatted in texts.items():
                fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".new-")
                try:
                    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                        f.write(f"{digest(formatted)}\n{formatted}")
                    os.replace(temp, self.folder / digest(text))
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(temp)
                    raise
            self.trim()

    def trim(self) -> None:
        entries = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(self.folder) if not e.name.startswith(".")]
        if len(entries) > FORMAT_CACHE_ENTRIES:
            for _, path in sorted(entries)[: len(entries) - FORMAT_CACHE_ENTRIES * 3 // 4]:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def format_sources(
    files: dict[str, str], diags: Diagnostics, formatted: Collection[str] = ()
) -> dict[str, str] | None:
    """Format every .py file in one ruff run; a failure is a diagnostic, never a half result. The
    `formatted` files are left out: the runtime's modules, copied below a comment header, are kept
    in ruff's format with these arguments (tests/unit/test_runtime_sources.py). A large module is
    formatted in pieces side by side (`split_module`), or whole when a piece does not parse; what
    `FormatCache` has is not formatted again."""
    python = {name: text for name, text in files.items() if name.endswith(".py") and name not in formatted}
    split = {name: split_module(text) for name, text in python.items()}
    cache = FormatCache.open()
    known = {} if cache is None else {part: cache.get(part) for parts in split.values() for part in parts}
    todo = part_files(split, known)
    if todo:
        some_cut = any(len(parts) > 1 for parts in split.values())
        out = run_ruff(todo, Diagnostics(diags.file) if some_cut else diags)
        if out is None and some_cut:  # a cut at a bad place, or a template's invalid Python: whole modules
            split = {name: [text] for name, text in python.items()}
            todo = part_files(split, {})
            out = run_ruff(todo, diags)
        if out is None:
            return None
        done = {todo[name]: text for name, text in out.items()}
        if cache is not None:
            cache.put(done)
        known.update(done)
    return {**files, **{name: "\n\n".join(known[part] or "" for part in parts) for name, parts in split.items()}}


def part_files(split: dict[str, list[str]], known: dict[str, str | None]) -> dict[str, str]:
    """The parts to format, each once, by the file name ruff is to see (its messages name it):
    the module's own name for a whole module, `models.py.0.py`, `models.py.1.py`, ... for parts."""
    files: dict[str, str] = {}
    seen: set[str] = set()
    for name, parts in split.items():
        for i, part in enumerate(parts):
            if known.get(part) is None and part not in seen:
                seen.add(part)
                files[name if len(parts) == 1 else f"{name}.{i}.py"] = part
    return files


def run_ruff(texts: dict[str, str], diags: Diagnostics) -> dict[str, str] | None:
    """The files `texts` (name -> text) formatted in one ruff run."""
    with tempfile.TemporaryDirectory(prefix="acpgen-format-") as tmp:
        root = Path(tmp)
        for name, text in texts.items():
            (root / name).write_text(text, encoding="utf-8")
        try:
            proc = subprocess.run(
                [ruff_binary(), "format", *RUFF_ARGS, "--no-cache", "."],
                cwd=root, capture_output=True, text=True, timeout=FORMAT_TIMEOUT, check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            diags.error("formatter-failed", "", f"could not run ruff: {exc}", "reinstall acpgen (ruff is a dependency)")
            return None
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            diags.error("formatter-failed", "", "ruff could not format the generated code: "
                        + " | ".join(detail[:8]), "a template produced invalid Python; fix the template")
            return None
        return {name: (root / name).read_text(encoding="utf-8") for name in texts}
