"""The kit's commands, registered on acpgen's typer app: inspect, conform agent|client, replay."""

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from acpgen.kit.bindings import Binding
    from acpgen.kit.gate import Gate
    from acpgen.kit.remote_agent import RemoteOptions

from acpgen.kit.gate import EXIT_COULD_NOT_RUN, EXIT_FAIL, EXIT_OK, EXIT_USAGE, GateError

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
StrictOpt = Annotated[bool, typer.Option("--strict", help="SHOULD failures fail the run too (exit 1).")]
SkipOpt = Annotated[list[str] | None, typer.Option(
    "--skip", metavar="RULE", help="Do not judge this rule (repeatable; ids: `acpgen conform rules`).")]
WaiversOpt = Annotated[Path | None, typer.Option(
    "--waivers", metavar="FILE", help="A TOML file of [[waive]] rule = \"...\" reason = \"...\": a waived "
    "failure is shown with its reason and does not fail the run.")]


def protocol_choice(protocol: str | None, old_target: str | None) -> str | None:
    """--protocol, or the deprecated --target with a warning (both given: they must agree)."""
    if old_target is None:
        return protocol
    typer.echo("warning: --target is deprecated here, use --protocol (in `acpgen build`, --target names a "
               "configured target)", err=True)
    if protocol is not None and protocol != old_target:
        typer.echo(f"error: --protocol {protocol} and --target {old_target} contradict each other", err=True)
        raise typer.Exit(EXIT_USAGE)
    return old_target


def binding_or_exit(schema: Path | None, protocol: str | None, old_target: str | None = None) -> "Binding":
    from acpgen.kit.bindings import BindingError, load_binding

    try:
        return load_binding(schema, protocol_choice(protocol, old_target))
    except BindingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE if exc.usage else EXIT_COULD_NOT_RUN) from None


def known_version(binding: "Binding", what: str) -> None:
    """The fake agent of `conform client` plays protocol v1 or v2 (the bundled drafts); a schema
    of another protocol version has no scripted turn."""
    if binding.protocol_version not in (1, 2):
        typer.echo(f"error: {what} scripts ACP protocol versions 1 and 2; {binding.name} is version "
                   f"{binding.protocol_version}. Use `acpgen inspect` to check a session of it.", err=True)
        raise typer.Exit(EXIT_USAGE)


def need_command(command: list[str] | None) -> list[str]:
    if not command:
        typer.echo("error: give the program to run after `--`, e.g. `-- python my_agent.py`", err=True)
        raise typer.Exit(EXIT_USAGE)
    if shutil.which(command[0]) is None:
        typer.echo(f"error: cannot run {command[0]!r}: no such program (check the path or PATH)", err=True)
        raise typer.Exit(EXIT_COULD_NOT_RUN)
    return command


def remote_or_none(command: list[str] | None, headers: list[str] | None, http1: bool) -> "RemoteOptions | None":
    """A single URL instead of a command: the remote agent's options (--header, --http1)."""
    from acpgen.kit.remote_agent import RemoteOptions, is_url

    if not command or not is_url(command[0]):
        if headers or http1:
            typer.echo("error: --header and --http1 are for a remote agent (a ws:// or http:// URL)", err=True)
            raise typer.Exit(EXIT_USAGE)
        return None
    if len(command) > 1:
        typer.echo(f"error: a URL ({command[0]}) takes no arguments after it", err=True)
        raise typer.Exit(EXIT_USAGE)
    parsed: dict[str, str] = {}
    for item in headers or []:
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            typer.echo(f"error: --header {item!r}: expected 'NAME: VALUE'", err=True)
            raise typer.Exit(EXIT_USAGE)
        parsed[name.strip()] = value.strip()
    return RemoteOptions(url=command[0], headers=parsed, http2=not http1)


def gate_or_exit(strict: bool, skip: list[str] | None, waivers: Path | None, known: set[str],
                 outputs: dict[str, Path | None]) -> "Gate":
    """The CI options, checked before anything runs: a mistake in them is a usage error (exit 2)."""
    from acpgen.kit.gate import check_output_folder, make_gate

    try:
        for option, path in outputs.items():
            check_output_folder(path, option)
        gate = make_gate(strict, skip, waivers)
        gate.check_ids(known)
    except GateError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    return gate


def outputs_or_exit(outputs: dict[str, Path | None]) -> None:
    from acpgen.kit.gate import check_output_folder

    try:
        for option, path in outputs.items():
            check_output_folder(path, option)
    except GateError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def inspect(
    command: CommandArg,
    schema: SchemaOpt = None,
    protocol: ProtocolOpt = None,
    target: OldTargetOpt = None,
    trace: Annotated[Path | None, typer.Option("--trace", help="Write every line as JSONL (time, direction, raw line, decoded kind, violations).")] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write violations to this file instead of stderr.")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Write the session as a self-contained HTML page "
                                              "(sequence diagram, expandable messages, violations marked).")] = None,
) -> None:
    """Run an agent behind a transparent stdio proxy that checks every message both ways.

    Each violation is reported (direction, method, id, JSON path, what was expected) on stderr or
    in --report. Put it where an editor starts the agent: command `acpgen`, args
    `["inspect", "--", "my-agent"]`. The exit status is the agent's."""
    from acpgen.kit.inspect import run_inspect

    outputs_or_exit({"--trace": trace, "--report": report, "--html": html})
    command = need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    raise typer.Exit(run_inspect(binding, command, trace, report, html_path=html))


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
    strict: StrictOpt = False,
    skip: SkipOpt = None,
    waivers: WaiversOpt = None,
    auth: Annotated[str | None, typer.Option(
        "--auth", metavar="METHOD|none", help="Authenticate with this advertised method id, or `none` to never "
        "call authenticate (default: the first advertised method that is not `terminal` or `env_var`).")] = None,
    prompt: Annotated[str | None, typer.Option(
        "--prompt", metavar="TEXT", help="The text of the scripted prompts (it should make the agent ask a "
        "permission, for the permission.* checks).")] = None,
    header: Annotated[list[str] | None, typer.Option(
        "--header", metavar="'NAME: VALUE'", help="A remote agent (URL): send this header with every request "
        "(repeatable), e.g. 'Authorization: Bearer TOKEN'.")] = None,
    http1: Annotated[bool, typer.Option(
        "--http1", help="A remote agent over http(s)://: HTTP/1.1 instead of HTTP/2 (for a server such as "
        "Uvicorn that has no HTTP/2).")] = False,
) -> None:
    """Drive an agent through scripted scenarios and check each protocol rule.

    The agent is a command to start (stdio), or a URL: ws:// or wss:// (WebSocket), http:// or
    https:// (Streamable HTTP), each connection a new agent connection.
    Each check names its rule (MUST/SHOULD and spec section). Exit 0 when every MUST holds (with
    --strict every SHOULD too), 1 when one fails, 2 on a usage error, 3 when the run could not
    check (no such program, nothing at the URL, another protocol version, checks blocked by
    authentication)."""
    from acpgen.kit.conform_agent import AgentOptions, all_agent_rule_ids
    from acpgen.kit.conform_agent import conform_agent as run

    gate = gate_or_exit(strict, skip, waivers, all_agent_rule_ids(), {"--json": json_out, "--junit": junit})
    remote = remote_or_none(command, header, http1)
    command = command if remote is not None else need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    options = AgentOptions(auth=auth, prompt=prompt, remote=remote)
    import asyncio

    result = asyncio.run(run(binding, command, timeout, options))
    result.apply(gate)
    sys.stdout.write(result.table())
    result.write(json_out, junit)
    raise typer.Exit(result.exit_code())


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
    strict: StrictOpt = False,
    skip: SkipOpt = None,
    waivers: WaiversOpt = None,
) -> None:
    """Start a client with a scripted fake agent and check what it sends and answers.

    The fake agent's command is appended to CMD (or put where an argument is `{agent}`).
    Exit codes as for `conform agent`."""
    from acpgen.kit.conform_client import all_client_rule_ids
    from acpgen.kit.conform_client import conform_client as run

    gate = gate_or_exit(strict, skip, waivers, all_client_rule_ids(), {"--json": json_out, "--junit": junit})
    command = need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    known_version(binding, "conform client")
    import asyncio

    result = asyncio.run(run(binding, command, timeout, cancel_args))
    result.apply(gate)
    sys.stdout.write(result.table())
    result.write(json_out, junit)
    raise typer.Exit(result.exit_code())


@conform.command("rules")
def conform_rules(
    markdown: Annotated[bool, typer.Option("--markdown", help="A markdown table instead of plain lines.")] = False,
) -> None:
    """List every rule id the conform commands judge (stable ids for --skip and waivers)."""
    from acpgen.kit.conform_agent import rule_catalogue

    rows = rule_catalogue()
    if markdown:
        typer.echo("| id | side | level | rule | spec |\n|---|---|---|---|---|")
    for side, rule in rows:
        if markdown:
            typer.echo(f"| `{rule.id}` | {side} | {rule.level} | {rule.text} | {rule.section} |")
        else:
            typer.echo(f"{rule.id:32} {side:9} {rule.level:6} {rule.text}")


def replay(
    trace_file: Annotated[Path, typer.Argument(metavar="TRACE", help="A JSONL trace written by `acpgen inspect --trace`.")],
    command: CommandArg,
    schema: SchemaOpt = None,
    protocol: ProtocolOpt = None,
    target: OldTargetOpt = None,
    timeout: TimeoutOpt = 20.0,
    html: Annotated[Path | None, typer.Option("--html", help="Write the replayed session as a self-contained "
                                              "HTML page, its differences listed above the diagram.")] = None,
) -> None:
    """Replay a recorded trace's client side against an agent and compare its answers.

    Request ids and session ids are remapped; differences in shape (keys, JSON types) are listed
    with their path. Exit 0 when there are none."""
    from acpgen.kit.replay import ReplayError, run_replay

    outputs_or_exit({"--html": html})
    command = need_command(command)
    binding = binding_or_exit(schema, protocol, target)
    try:
        import asyncio

        differences = asyncio.run(run_replay(binding, trace_file, command, timeout, html))
    except ReplayError as exc:
        typer.echo(f"{trace_file}: error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    for line in differences:
        typer.echo(line)
    typer.echo(f"replay: {len(differences)} difference(s)" if differences else "replay: the agent's answers match the trace in shape")
    raise typer.Exit(EXIT_FAIL if differences else EXIT_OK)


def register(app: typer.Typer) -> None:
    app.command("inspect")(inspect)
    app.add_typer(conform, name="conform")
    app.command("replay")(replay)
