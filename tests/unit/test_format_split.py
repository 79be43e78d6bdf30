"""A large module is formatted in pieces side by side (acpgen.render.format.split_module): the
output must not depend on where the cuts fall; a module that changes in one place keeps its other
pieces (which the format cache then has)."""

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


def formatted(files: dict[str, str], monkeypatch: pytest.MonkeyPatch, every: int | None) -> dict[str, str]:
    """`files` formatted by ruff (no cache), cut where a class line's checksum is a multiple of
    `every` (None: whole)."""
    monkeypatch.setenv("ACPGEN_NO_CACHE", "1")
    monkeypatch.setattr(format_stage, "PIECE_BYTES", 1 << 30 if every is None else 1)
    monkeypatch.setattr(format_stage, "CUT_EVERY", every or 1)
    diags = Diagnostics("templates")
    out = format_stage.format_sources(files, diags)
    assert out is not None and not diags.items, [d.render() for d in diags.items]
    return out


def test_split_keeps_every_line(rendered: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = rendered["models.py"]
    monkeypatch.setattr(format_stage, "PIECE_BYTES", 1024)
    for every, largest in ((1, 4096), (4, 16384), (16, 1 << 30)):
        monkeypatch.setattr(format_stage, "CUT_EVERY", every)
        monkeypatch.setattr(format_stage, "MAX_PIECE", largest)
        parts = format_stage.split_module(text)
        assert "\n".join(parts) == text
        assert all(p.startswith("class ") for p in parts[1:]) and all(p.strip() for p in parts)
        if every == 1 and text.count("\nclass ") > 10:
            assert len(parts) > 5


def test_output_does_not_depend_on_where_the_cuts_fall(rendered: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    whole = formatted(rendered, monkeypatch, None)
    for every in (1, 7):
        assert formatted(rendered, monkeypatch, every) == whole, every


def test_a_change_in_one_place_keeps_the_other_pieces(rendered: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_stage, "PIECE_BYTES", 1024)
    monkeypatch.setattr(format_stage, "CUT_EVERY", 4)
    text = rendered["models.py"]
    before = format_stage.split_module(text)
    if len(before) < 4:
        pytest.skip("too small to cut in four")
    # a new class in the middle, as a schema update adds a definition
    at = text.index("\nclass ", len(text) // 2)
    while not format_stage.after_a_body(text, at):
        at = text.index("\nclass ", at + 1)
    new = "class AddedByAnUpdate:\n    x: int = 1\n    y: str = 'a'\n\n\n"
    after = format_stage.split_module(text[: at + 1] + new + text[at + 1 :])
    kept = set(before) & set(after)
    assert len(kept) >= len(before) - 1, (len(kept), len(before))  # only the piece that grew


def test_a_cut_inside_a_string_falls_back_to_the_whole_module(monkeypatch: pytest.MonkeyPatch) -> None:
    # A column-0 `class` line after a blank line after an indented line, inside a string: the
    # first piece ends in an open string, which ruff refuses, so the module is formatted whole.
    body = "".join(f"class C{i}:\n    x = {i}\n\n\n" for i in range(40))
    text = body + 'S = """\n    indented\n\nclass NotAClass:\n"""\n' + body.replace("class C", "class D")
    files = {"m.py": text, "other.py": "y   =  1\n"}
    whole = formatted(files, monkeypatch, None)
    monkeypatch.setattr(format_stage, "CUT_EVERY", 1)  # cut at every place that looks like one
    monkeypatch.setattr(format_stage, "PIECE_BYTES", 1)
    assert format_stage.split_module(text)[40].startswith("class NotAClass")  # the bad cut is chosen
    split_at_string = formatted(files, monkeypatch, 1)
    assert split_at_string == whole
    assert 'S = """\n    indented\n\nclass NotAClass:\n"""\n' in whole["m.py"]
    assert whole["other.py"] == "y = 1\n"


def test_a_template_error_is_reported_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_stage, "PIECE_BYTES", 1)
    monkeypatch.setattr(format_stage, "CUT_EVERY", 1)
    text = "".join(f"class C{i}:\n    x = {i}\n\n\n" for i in range(10)) + "def broken(:\n"
    diags = Diagnostics("templates")
    assert format_stage.format_sources({"m.py": text}, diags) is None
    assert [d.code for d in diags.items] == ["formatter-failed"]
    assert "m.py:" in diags.items[0].message  # ruff's message names the module
