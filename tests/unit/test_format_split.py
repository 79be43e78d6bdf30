"""A large module is formatted in pieces side by side (acpgen.render.format.split_module): the
output must not depend on how many pieces, i.e. on the machine's CPU count."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpgen.config import schema_target
from acpgen.diagnostics import Diagnostics
from acpgen.pipeline import load_ir
from acpgen.render import format as format_stage
from acpgen.render import render_package, runtime_outputs

ROOT = Path(__file__).resolve().parents[2]


SCHEMAS = {
    "v1": ROOT / "schema" / "v1" / "schema.json",
    "v2": ROOT / "schema" / "v2" / "schema.json",
    # other shapes: recursive unions (MCP's JSON values), a non-ACP protocol, a large config schema
    "mcp": ROOT / "tests" / "corpus" / "real" / "mcp-2026-07-28" / "schema.json",
    "a2a": ROOT / "tests" / "corpus" / "real" / "a2a-v0.3.0" / "schema.json",
    "workflow": ROOT / "tests" / "corpus" / "real" / "schemastore-github-workflow" / "schema.json",
}


@pytest.fixture(scope="module", params=sorted(SCHEMAS))
def rendered(request: pytest.FixtureRequest) -> dict[str, str]:
    target = schema_target(SCHEMAS[request.param], package=f"pkg_{request.param}")
    package, diagnostics = load_ir(target)
    assert package is not None, diagnostics
    files = render_package(package, target.command, Diagnostics("templates"))
    assert files is not None
    return {name: text for name, text in files.items() if name not in runtime_outputs()}


def formatted(files: dict[str, str], monkeypatch: pytest.MonkeyPatch, cpus: int, piece: int) -> dict[str, str]:
    monkeypatch.setattr(format_stage.os, "cpu_count", lambda: cpus)
    monkeypatch.setattr(format_stage, "PIECE_BYTES", piece)
    diags = Diagnostics("templates")
    out = format_stage.format_sources(files, diags)
    assert out is not None and not diags.items, [d.render() for d in diags.items]
    return out


def test_split_keeps_every_line(rendered: dict[str, str]) -> None:
    text = rendered["models.py"]
    for pieces in range(1, 9):
        parts = format_stage.split_module(text, pieces)
        assert "\n".join(parts) == text
        # at most `pieces`: fewer where no class follows a target offset (tables end the module)
        assert len(parts) <= pieces and (pieces == 1 or len(parts) >= 2)
        assert all(p.startswith("class ") for p in parts[1:]) and all(p.strip() for p in parts)


def test_output_does_not_depend_on_the_cpu_count(rendered: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    whole = formatted(rendered, monkeypatch, cpus=1, piece=1)
    for cpus in (2, 3, 8):
        assert formatted(rendered, monkeypatch, cpus=cpus, piece=1024) == whole, cpus


def test_a_cut_inside_a_string_falls_back_to_the_whole_module(monkeypatch: pytest.MonkeyPatch) -> None:
    # A column-0 `class` line after a blank line after an indented line, inside a string: the
    # first piece ends in an open string, which ruff refuses, so the module is formatted whole.
    body = "".join(f"class C{i}:\n    x = {i}\n\n\n" for i in range(40))
    text = body + 'S = """\n    indented\n\nclass NotAClass:\n"""\n' + body.replace("class C", "class D")
    files = {"m.py": text, "other.py": "y   =  1\n"}
    whole = formatted(files, monkeypatch, cpus=1, piece=1)
    assert format_stage.split_module(text, 2)[1].startswith("class NotAClass")  # the bad cut is chosen
    split_at_string = formatted(files, monkeypatch, cpus=2, piece=1)
    assert split_at_string == whole
    assert 'S = """\n    indented\n\nclass NotAClass:\n"""\n' in whole["m.py"]
    assert whole["other.py"] == "y = 1\n"


def test_a_template_error_is_reported_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_stage.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(format_stage, "PIECE_BYTES", 1)
    text = "".join(f"class C{i}:\n    x = {i}\n\n\n" for i in range(10)) + "def broken(:\n"
    diags = Diagnostics("templates")
    assert format_stage.format_sources({"m.py": text}, diags) is None
    assert [d.code for d in diags.items] == ["formatter-failed"]
