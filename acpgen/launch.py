"""The `acpgen` command: `build` and `check` in their plain forms run without typer
(`acpgen.commands.parse_core`); everything else goes through the typer app in `acpgen.cli`."""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Run the command `sys.argv` names; raises SystemExit with its status."""
    from acpgen.commands import COMMANDS, parse_core

    parsed = parse_core(sys.argv[1:])
    if parsed is None:
        from acpgen.cli import main as typer_main

        typer_main()
        return
    command, options = parsed
    COMMANDS[command](**options)


def entry() -> None:
    """The `acpgen` command (pyproject's script): `main()`, then, once standard output and error are
    flushed, an immediate exit with its status. Everything a command writes is closed by then; what
    the exit skips is the interpreter's teardown of the objects a build leaves (the IR, the compiled
    templates), 20-30 ms of a 0.4 s build (mypy's command does the same). `main()` keeps raising
    SystemExit for callers in a process of their own."""
    try:
        main()
        status: object = 0
    except SystemExit as exc:
        status = exc.code
    if status is None:
        status = 0
    elif not isinstance(status, int):
        print(status, file=sys.stderr)
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that went away (`acpgen ... | head`)
        status = status or 1
    os._exit(status)
