"""Command line: parse arguments, run the pipeline, print diagnostics, choose the exit code."""

# No `from __future__ import annotations` here or in acpgen/kit/cli.py: typer reads every command's
# signature on each run, and string annotations it would evaluate one by one (compiling each):
# about 2 % of a build's instructions.
import functools
import sys
from pathlib import Path
from typing import Annotated

import typer

from acpgen import __version__, commands
from acpgen.commands import EXIT_ERROR, EXIT_OK, EXIT_STALE, echo, fail, report
from acpgen.config import Target, load_config
from acpgen.diagnostics import Diagnostics


def new_app() -> typer.Typer:
    return typer.Typer(
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        help="Generate a typed, stdlib-only Python binding from the Agent Client Protocol JSON Schema.",
    )


# `app` has every command; `core` only build, check and diff, which `main` runs when one of them is
# named first: typer builds every registered command's parser on each run, and the kit's commands
# cost a build 1.3 % of its instructions (its import included). `app` is made when first asked for
# (`full_app`, or `acpgen.cli.app`), so a build does not import the kit.
core = new_app()
CORE_COMMANDS = ("build", "check", "diff")


def version_callback(value: bool) -> None:
    if value:
        typer.echo(f"acpgen {__version__}")
        raise typer.Exit()


def root(
    version: Annotated[
        bool | None, typer.Option("--version", callback=version_callback, is_eager=True, help="Print the version.")
    ] = None,
) -> None:
    """acpgen: ACP schema -> Python models, codecs, method tables and runtime."""


SchemaArg = Annotated[Path | None, typer.Argument(help="schema.json to build; omit to build the targets of the tool.acpgen table.")]
OutputOpt = Annotated[Path | None, typer.Option("--output", "-o", help="Folder of the generated package.")]
PackageOpt = Annotated[str | None, typer.Option("--package", help="Package name (default: the output folder's name; without --output acp_v<N> for a known protocol version, else acp_generated).")]
UnstableOpt = Annotated[Path | None, typer.Option("--unstable", help="The unstable companion (default: found beside SCHEMA).")]
NoUnstableOpt = Annotated[bool, typer.Option("--no-unstable", help="Build the stable schema only.")]
MetaOpt = Annotated[Path | None, typer.Option("--meta", help="meta.json to check the method table against.")]
ProtocolVersionOpt = Annotated[int | None, typer.Option(
    "--protocol-version", min=0, help="The protocolVersion the package speaks (default: the config key, else meta.json's version).")]
TemplatesOpt = Annotated[Path | None, typer.Option("--templates", help="Folder whose templates override built-in ones by name.")]
ConfigOpt = Annotated[Path, typer.Option("--config", help="pyproject.toml holding the tool.acpgen table.")]
TargetOpt = Annotated[list[str] | None, typer.Option("--target", "-t", help="Only this configured target (repeatable).")]
ForeignOpt = Annotated[bool, typer.Option("--allow-foreign", help="Write into a folder holding files acpgen does not own (they are kept).")]
KeepUnknownOpt = Annotated[bool, typer.Option("--keep-unknown", help="Generated classes keep keys the schema does not define and re-encode them.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print errors only (no warnings, no progress).")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Print warnings even with -q.")]


def build(
    schema: SchemaArg = None, output: OutputOpt = None, package: PackageOpt = None,
    unstable: UnstableOpt = None, no_unstable: NoUnstableOpt = False, meta: MetaOpt = None,
    templates: TemplatesOpt = None, config: ConfigOpt = Path("pyproject.toml"), target: TargetOpt = None,
    allow_foreign: ForeignOpt = False, keep_unknown: KeepUnknownOpt = False, quiet: QuietOpt = False,
    verbose: VerboseOpt = False, protocol_version: ProtocolVersionOpt = None,
) -> None:
    """Generate the package(s); a failed build leaves the previous output untouched."""
    commands.build(
        schema=schema, output=output, package=package, unstable=unstable, no_unstable=no_unstable, meta=meta,
        templates=templates, config=config, target=target, allow_foreign=allow_foreign,
        keep_unknown=keep_unknown, quiet=quiet, verbose=verbose, protocol_version=protocol_version,
    )


def check(
    schema: SchemaArg = None, output: OutputOpt = None, package: PackageOpt = None,
    unstable: UnstableOpt = None, no_unstable: NoUnstableOpt = False, meta: MetaOpt = None,
    templates: TemplatesOpt = None, config: ConfigOpt = Path("pyproject.toml"), target: TargetOpt = None,
    allow_foreign: ForeignOpt = False, keep_unknown: KeepUnknownOpt = False, quiet: QuietOpt = False,
    verbose: VerboseOpt = False, protocol_version: ProtocolVersionOpt = None,
) -> None:
    """Regenerate in memory and compare with disk: 0 fresh, 1 stale (with a diff), 2 error (also
    whatever `build` would refuse). Takes the same options as `build`."""
    commands.check(
        schema=schema, output=output, package=package, unstable=unstable, no_unstable=no_unstable, meta=meta,
        templates=templates, config=config, target=target, allow_foreign=allow_foreign,
        keep_unknown=keep_unknown, quiet=quiet, verbose=verbose, protocol_version=protocol_version,
    )


DIFF_FORMATS = ("text", "markdown", "json")


def diff_side(spec: str, role: str, config: Path, no_unstable: bool) -> tuple[Target, str]:
    """OLD or NEW: a schema file, else a target of the config."""
    from acpgen.diff import file_target

    path = Path(spec)
    if path.is_file():
        return file_target(path, no_unstable), spec
    if path.exists():
        raise fail(spec, "bad-argument", f"{role} is a folder; give a schema file (schema.json) or a target name")
    names: list[str] = []
    if config.is_file():
        diags = Diagnostics(str(config))
        targets = load_config(config, diags)
        for t in targets:
            if t.name == spec:
                return t, f"target {spec} ({t.schema.name})"
        names = [t.name for t in targets]
        if diags.errors and not spec.endswith(".json"):
            report(diags.items, True)
            raise fail(f"argument {role}", "bad-argument",
                       f"{spec!r} is no file; and {config} has errors, so it is no usable target either")
    known = f"targets in {config}: {', '.join(names)}" if names else f"{config} defines no targets"
    raise fail(spec, "bad-argument", f"{role} is neither a schema file nor a configured target ({known})")


def diff(
    old: Annotated[str, typer.Argument(metavar="OLD", help="The older schema: a schema.json (its unstable companion is merged when found) or a target name.")],
    new: Annotated[str, typer.Argument(metavar="NEW", help="The newer schema: a schema.json or a target name.")],
    no_unstable: Annotated[bool, typer.Option(
        "--no-unstable", help="Do not merge the unstable companion found beside a schema.json "
        "(an X.unstable.json given as OLD or NEW is still merged with its X.json).")] = False,
    ignore_unstable: Annotated[bool, typer.Option(
        "--ignore-unstable",
        help="Compare the stable schemas only: items only the unstable files define are left out on both sides.")] = False,
    fmt: Annotated[str, typer.Option("--format", "-f", help="text, markdown or json.")] = "text",
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", help="Exit 1 when a change of this level exists: breaking (wire-breaking), "
        "source (wire- or source-breaking) or any.")] = None,
    config: ConfigOpt = Path("pyproject.toml"),
    verbose: VerboseOpt = False,
) -> None:
    """Compare two schema versions: methods, types, fields, enum values and variants, each change
    classified as wire-breaking (and for whom), source-breaking or compatible."""
    from acpgen.diff import FAIL_ON, RENDERERS, diff_targets

    if fmt not in DIFF_FORMATS:
        raise fail("option --format", "bad-option", f"--format must be one of {', '.join(DIFF_FORMATS)}, not {fmt!r}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise fail("option --fail-on", "bad-option", f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    old_target, old_label = diff_side(old, "OLD", config, no_unstable)
    new_target, new_label = diff_side(new, "NEW", config, no_unstable)
    result, diagnostics = diff_targets(old_target, new_target, old_label, new_label, ignore_unstable)
    report(diagnostics, verbose, quiet=not verbose)  # diff: warnings of the two builds only with -v
    if result is None:
        echo("acpgen diff: a schema could not be built; nothing compared", err=True)
        raise SystemExit(EXIT_ERROR)
    sys.stdout.write(RENDERERS[fmt](result))
    raise SystemExit(EXIT_STALE if fail_on is not None and result.fails(fail_on) else EXIT_OK)


def with_core_commands(app: typer.Typer) -> typer.Typer:
    app.callback()(root)
    app.command()(build)
    app.command()(check)
    app.command()(diff)
    return app


with_core_commands(core)


@functools.cache
def full_app() -> typer.Typer:
    """The app with every command: acpgen's own and the kit's."""
    from acpgen.kit.cli import register

    app = with_core_commands(new_app())
    register(app)
    return app


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    (core if sys.argv[1:2] and sys.argv[1] in CORE_COMMANDS else full_app())()


def entry() -> None:
    """The `acpgen` command as earlier installs name it (`acpgen.launch.entry` now)."""
    from acpgen.launch import entry as launch_entry

    launch_entry()


if __name__ == "__main__":
    main()
