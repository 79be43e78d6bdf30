"""`acpgen build|check|diff ...` runs `core`, the same commands without the kit's (whose parsers
typer would build on every run); anything else runs `app` (`full_app()`, made when first asked
for, so a build does not import the kit). Both must answer those commands alike."""

from __future__ import annotations

import sys

import pytest
import typer
from typer.testing import CliRunner

from acpgen import cli


def names(app: typer.Typer) -> set[str]:
    return {c.name or c.callback.__name__ for c in app.registered_commands if c.callback} | {
        g.name for g in app.registered_groups if g.name}


def test_core_has_the_core_commands_and_app_has_the_kit_too() -> None:
    assert names(cli.core) == set(cli.CORE_COMMANDS)
    assert names(cli.app) == set(cli.CORE_COMMANDS) | {"inspect", "replay", "conform"}


@pytest.mark.parametrize("args", [[c, "--help"] for c in cli.CORE_COMMANDS] + [["build", "--bogus"], ["--version"]])
def test_core_answers_as_app_does(args: list[str]) -> None:
    runner = CliRunner()
    ours, full = runner.invoke(cli.core, args), runner.invoke(cli.app, args)
    assert (ours.exit_code, ours.output) == (full.exit_code, full.output)


@pytest.mark.parametrize(("argv", "expected"), [
    (["build", "x.json"], "core"), (["check"], "core"), (["diff", "a", "b"], "core"),
    (["inspect", "--", "agent"], "app"), (["--help"], "app"), ([], "app"), (["--version", "build"], "app"),
])
def test_main_picks_the_app(monkeypatch: pytest.MonkeyPatch, argv: list[str], expected: str) -> None:
    ran: list[str] = []
    monkeypatch.setattr(sys, "argv", ["acpgen", *argv])
    monkeypatch.setattr(cli, "core", lambda: ran.append("core"))
    monkeypatch.setattr(cli, "full_app", lambda: lambda: ran.append("app"))
    cli.main()
    assert ran == [expected]


def test_a_build_does_not_import_the_kit() -> None:
    import subprocess

    code = ("import sys; from acpgen import cli; sys.argv = ['acpgen', 'build', '--help']\n"
            "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('acpgen.kit')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
