"""`acpgen build|check` in their plain forms are parsed without typer (acpgen.commands.parse_core,
run by acpgen.launch): for every argument list it accepts, typer must call the command with the same
arguments; what it is unsure of goes to typer."""

from __future__ import annotations

import inspect
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from acpgen import cli, commands

ROOT = Path(__file__).resolve().parents[2]

# Forms the fast parser must take (a build pipeline's usual commands).
PLAIN = [
    ["build"], ["check"], ["build", "schema.json"],
    ["build", "schema/v1/schema.json", "-o", "generated/acp_v1", "--package", "acp_v1", "-q"],
    ["check", "-q", "--config", "sub/pyproject.toml", "-t", "acp_v1", "--target", "acp_v2"],
    ["build", "--output=out", "--package=pkg", "--unstable=u.json", "--meta=meta.json", "s.json"],
    ["build", "s.json", "--no-unstable", "--allow-foreign", "--keep-unknown", "--verbose", "-v"],
    ["build", "--templates", "tpl", "--protocol-version", "2", "s.json"],
    ["check", "--protocol-version=0", "--quiet", "s.json"],
    ["build", "-o", "a", "-o", "b", "s.json"],  # the last one counts, for typer too
    ["build", "dir with space/s.json", "-o", "ü/out"],
]
# Forms it leaves to typer.
UNSURE = [
    [], ["--help"], ["build", "--help"], ["build", "-h"], ["diff", "a", "b"], ["inspect"],
    ["build", "a.json", "b.json"], ["build", "--bogus"], ["build", "-qv"], ["build", "--"],
    ["build", "-"], ["build", "-o"], ["build", "-o", "-x"], ["build", "--output="],
    ["build", "--quiet=1"], ["build", "--protocol-version", "-1"], ["build", "--protocol-version", "x"],
    ["build", "--protocol-version", "\u0663"], ["build", "-oout"], ["build", "--out", "x"],
    ["--version", "build"], ["build", "--version"],
]
TOKENS = [
    "s.json", "t.json", "-o", "--output", "out", "--output=o2", "--package", "pkg", "--package=p2",
    "--unstable", "u.json", "--no-unstable", "--meta", "m.json", "--templates", "tpl", "--config",
    "c.toml", "-t", "--target", "a", "--target=b", "--allow-foreign", "--keep-unknown", "-q", "--quiet",
    "-v", "--verbose", "--protocol-version", "1", "--protocol-version=3", "07", "-", "--", "-qv",
    "--help", "--bogus", "", "--output=", "=x", "-o=x", "+1",
]


def typer_call(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Any]] | None:
    """The command and arguments typer calls for `argv`, or None when it refuses it."""
    seen: list[tuple[str, dict[str, Any]]] = []
    for name in commands.COMMANDS:
        def record(name: str = name, **kwargs: Any) -> None:
            seen.append((name, kwargs))
            raise SystemExit(0)
        monkeypatch.setattr(commands, name, record)
    result = CliRunner().invoke(cli.core, argv)
    if not seen:
        assert result.exit_code != 0 or argv[:1] not in (["build"], ["check"]), result.output
        return None
    return seen[0]


def normal(call: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    name, kwargs = call
    bound = inspect.signature(commands.COMMANDS[name]).bind(**kwargs)
    bound.apply_defaults()
    return name, dict(bound.arguments)


@pytest.fixture(autouse=True)
def utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commands, "utf8_output", lambda: True)


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_plain_forms_are_parsed_as_typer_parses_them(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = commands.parse_core(argv)
    assert fast is not None
    typed = typer_call(argv, monkeypatch)
    assert typed is not None
    assert normal(fast) == normal(typed)


@pytest.mark.parametrize("argv", UNSURE, ids=" ".join)
def test_other_forms_go_to_typer(argv: list[str]) -> None:
    assert commands.parse_core(argv) is None


def test_random_argument_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(26)
    taken = 0
    for _ in range(400):
        argv = [rng.choice(["build", "check"]), *rng.choices(TOKENS, k=rng.randrange(0, 7))]
        fast = commands.parse_core(argv)
        if fast is None:
            continue
        taken += 1
        typed = typer_call(argv, monkeypatch)
        assert typed is not None, argv
        assert normal(fast) == normal(typed), argv
    assert taken >= 60  # enough of the lists are plain for the comparison to mean something


def test_the_defaults_are_typers(monkeypatch: pytest.MonkeyPatch) -> None:
    # cli.build passes every parameter; commands.build's own defaults serve the fast path.
    for name in commands.COMMANDS:
        typed = typer_call([name], monkeypatch)
        assert typed is not None and len(typed[1]) == len(inspect.signature(commands.COMMANDS[name]).parameters)
        assert normal(typed) == normal((name, {}))


def test_output_that_is_not_utf8_goes_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    import io

    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert commands.parse_core(["build"]) is None
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="UTF-8"))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(io.BytesIO(), encoding="utf8"))
    assert commands.parse_core(["build"]) == ("build", {})


def test_echo_leaves_terminal_styles_out_of_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    commands.echo("a \x1b[31mred\x1b[0m word \x1b]8;;x\x07")
    assert out.getvalue() == "a red word \x1b]8;;x\x07\n"  # styles only, as typer's echo


def test_a_build_runs_without_typer(tmp_path: Path) -> None:
    code = ("import sys\nfrom acpgen import launch\n"
            f"sys.argv = ['acpgen', 'build', {str(ROOT / 'schema/v0_4/schema.json')!r}, '-o', 'out', '-q']\n"
            "try:\n    launch.main()\nexcept SystemExit as e:\n    print(e.code)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          check=True, encoding="utf-8", env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert done.stdout.splitlines() == ["0", "[]"], done.stderr
    assert (tmp_path / "out" / "models.py").read_text(encoding="utf-8").startswith("# Generated by acpgen")
