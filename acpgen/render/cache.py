"""A compiled-template cache, so a build does not re-parse and re-compile every Jinja template.

Compiling the templates costs more than a third of rendering (about 0.15 s of a v1 build). Jinja
keys each cached template by its name and file and checks the source's checksum, so an edited
template (built-in or a user's override) is recompiled. The folder name carries what else the
compiled code depends on (acpgen's and Jinja's versions, the environment's options). The cache is
an optimisation only: any error reading or writing it is ignored, and ACPGEN_NO_CACHE=1 turns it
off. It lives in $ACPGEN_CACHE_DIR, else $XDG_CACHE_HOME/acpgen, else ~/.cache/acpgen, in a folder
only the user can read (it holds code that is executed). The formatted-code cache
(`acpgen.render.format.FormatCache`) lives beside it, under the same rules.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket, FileSystemBytecodeCache

from acpgen import __version__


class QuietBytecodeCache(FileSystemBytecodeCache):
    """Jinja's file cache with every I/O failure treated as a cache miss."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, ValueError, EOFError):
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def cache_root() -> Path:
    if os.environ.get("ACPGEN_CACHE_DIR"):
        return Path(os.environ["ACPGEN_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "acpgen"


def bytecode_cache(options: tuple[object, ...]) -> QuietBytecodeCache | None:
    """The cache for an environment built with `options`, or None (disabled or not writable)."""
    if os.environ.get("ACPGEN_NO_CACHE"):
        return None
    key = hashlib.sha256(repr((__version__, jinja2.__version__, options)).encode()).hexdigest()[:16]
    folder = private_folder(f"jinja-{key}")
    return None if folder is None else QuietBytecodeCache(str(folder))


def private_folder(name: str) -> Path | None:
    """The cache folder `name`, made if missing; None if it cannot be made, or if others could
    write to it: what it holds is executed (compiled templates) or becomes generated code."""
    folder = cache_root() / name
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if folder.stat().st_uid != os.getuid() or folder.stat().st_mode & 0o077:
            return None
    except (OSError, RuntimeError, AttributeError):
        return None
    return folder
