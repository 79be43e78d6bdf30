"""Stage 4: format the rendered sources with the pinned ruff, independent of any user config."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path

from acpgen.diagnostics import Diagnostics

RUFF_ARGS = ("--isolated", "--line-length", "100", "--target-version", "py310")


def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(os.fspath(find_ruff_bin()))
    except (ImportError, FileNotFoundError):  # pragma: no cover - ruff is a dependency
        return str(Path(sys.executable).with_name("ruff"))


def format_sources(
    files: dict[str, str], diags: Diagnostics, formatted: Collection[str] = ()
) -> dict[str, str] | None:
    """Format every .py file in one ruff run; a failure is a diagnostic, never a half result. The
    `formatted` files are left out: the runtime's modules, copied below a comment header, are kept
    in ruff's format with these arguments (tests/unit/test_runtime_sources.py)."""
    python = {name: text for name, text in files.items() if name.endswith(".py") and name not in formatted}
    with tempfile.TemporaryDirectory(prefix="acpgen-format-") as tmp:
        root = Path(tmp)
        for name, text in python.items():
            (root / name).write_text(text, encoding="utf-8")
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
        out = dict(files)
        for name in python:
            out[name] = (root / name).read_text(encoding="utf-8")
    return out
