"""What `acpgen build` and `acpgen check` do, without the command-line framework.

`acpgen.cli` declares the commands to typer and calls these. `acpgen.launch` calls them straight
from an argument list `parse_core` understands, so that the commands a build pipeline runs on every
change do not import typer (about 6 % of a build's instructions); any other argument list, and every
one `parse_core` is unsure of, goes to typer, which parses it and answers errors and `--help`.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from acpgen.config import Target, default_package, load_config, schema_target
from acpgen.diagnostics import Diagnostic, Diagnostics
from acpgen.ir.naming import package_name_problem
from acpgen.write import real_folder

EXIT_OK, EXIT_STALE, EXIT_ERROR = 0, 1, 2
DEFAULT_CONFIG = Path("pyproject.toml")
ANSI_STYLE = r"\x1b\[[;?0-9]*[a-zA-Z]"


def echo(message: str, err: bool = False) -> None:
    """One line to standard output or error, flushed; terminal styles are left out where the stream
    is not a terminal (as typer's `echo` does)."""
    stream: TextIO | None = sys.stderr if err else sys.stdout
    if stream is None:
        return
    text = message + "\n"
    if "\x1b" in text and not is_terminal(stream):
        text = re.sub(ANSI_STYLE, "", text)
    stream.write(text)
    stream.flush()


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except Exception:  # a replaced stream that cannot tell
        return False


def report(diagnostics: list[Diagnostic], verbose: bool, quiet: bool = False) -> None:
    """Errors always; warnings too, as compilers and linters print them, unless -q."""
    for d in diagnostics:
        if d.level == "error" or not quiet or verbose:
            echo(d.render(), err=True)


def fail(where: str, code: str, message: str, hint: str = "") -> SystemExit:
    """A usage error, reported as every error is (a Diagnostic, rendered by `report`); raise what
    it returns."""
    report([Diagnostic("error", code, "", message, where, hint)], True)
    return SystemExit(EXIT_ERROR)


def resolve_targets(
    schema: Path | None, output: Path | None, package: str | None, unstable: Path | None,
    no_unstable: bool, meta: Path | None, templates: Path | None, config: Path, names: list[str],
    allow_foreign: bool, keep_unknown: bool = False, protocol_version: int | None = None,
) -> list[Target]:
    """The targets `build` and `check` work on (one option set for both), each with the command
    that regenerates it exactly (the provenance header prints it)."""
    if unstable is not None and no_unstable:
        raise fail("option --unstable", "bad-option",
                   f"--unstable {unstable.as_posix()} and --no-unstable contradict each other", "give one of them")
    if schema is not None:
        if names:
            raise fail("option --target", "bad-option",
                       f"--target {names[0]} selects a target of the config, and SCHEMA {schema.as_posix()} "
                       "was given too", "give one of them")
        pkg = package if package is not None else (
            real_folder(output).name if output else default_package(schema, meta, protocol_version))
        problem = package_name_problem(pkg)
        if problem:
            # The default (no --package, no --output) is always a valid name.
            where, source = (
                ("option --package", "the package name") if package is not None or output is None
                else (output.as_posix(), "the package name taken from the output folder's name"))
            raise fail(where, "bad-package", f"{source} {pkg!r} cannot name a package: {problem}",
                       "pass --package NAME, e.g. --package acp_v1")
        target = schema_target(
            schema, package=pkg, output=output, unstable=unstable, no_unstable=no_unstable, meta=meta,
            templates=templates, allow_foreign=allow_foreign, keep_unknown=keep_unknown,
            protocol_version=protocol_version,
        )
        return [target]
    # Without SCHEMA the configured targets are built, each with its own output, package and
    # files: the options that name those would be dropped, so they are refused.
    given = [name for name, value in (("--output", output), ("--package", package), ("--unstable", unstable),
                                      ("--no-unstable", no_unstable), ("--meta", meta)) if value not in (None, False)]
    if given:
        listed = given[0] if len(given) == 1 else f"{', '.join(given[:-1])} and {given[-1]}"
        raise fail(f"option {given[0]}", "bad-option",
                   f"{listed} appl{'ies' if len(given) == 1 else 'y'} to a SCHEMA argument, and none was given "
                   f"(without one, the targets of {config} are built, each as its table says)",
                   "give SCHEMA, or set these in the target's table (docs/config.md) and select it with -t NAME")
    # Options that apply on top of each configured target's own, and join its command.
    flags = [*(["--templates", templates.as_posix()] if templates else []),
             *(["--allow-foreign"] if allow_foreign else []), *(["--keep-unknown"] if keep_unknown else [])]
    diags = Diagnostics(str(config))
    targets = load_config(config, diags)
    if diags.errors:
        report(diags.items, True)
        raise SystemExit(EXIT_ERROR)
    if names:
        unknown = sorted(set(names) - {t.name for t in targets})
        if unknown:
            raise fail(str(config), "unknown-target", f"no target named {', '.join(unknown)} "
                       f"(known: {', '.join(t.name for t in targets)})")
        targets = [t for t in targets if t.name in names]
    if protocol_version is not None:
        if len(targets) != 1:
            raise fail("option --protocol-version", "bad-option",
                       f"one version for {len(targets)} targets (each configured target sets its own)",
                       "give it with SCHEMA or one --target, or set protocol_version in the target's table")
        flags += ["--protocol-version", str(protocol_version)]
        targets = [dataclasses.replace(targets[0], protocol_version=protocol_version)]
    if flags:
        targets = [
            dataclasses.replace(
                t, templates=templates or t.templates, allow_foreign=allow_foreign or t.allow_foreign,
                keep_unknown=keep_unknown or t.keep_unknown, command=" ".join([t.command, *map(shlex.quote, flags)]),
            )
            for t in targets
        ]
    return targets


def build(
    schema: Path | None = None, output: Path | None = None, package: str | None = None,
    unstable: Path | None = None, no_unstable: bool = False, meta: Path | None = None,
    templates: Path | None = None, config: Path = DEFAULT_CONFIG, target: list[str] | None = None,
    allow_foreign: bool = False, keep_unknown: bool = False, quiet: bool = False,
    verbose: bool = False, protocol_version: int | None = None,
) -> None:
    """`acpgen build`: generate the package(s); raises SystemExit with the exit status."""
    from acpgen.pipeline import build as run_build

    targets = resolve_targets(schema, output, package, unstable, no_unstable, meta, templates, config,
                              target or [], allow_foreign, keep_unknown, protocol_version)
    failed = False
    for index, t in enumerate(targets, 1):
        result = run_build(t)
        report(result.diagnostics, verbose, quiet)
        if not result.ok:
            failed = True
            echo(f"[{index}/{len(targets)}] {t.name}: failed; {t.output} left as it was", err=True)
        elif not quiet:
            # The generated files and the manifest beside them (write.MANIFEST): what the folder holds.
            echo(f"[{index}/{len(targets)}] {t.name}: wrote {len(result.files or {}) + 1} files to {t.output}")
    raise SystemExit(EXIT_ERROR if failed else EXIT_OK)


def check(
    schema: Path | None = None, output: Path | None = None, package: str | None = None,
    unstable: Path | None = None, no_unstable: bool = False, meta: Path | None = None,
    templates: Path | None = None, config: Path = DEFAULT_CONFIG, target: list[str] | None = None,
    allow_foreign: bool = False, keep_unknown: bool = False, quiet: bool = False,
    verbose: bool = False, protocol_version: int | None = None,
) -> None:
    """`acpgen check`: regenerate in memory and compare with disk; raises SystemExit with 0 fresh,
    1 stale (with a diff), 2 error."""
    from acpgen.pipeline import check_target

    targets = resolve_targets(schema, output, package, unstable, no_unstable, meta, templates, config,
                              target or [], allow_foreign, keep_unknown, protocol_version)
    code = EXIT_OK
    for t in targets:
        result, stale, diff = check_target(t)
        report(result.diagnostics, verbose, quiet)
        if not result.ok or result.files is None:
            code = EXIT_ERROR
            continue
        if stale:
            code = max(code, EXIT_STALE)
            echo(f"{t.name}: {t.output} is stale: {', '.join(stale)}", err=True)
            if not quiet:
                sys.stdout.write(diff)
            echo(f"  run `{t.command}` to regenerate", err=True)
        elif not quiet:
            echo(f"{t.name}: {t.output} is up to date")
    raise SystemExit(code)


COMMANDS = {"build": build, "check": check}
# The options of `build` and `check` as `acpgen.cli` declares them to typer (a test compares the
# two parsers on generated argument lists): option -> parameter.
VALUE_OPTIONS = {
    "--output": "output", "-o": "output", "--package": "package", "--unstable": "unstable",
    "--meta": "meta", "--templates": "templates", "--config": "config", "--target": "target",
    "-t": "target", "--protocol-version": "protocol_version",
}
FLAG_OPTIONS = {
    "--no-unstable": "no_unstable", "--allow-foreign": "allow_foreign", "--keep-unknown": "keep_unknown",
    "--quiet": "quiet", "-q": "quiet", "--verbose": "verbose", "-v": "verbose",
}
PATH_PARAMETERS = frozenset({"output", "unstable", "meta", "templates", "config"})


def parse_core(argv: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
    """`build` or `check` and their keyword arguments, when `argv` (the arguments after the program
    name) is one of the plain forms that typer reads the same way: the command first, then SCHEMA
    at most once, options spelled out (`-o X`, `--output X`, `--output=X`), values that are not
    empty and do not start with `-`, a protocol version of ASCII digits. None for anything else
    (help, typos, `--`, joined short options, a second SCHEMA, ...): typer decides those, with its
    own messages. Output that is not UTF-8 goes to typer too, whose `echo` adapts the encoding."""
    if not argv or argv[0] not in COMMANDS or not utf8_output():
        return None
    options: dict[str, Any] = {}
    schema: list[str] = []
    rest = iter(argv[1:])
    for arg in rest:
        if not arg.startswith("-"):
            schema.append(arg)
            continue
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in FLAG_OPTIONS and not equals:
            options[FLAG_OPTIONS[name]] = True
            continue
        parameter = VALUE_OPTIONS.get(name)
        if parameter is None:
            return None
        if not equals:
            value = next(rest, "")
        if not value or value.startswith("-"):
            return None
        if parameter == "target":
            options.setdefault("target", []).append(value)
        elif parameter == "protocol_version":
            if not (value.isascii() and value.isdigit()):
                return None
            options[parameter] = int(value)
        else:
            options[parameter] = Path(value) if parameter in PATH_PARAMETERS else value
    if len(schema) > 1:
        return None
    if schema:
        options["schema"] = Path(schema[0])
    return argv[0], options


def utf8_output() -> bool:
    return all(stream is not None and (stream.encoding or "").lower().replace("-", "") == "utf8"
               for stream in (sys.stdout, sys.stderr))
