"""The kit's commands, registered on acpgen's typer app: inspect, conform agent|client, replay."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from acpgen.kit.bindings import Binding

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2

SchemaOpt = Annotated[Path | None, typer.Option(
    "--schema", help="Decode with a binding generated from this schema.json (cached) instead of a bundled one.")]
ProtocolOpt = Annotated[str | None, typer.Option(
    "--protocol", help="A bundled binding: v1 (default) or v2.")]
# The kit's first spelling of --protocol; `--target` names a configured target in `acpgen build`.
OldTargetOpt = Annotated[str | None, typer.Option(
    "--target", hidden=True, help="Deprecated: --protocol.")]
CommandArg = Annotated[list[str], typer.Argument(
    metavar="-- CMD [ARGS]...", help="The program to run, after `--`.", show_default=False)]
TimeoutOpt = Annotated[float, typer.Option(
    "--timeout", help="Seconds to wait for each answer (the first one, which includes the program's start: three times this).")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="Also write the results as JSON to this file.")]
JunitOpt = Annotated[Path | None, typer.Option("--junit", help="Also write the results as JUnit XML to this file.")]


def protocol_choice(protocol: str | None, old_target: str | None) -> str | None:
    """--protocol, or the deprecated --target with a warning (both given: they must agree)."""
    if old_target is None:
        return protocol
    typer.echo("warning: --target is deprecated here, use --protocol (in `acpgen build`, --target names a "
               "configured target)", err=True)
    if protocol is not None and protocol != old_target:
        typer.echo(f"error: --protocol {protocol} and --target {old_target} contradict each other", err=True)
        raise typer.Exit(EXIT_ERROR)
    return old_target


def binding_or_exit(schema: Path | None, protocol: str | None, old_target: str | None = None) -> Binding:
    from acpgen.kit.bindings import BindingError, load_binding

    try:
        return load_binding(schema, protocol_choice(protocol, old_target))
    except BindingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_ERROR) from None


def known_version(binding: Binding, what: str) -> None:
    """The fake agent of `conform client` plays protocol v1 or v2 (the bundled drafts); a schema
    of another protocol version has no scripted turn."""
    if binding.protocol_version not in (1, 2):
        typer.echo(f"error: {what} scripts ACP protocol versions 1 and 2; {binding.name} is version "
                   f"{binding.protocol_version}. Use `acpgen inspect` to check a session of it.", err=True)
        raise typer.Exit(EXIT_ERROR)


def need_command(command: list[str] | None) -> list[str]:
    if not command:
        typer.echo("error: give the program to run after `--`, e.g. `-- python my_agent.py`", err=True)
        raise typer.Exit(EXIT_ERROR)
    if shutil.which(command[0]) is None:
        typer.echo(f"error: cannot run {command[0]!r}: no such program (check the path or PATH)", err=True)
        raise typer.Exit(EXIT_ERROR)
    return command


def inspect(
    command: CommandArg,
    schema: SchemaOpt = None,
    protocol: ProtocolOpt = None,
    target: OldTargetOpt = None,
    trace: Annotated[Path | None, typer.Option("--trace", help="Write every line as JSONL (time, direction, raw line, decoded kind, violations).")] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write violations to this file instead of stderr.")] = None,
) -> None:
    """Run an agent behind a transparent stdio proxy that checks every message both ways.

    Each violation is reported (direction, method, id, JSON path, what was expected) on stderr or
    in --report. Put it where an editor starts the agent: command `acpgen`, args
    `["inspect", "--", "my-agent"]`. The exit status is the agent's."""
    from acpgen.kit.inspect import run_inspect

    command = need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    raise typer.Exit(run_inspect(binding, command, trace, report))


conform = typer.Typer(no_args_is_help=True, help="Check an ACP agent or client against the protocol's rules.")


@conform.command("agent")
def conform_agent(
    command: CommandArg,
    schema: SchemaOpt = None,
    protocol: ProtocolOpt = None,
    target: OldTargetOpt = None,
    json_out: JsonOpt = None,
    junit: JunitOpt = None,
    timeout: TimeoutOpt = 20.0,
) -> None:
    """Drive an agent through scripted scenarios and check each protocol rule.

    Each check names its rule (MUST/SHOULD and spec section). Exit 0 only when every MUST holds."""
    from acpgen.kit.conform_agent import conform_agent as run

    command = need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    result = asyncio.run(run(binding, command, timeout))
    sys.stdout.write(result.table())
    result.write(json_out, junit)
    raise typer.Exit(EXIT_OK if result.ok else EXIT_FAIL)


@conform.command("client")
def conform_client(
    command: CommandArg,
    schema: SchemaOpt = None,
    protocol: ProtocolOpt = None,
    target: OldTargetOpt = None,
    json_out: JsonOpt = None,
    junit: JunitOpt = None,
    timeout: TimeoutOpt = 20.0,
    cancel_args: Annotated[str | None, typer.Option(
        "--cancel-args", help="Extra arguments that make the client cancel its turn (e.g. '--cancel'), "
        "inserted before the fake agent's command for the cancellation scenario.")] = None,
) -> None:
    """Start a client with a scripted fake agent and check what it sends and answers.

    The fake agent's command is appended to CMD (or put where an argument is `{agent}`).
    Exit 0 only when every MUST holds."""
    from acpgen.kit.conform_client import conform_client as run

    command = need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    known_version(binding, "conform client")
    result = asyncio.run(run(binding, command, timeout, cancel_args))
    sys.stdout.write(result.table())
    result.write(json_out, junit)
    raise typer.Exit(EXIT_OK if result.ok else EXIT_FAIL)


def replay(
    trace_file: Annotated[Path, typer.Argument(metavar="TRACE", help="A JSONL trace written by `acpgen inspect --trace`.")],
    command: CommandArg,
    schema: SchemaOpt = None,
    protocol: ProtocolOpt = None,
    target: OldTargetOpt = None,
    timeout: TimeoutOpt = 20.0,
) -> None:
    """Replay a recorded trace's client side against an agent and compare its answers.

    Request ids and session ids are remapped; differences in shape (keys, JSON types) are listed
    with their path. Exit 0 when there are none."""
    from acpgen.kit.replay import ReplayError, run_replay

    command = need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    try:
        differences = asyncio.run(run_replay(binding, trace_file, command, timeout))
    except ReplayError as exc:
        typer.echo(f"{trace_file}: error: {exc}", err=True)
        raise typer.Exit(EXIT_ERROR) from None
    for line in differences:
        typer.echo(line)
    typer.echo(f"replay: {len(differences)} difference(s)" if differences else "replay: the agent's answers match the trace in shape")
    raise typer.Exit(EXIT_FAIL if differences else EXIT_OK)


def register(app: typer.Typer) -> None:
    app.command("inspect")(inspect)
    app.add_typer(conform, name="conform")
    app.command("replay")(replay)
