"""Command lines and folder layouts an adversarial run found mishandled: nested output folders,
diagnostics about a meta file, option conflicts. Each asserts the exact first error line."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA = {"$schema": DRAFT, "title": "T", "$defs": {"A": {"type": "object", "properties": {"a": {"type": "string"}}}}}


def run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stderr


@pytest.fixture
def schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCHEMA), encoding="utf-8")
    return path


def test_a_build_inside_another_output_is_refused_and_the_outer_one_stays_buildable(schema: Path) -> None:
    assert run(["build", "s.json", "-o", "out/pkg", "-q"])[0] == 0
    before = sorted(p.name for p in Path("out/pkg").iterdir())
    code, stderr = run(["build", "s.json", "-o", "out/pkg/inner"])
    assert code == 2
    assert stderr.splitlines()[0] == (
        "out/pkg/inner: error[output-nested]: the output folder out/pkg/inner is inside out/pkg, "
        "the output of another acpgen build: each build replaces its whole folder")
    assert sorted(p.name for p in Path("out/pkg").iterdir()) == before
    assert run(["build", "s.json", "-o", "out/pkg", "-q"])[0] == 0
    assert run(["check", "s.json", "-o", "out/pkg"])[0] == 0


def test_a_build_around_another_output_is_refused_by_build_and_check(schema: Path) -> None:
    assert run(["build", "s.json", "-o", "out/a/inner", "-q"])[0] == 0
    for command in ("build", "check"):
        code, stderr = run([command, "s.json", "-o", "out"])
        assert code == 2
        assert stderr.splitlines()[0] == (
            "out: error[output-nested]: the output folder out holds out/a/inner, "
            "the output of another acpgen build: each build replaces its whole folder")
    assert not Path("out/.acpgen-manifest.json").exists()


def test_meta_file_diagnostics_name_the_meta_file(schema: Path) -> None:
    Path("meta.json").write_text(json.dumps({"agentMethods": {"nope": "no/such"}}), encoding="utf-8")
    code, stderr = run(["build", "s.json", "-o", "out", "--meta", "meta.json", "--no-unstable"])
    assert code == 2
    assert stderr.splitlines()[0] == (
        "meta.json#/agentMethods/nope: error[meta-unknown-method]: "
        "meta lists method 'no/such' that no x-method in the schema defines")


def obj(props: dict[str, object], required: tuple[str, ...] = ()) -> dict[str, object]:
    return {"type": "object", "properties": props, "required": list(required)}


STABLE = {"$schema": DRAFT, "$defs": {
    "A": obj({"a": {"type": "string"}, "b": {"type": ["integer", "null"]}}, ("a",)),
    "E": {"type": "string", "enum": ["x", "y"]},
}}


@pytest.mark.parametrize(("unstable_defs", "expected"), [
    pytest.param({"A": obj({"a": {"type": "integer"}, "b": {"type": ["integer", "null"]}}, ("a",))},
                 "u.json#/$defs/A/properties/a: error[unstable-narrows]: A.a has a type that rejects values the "
                 "stable one accepts: the merged package would reject input the stable schema accepts "
                 "(stable: s.json#/$defs/A/properties/a)", id="type-changed"),
    pytest.param({"A": obj({"a": {"type": "string"}}, ("a",))},
                 "u.json#/$defs/A: error[unstable-narrows]: A drops the property 'b'", id="property-removed"),
    pytest.param({"A": obj({"a": {"type": "string"}, "b": {"type": ["integer", "null"]}}, ("a", "b"))},
                 "u.json#/$defs/A/properties/b: error[unstable-narrows]: A.b is required where the stable one is "
                 "optional", id="required-added"),
    pytest.param({"A": obj({"a": {"type": "string"}, "b": {"type": "integer"}}, ("a",))},
                 "u.json#/$defs/A/properties/b: error[unstable-narrows]: A.b rejects null where the stable one "
                 "accepts it", id="null-rejected"),
    pytest.param({"E": {"type": "string", "enum": ["x"]}},
                 "u.json#/$defs/E: error[unstable-narrows]: E drops the value(s) 'y'", id="enum-value-removed"),
])
def test_an_unstable_companion_that_narrows_a_stable_type_is_an_error(
    schema: Path, unstable_defs: dict[str, object], expected: str,
) -> None:
    Path("s.json").write_text(json.dumps(STABLE), encoding="utf-8")
    Path("u.json").write_text(json.dumps({**STABLE, "$defs": {**STABLE["$defs"], **unstable_defs}}), encoding="utf-8")
    code, stderr = run(["build", "s.json", "--unstable", "u.json", "-o", "out"])
    assert code == 2
    assert stderr.splitlines()[0].startswith(expected), stderr


def union_of_a(plain_a: dict[str, object], plain_tag: str | None = None) -> dict[str, object]:
    """A as the unstable companion of ACP 0.11-1.x writes SetSessionConfigOptionRequest: the stable
    properties beside an `anyOf` of a tagged variant and a titled default variant (no tag)."""
    tagged = obj({"kind": {"type": "string", "const": "flag"}, "a": {"type": "boolean"}}, ("kind", "a"))
    plain: dict[str, object] = obj({"a": plain_a}, ("a",))
    plain["title"] = "plain"
    if plain_tag:
        plain = obj({"kind": {"type": "string", "const": plain_tag}, "a": plain_a}, ("kind", "a"))
    return {"type": "object", "properties": {"b": {"type": ["integer", "null"]}}, "anyOf": [tagged, plain]}


def test_a_union_whose_default_variant_takes_the_stable_shape_does_not_narrow(schema: Path) -> None:
    Path("s.json").write_text(json.dumps(STABLE), encoding="utf-8")
    Path("u.json").write_text(json.dumps({**STABLE, "$defs": {**STABLE["$defs"], "A": union_of_a({"type": "string"})}}),
                              encoding="utf-8")
    code, stderr = run(["build", "s.json", "--unstable", "u.json", "-o", "merged_a"])
    assert (code, stderr) == (0, "")
    sys.path.insert(0, str(Path.cwd()))
    try:
        pkg = importlib.import_module("merged_a")
        for stable_value in ({"a": "x"}, {"a": "x", "b": None}, {"a": "x", "b": 3}):
            assert pkg.encode(pkg.decode("A", stable_value)) == stable_value
        assert pkg.encode(pkg.decode("A", {"kind": "flag", "a": True})) == {"kind": "flag", "a": True}
    finally:
        sys.path.pop(0)
        for name in [m for m in sys.modules if m == "merged_a" or m.startswith("merged_a.")]:
            del sys.modules[name]


@pytest.mark.parametrize(("unstable_a", "expected"), [
    pytest.param(union_of_a({"type": "integer"}),
                 "u.json#/$defs/A/anyOf/1/properties/a: error[unstable-narrows]: A.a has a type that rejects values "
                 "the stable one accepts (in PlainA, the variant used when 'kind' is absent)",
                 id="default-variant-rejects-a-stable-value"),
    pytest.param(union_of_a({"type": "string"}, plain_tag="text"),
                 "u.json#/$defs/A: error[unstable-narrows]: A is a union whose variants do not take the stable shape",
                 id="no-default-variant"),
])
def test_a_union_whose_default_variant_rejects_stable_input_narrows(
    schema: Path, unstable_a: dict[str, object], expected: str,
) -> None:
    Path("s.json").write_text(json.dumps(STABLE), encoding="utf-8")
    Path("u.json").write_text(json.dumps({**STABLE, "$defs": {**STABLE["$defs"], "A": unstable_a}}), encoding="utf-8")
    code, stderr = run(["build", "s.json", "--unstable", "u.json", "-o", "out"])
    assert code == 2
    assert stderr.splitlines()[0].startswith(expected), stderr


def test_an_unstable_companion_that_only_adds_builds_silently(schema: Path) -> None:
    Path("s.json").write_text(json.dumps(STABLE), encoding="utf-8")
    unstable = {"A": obj({"a": {"type": ["string", "null"]}, "b": {"type": ["number", "null"]}, "c": {"type": "string"}}, ("a",)),
                "E": {"type": "string", "enum": ["x", "y", "z"]}, "New": obj({"n": {"type": "string"}}, ("n",))}
    Path("u.json").write_text(json.dumps({**STABLE, "$defs": {**STABLE["$defs"], **unstable}}), encoding="utf-8")
    code, stderr = run(["build", "s.json", "--unstable", "u.json", "-o", "out"])
    assert (code, stderr) == (0, "")
