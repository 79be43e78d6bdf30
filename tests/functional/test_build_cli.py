"""End to end through the CLI and the packaging: determinism, wheel contents, errors, check."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

ACPGEN = [sys.executable, "-m", "acpgen"]


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ACPGEN, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_build_is_deterministic_across_hash_seeds(tmp_path: Path) -> None:
    outputs = []
    for seed in ("0", "12345"):
        out = tmp_path / "acp_v1"
        result = run(["build", str(ROOT / "schema/v1/schema.json"), "-o", "acp_v1", "--package", "acp_v1"],
                     cwd=tmp_path, env={"PYTHONHASHSEED": seed})
        assert result.returncode == 0, result.stderr
        outputs.append(tree_bytes(out))
    assert outputs[0] == outputs[1]
    assert outputs[0]["models.py"].count(b"\nclass ") > 250


def test_committed_output_is_fresh() -> None:
    result = run(["check"], cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "acp_v1: " in result.stdout and "up to date" in result.stdout


def test_check_reports_a_hand_edit_and_build_repairs_it(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    args = [str(ROOT / "schema/v0_4/schema.json"), "-o", str(out), "--package", "pkg"]
    assert run(["build", *args], cwd=tmp_path).returncode == 0
    assert run(["check", *args], cwd=tmp_path).returncode == 0
    models = out / "models.py"
    models.write_text(models.read_text().replace("class ToolKind", "class ToolKindEdited"))
    stale = run(["check", *args], cwd=tmp_path)
    assert stale.returncode == 1
    assert "models.py" in stale.stderr and "-class ToolKindEdited" in stale.stdout
    assert run(["build", *args], cwd=tmp_path).returncode == 0
    assert run(["check", *args], cwd=tmp_path).returncode == 0


def test_version_and_module_entry_point() -> None:
    result = subprocess.run([*ACPGEN, "--version"], capture_output=True, text=True, check=True)
    assert result.stdout.startswith("acpgen ")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "invalid JSON at line 1, column 2"),
        ("[1, 2]", "the root of a schema must be a JSON object, found an array"),
        ('{"$defs": {"A": {"$ref": "#/$defs/Missing"}}}', "#/$defs/A/$ref: error[unresolvable-ref]"),
        ('{"$defs": {"A": {"type": 12}}}', "#/$defs/A/type: error[not-a-json-schema]"),
    ],
)
def test_bad_schema_exits_2_with_file_and_pointer(tmp_path: Path, content: str, needle: str) -> None:
    schema = tmp_path / "broken.json"
    schema.write_text(content)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("previous output")
    result = run(["build", str(schema), "-o", str(out), "--package", "out", "--allow-foreign"], cwd=tmp_path)
    assert result.returncode == 2
    assert str(schema) in result.stderr and needle in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert (out / "keep.txt").read_text() == "previous output"


def test_a_derived_name_that_is_taken_gets_a_suffix_and_a_warning_naming_both_pointers(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {
        "Shape": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "circle"}}, "required": ["kind"],
             "allOf": [{"$ref": "#/$defs/CircleShape"}]},
            {"type": "object", "properties": {"kind": {"const": "square"}}, "required": ["kind"]},
        ]},
        "CircleShape": {"type": "object", "properties": {"r": {"type": "number"}}},
        "CircleShapeVariant": {"type": "object", "properties": {"r": {"type": "number"}}},
    }}))
    result = run(["build", str(schema), "-o", str(tmp_path / "o"), "--package", "o"], cwd=tmp_path)
    # Both candidate names (CircleShape, CircleShapeVariant) are $defs keys: the variant, whose name
    # the generator derives, gets the first free suffix; the schema's own names are untouched.
    assert result.returncode == 0, result.stderr
    assert ("schema.json#/$defs/Shape/oneOf/0: warning[name-suffixed]: the derived name 'CircleShape' is taken "
            "by /$defs/CircleShape; this type is named 'CircleShape2'") in result.stderr
    assert 'rename = { "/$defs/Shape/oneOf/0" = "NewName" }' in result.stderr
    assert "class CircleShape2" in (tmp_path / "o" / "models.py").read_text(encoding="utf-8")


def test_a_variant_name_never_flips_its_words(tmp_path: Path) -> None:
    """`<Label><Union>`, then `<Label><Union>Variant` when a `$defs` key holds it: never
    `<Union><Label>`, even where that name is free (the old rule took `ShapeCircle` here)."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {
        "Shape": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "circle"}}, "required": ["kind"],
             "allOf": [{"$ref": "#/$defs/CircleShape"}]},
            {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
             "required": ["kind"]},
        ]},
        "CircleShape": {"type": "object", "properties": {"r": {"type": "number"}}},
    }}))
    result = run(["build", str(schema), "-o", str(tmp_path / "o"), "--package", "o"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    models = (tmp_path / "o" / "models.py").read_text(encoding="utf-8")
    assert "class CircleShapeVariant(Tagged, CircleShape):" in models
    assert "class SquareShape(Model):" in models
    assert "ShapeCircle" not in models and "ShapeSquare" not in models
    assert "Shape: TypeAlias = CircleShapeVariant | SquareShape" in models


def test_a_failed_write_leaves_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from acpgen import write
    from acpgen.config import Target
    from acpgen.pipeline import build

    out = tmp_path / "pkg"
    target = Target(name="pkg", schema=ROOT / "schema/v0_4/schema.json", output=out, package="pkg", command="t")
    assert build(target).ok
    before = tree_bytes(out)

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write.os, "replace", broken_replace)
    result = build(target)
    assert not result.ok
    assert any("No space left on device" in d.message for d in result.diagnostics)
    assert tree_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg"]


def test_wheel_ships_every_template_and_generates(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    wheel = next(dist.glob("acpgen-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    for template in sorted((ROOT / "templates").iterdir()):
        assert f"acpgen/templates/{template.name}" in names
    # Generate with the unpacked wheel only: a copy of the schema, no source checkout on the path.
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "schema/v0_4/schema.json", work / "schema.json")
    code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); from acpgen.cli import main; "
            "from acpgen.render import builtin_templates; print(builtin_templates(), file=sys.stderr); main()")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "site"), "build", "schema.json",
                             "-o", "out", "--package", "out"], cwd=work, capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert result.returncode == 0, result.stderr
    assert str(tmp_path / "site") in result.stderr.splitlines()[0]
    assert (work / "out" / "models.py").read_text().startswith("# Generated by acpgen")


def test_keep_unknown_keeps_and_re_encodes_keys_the_schema_does_not_define(tmp_path: Path) -> None:
    result = run(["build", str(ROOT / "schema/v0_4/schema.json"), "-o", "acp_keep", "--package", "acp_keep",
                  "--keep-unknown"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import acp_keep;"
        "d = {'sessionId': 's', 'prompt': [{'type': 'text', 'text': 'x', 'future': 1}], 'vendor': {'a': 1}};"
        "v = acp_keep.decode('PromptRequest', d);"
        "print(json.dumps([v.unknown_fields, v.prompt[0].unknown_fields, acp_keep.encode(v) == d]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [{"vendor": {"a": 1}}, {"future": 1}, True]


def test_warnings_are_printed_by_default_and_quiet_hides_them(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {"Name": {"type": "string", "patern": "^[a-z]+$"}}}))
    quiet = run(["build", str(schema), "-o", str(tmp_path / "out" / "q"), "-q"], tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    plain = run(["build", str(schema), "-o", str(tmp_path / "out" / "p")], tmp_path)
    assert plain.returncode == 0
    assert plain.stderr.startswith(f"{schema}#/$defs/Name/patern: warning[unsupported-keyword]: keyword 'patern'")
    assert re.search(r"wrote \d+ files to ", plain.stdout) and plain.stdout.endswith(f"{tmp_path / 'out' / 'p'}\n")
    verbose = run(["build", str(schema), "-o", str(tmp_path / "out" / "v"), "-v", "-q"], tmp_path)
    assert "schema.json#/$defs/Name" in verbose.stderr and "patern" in verbose.stderr


def test_build_reports_the_number_of_files_it_wrote(tmp_path: Path) -> None:
    result = run(["build", str(ROOT / "schema/v0_4/schema.json"), "-o", "out/pkg"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = [p for p in (tmp_path / "out" / "pkg").rglob("*") if p.is_file()]
    assert f"wrote {len(written)} files to out/pkg" in result.stdout, (result.stdout, sorted(map(str, written)))


@pytest.mark.parametrize(("extra", "meta", "package"), [
    ([], None, "acp_generated"),                          # no version known: the fixed default
    (["--protocol-version", "3"], None, "acp_v3"),         # the option's version
    ([], {"version": 1}, "acp_v1"),                       # meta.json beside the schema
    (["--protocol-version", "2"], {"version": 1}, "acp_v2"),  # the option wins, as in the build
    ([], {"version": "1"}, "acp_generated"),              # not an integer: no version
])
def test_a_schema_named_schema_json_does_not_name_the_package_schema(
    tmp_path: Path, extra: list[str], meta: dict[str, object] | None, package: str,
) -> None:
    folder = tmp_path / "rel"
    folder.mkdir()
    shutil.copy(ROOT / "schema/v0_4/schema.json", folder / "schema.json")
    if meta is not None:
        (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    result = run(["build", "rel/schema.json", *extra], cwd=tmp_path)
    written = sum(1 for p in (tmp_path / "generated" / package).iterdir() if p.is_file())
    assert f"wrote {written} files to generated/{package}\n" in result.stdout, result.stdout + result.stderr
    assert (tmp_path / "generated" / package / "__init__.py").is_file()
