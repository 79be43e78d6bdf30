"""Hostile schemas: a corpus of broken and awkward schemas (tests/hostile/<case>.json), each with
the exact output expected from `acpgen build <case>.json -v` (tests/hostile/<case>.out: the exit
code, then stderr line by line), parsed by typer and by the script's own parser alike, and awkward
schemas that must generate working code.

Regenerate the .out files after an intended message change with ACPGEN_UPDATE_HOSTILE=1 and
review the diff: every line is part of what a user sees.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from acpgen import commands, launch
from acpgen.cli import app
from acpgen.config import Target
from acpgen.pipeline import build
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "hostile"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


DEFAULT_ARGS = ["build", "{schema}", "-o", "out", "--package", "hostile", "--no-unstable", "-v"]


def case_args(case: Path) -> list[str]:
    """The command line of a case: `<case>.args` (a JSON list, `{schema}` for the schema's file
    name) when present, else DEFAULT_ARGS."""
    args_file = case.with_suffix(".args")
    args = json.loads(args_file.read_text(encoding="utf-8")) if args_file.exists() else DEFAULT_ARGS
    return [a.replace("{schema}", case.name) for a in args]


def run_cli(case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parser: str = "typer") -> tuple[int, str]:
    """Exit code and standard error of the case's command line, parsed by typer (the app) or by
    the `acpgen` script's own parser (`commands.parse_core`, which runs the command without typer)."""
    shutil.copy(case, tmp_path / case.name)
    (tmp_path / "a_file.txt").write_text("not a folder\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = case_args(case)
    if parser == "typer":
        result = CliRunner().invoke(app, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        return result.exit_code, result.stderr
    monkeypatch.setattr(commands, "utf8_output", lambda: True)
    if commands.parse_core(args) is None:
        pytest.skip("the script leaves this command line to typer")
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "argv", ["acpgen", *args])
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with pytest.raises(SystemExit) as exit_info:
        launch.main()
    code = exit_info.value.code
    return code if isinstance(code, int) else 1, err.getvalue()


@pytest.mark.parametrize("parser", ["typer", "script"])
@pytest.mark.parametrize("case", sorted(CORPUS.glob("*.json")), ids=lambda p: p.stem)
def test_hostile_schema_gives_the_exact_diagnostic(case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   parser: str) -> None:
    code, stderr = run_cli(case, tmp_path, monkeypatch, parser)
    got = f"exit: {code}\n{stderr}"
    expected_file = case.with_suffix(".out")
    if os.environ.get("ACPGEN_UPDATE_HOSTILE"):
        expected_file.write_text(got, encoding="utf-8")
    assert got == expected_file.read_text(encoding="utf-8")
    assert "Traceback" not in stderr
    if code == 2:
        # Every error names the file (the schema, or the output folder for a folder problem) and
        # a JSON pointer (or the file alone for whole-file errors).
        errors = [line for line in stderr.splitlines() if "error[" in line]
        assert errors
        if not case.with_suffix(".args").exists():
            assert all(line.startswith(case.name) for line in errors)
        assert not (tmp_path / "out").exists()
    else:
        # Exit 0: the package imports (and tests below type-check them all at once).
        assert code == 0
        assert_imports(tmp_path / "out", case.stem)


def assert_imports(out: Path, stem: str) -> None:
    package = f"hostile_import_{uuid.uuid4().hex[:8]}"
    shutil.copytree(out, out.parent / package)
    sys.path.insert(0, str(out.parent))
    try:
        importlib.invalidate_caches()
        module = importlib.import_module(package)
        assert set(module.TYPES) == set(module.DECODERS), stem
    finally:
        sys.path.remove(str(out.parent))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


def test_every_hostile_case_that_builds_passes_mypy_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never a type error after exit 0: every case that builds, type-checked in one mypy run."""
    built = []
    for case in sorted(CORPUS.glob("*.json")):
        if case.with_suffix(".args").exists() or not case.with_suffix(".out").read_text().startswith("exit: 0"):
            continue
        package = "h_" + case.stem
        target = Target(name=package, schema=case, output=tmp_path / package, package=package,
                        include_unstable=False, find_unstable=False, command="test")
        assert build(target).ok, case.name
        built.append(package)
    assert len(built) >= 10
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                           *built], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert mypy.returncode == 0, mypy.stdout[-3000:]


def test_every_corpus_case_has_its_expected_output() -> None:
    schemas = {p.stem for p in CORPUS.glob("*.json")}
    outputs = {p.stem for p in CORPUS.glob("*.out")}
    assert schemas == outputs


def test_the_real_cli_prints_no_traceback_for_a_cycle(tmp_path: Path) -> None:
    shutil.copy(CORPUS / "required_cycle.json", tmp_path / "schema.json")
    result = subprocess.run([sys.executable, "-m", "acpgen", "build", "schema.json", "-o", "out", "--no-unstable"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "schema.json#/$defs/Child/properties/parent: error[required-cycle]" in result.stderr
    assert "Traceback" not in result.stderr


# -- awkward schemas that must generate working code ----------------------------------------------


def generate(tmp_path: Path, defs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, Path]:
    pkg = "hostile_" + uuid.uuid4().hex[:10]
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$schema": DRAFT, "title": "awkward", "$defs": defs}, ensure_ascii=False),
                      encoding="utf-8")
    target = Target(name=pkg, schema=schema, output=tmp_path / pkg, package=pkg, include_unstable=False,
                    find_unstable=False, command="test")
    result = build(target)
    assert result.ok, [d.render() for d in result.diagnostics]
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return importlib.import_module(pkg), tmp_path / pkg


S = {"type": "string"}
RECURSIVE = {
    "Tree": {"type": "object", "required": ["value", "children"], "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
        "parent": {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]},
        "byName": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Tree"}},
        "expr": {"$ref": "#/$defs/Expr"},
    }},
    "Expr": {"oneOf": [
        {"type": "object", "properties": {"op": {"const": "lit"}, "n": {"type": "integer"}}, "required": ["op", "n"]},
        {"type": "object", "properties": {"op": {"const": "neg"}, "arg": {"$ref": "#/$defs/Expr"}}, "required": ["op", "arg"]},
    ]},
}
NAMES = {
    "Awkward": {"type": "object", "required": ["class"], "properties": {
        **dict.fromkeys(["class", "from", "list", "type", "id", "self", "data", "cls", "1st", "a b", "", "match", "None", "True", "__init__", "__slots__", "to_dict", "from_dict", "unknown_fields", "out", "UNSET", "e", "object", "print", "naïve", "日本", "str", "dict", "int", "tag"], S),
    }},
    "None": S,
    "KeyError": {"type": "object", "properties": {"key": S}, "required": ["key"]},
    "class": {"type": "object", "properties": {"Größe": {"type": "integer"}}},
    "日本語": S,
}


def test_recursive_types_generate_type_check_and_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg, _ = generate(tmp_path, {**RECURSIVE, **NAMES}, monkeypatch)
    leaf = {"value": 2, "children": []}
    wire = {"value": 1, "children": [leaf, {"value": 3, "children": [leaf], "parent": None}],
            "parent": leaf, "byName": {"x": leaf}, "expr": {"op": "neg", "arg": {"op": "neg", "arg": {"op": "lit", "n": 4}}}}
    tree = pkg.decode("Tree", wire)
    assert tree.children[1].children[0].value == 2 and tree.parent.value == 1 + 1
    assert pkg.encode(tree) == wire
    with pytest.raises(pkg.ValidationError) as info:
        pkg.decode("Tree", {**wire, "children": [leaf, {"value": "x", "children": []}]})
    assert info.value.path == "children[1].value"
    with pytest.raises(pkg.ValidationError) as info:
        pkg.decode("Tree", {**wire, "expr": {"op": "neg", "arg": {"op": "neg", "arg": {"op": "lit"}}}})
    assert info.value.path == "expr.arg.arg.n"


def test_keyword_builtin_unicode_and_odd_names_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg, out = generate(tmp_path, {**RECURSIVE, **NAMES}, monkeypatch)
    wire = {k: f"v-{k}" for k in NAMES["Awkward"]["properties"]}
    value = pkg.decode("Awkward", wire)
    assert (value.class_, value.from_, value.field, value.f_1st, value.a_b) == ("v-class", "v-from", "v-", "v-1st", "v-a b")
    # Builtins are attributes as they are (the class bodies alias them); `tag` is escaped.
    assert (value.list, value.str, value.dict, value.object, value.type, value.id, value.tag_) == (
        "v-list", "v-str", "v-dict", "v-object", "v-type", "v-id", "v-tag")
    assert pkg.encode(value) == wire
    assert pkg.TYPES["None"] is str and pkg.TYPES["日本語"] is str
    assert pkg.TYPES["KeyError"].__name__ == "KeyError_"
    # A class named after a builtin must not capture the builtin the codec relies on.
    with pytest.raises(pkg.ValidationError) as info:
        pkg.decode("KeyError", {})
    assert info.value.path == "key"
    assert pkg.encode(pkg.decode("class", {"Größe": 3})) == {"Größe": 3}
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                           out.name], cwd=out.parent, capture_output=True, text=True, timeout=300)
    assert mypy.returncode == 0, mypy.stdout[-3000:]


def test_empty_defs_builds_an_importable_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg, out = generate(tmp_path, {}, monkeypatch)
    assert pkg.TYPES == {}
    with pytest.raises(KeyError):
        pkg.decode("Anything", {})
    # nothing imported that is not used (`from . import models` in a registry naming no model)
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F,I,E,W,RUF",
                           "--ignore", "E501", "--target-version", "py310", "."], cwd=out,
                          capture_output=True, text=True, timeout=120)
    assert lint.returncode == 0, lint.stdout[-3000:]


def test_a_schema_with_5000_definitions_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    defs: dict[str, Any] = {}
    for i in range(5000):
        kind = i % 4
        if kind == 0:
            defs[f"Item{i}"] = {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string"}, "next": {"$ref": f"#/$defs/Item{(i + 4) % 5000}"},
                "tags": {"type": "array", "items": {"$ref": f"#/$defs/Tag{i + 3}"}}}}
        elif kind == 1:
            defs[f"Union{i}"] = {"oneOf": [
                {"type": "object", "properties": {"type": {"const": "a"}}, "required": ["type"], "allOf": [{"$ref": f"#/$defs/Item{i - 1}"}]},
                {"type": "object", "properties": {"type": {"const": "b"}, "n": {"type": "integer"}}, "required": ["type"]}]}
        elif kind == 2:
            defs[f"Kind{i}"] = {"oneOf": [{"const": "x"}, {"const": "y"}]}
        else:
            defs[f"Tag{i}"] = {"type": "string"}
    pkg, _ = generate(tmp_path, defs, monkeypatch)
    assert len(pkg.TYPES) == 5000
    value = pkg.decode("Union4997", {"type": "a", "id": "i", "tags": ["t"], "next": {"id": "j"}})
    assert pkg.encode(value) == {"type": "a", "id": "i", "tags": ["t"], "next": {"id": "j"}}


def test_a_false_property_is_a_key_that_must_be_absent_and_true_accepts_any_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    defs = {"A": {"type": "object", "properties": {"x": False, "t": True, "l": {"type": "array", "items": True}}}}
    module, _ = generate(tmp_path, defs, monkeypatch)
    data = {"t": {"any": [1, None, "json"]}, "l": [1, "two", {"three": 3}]}
    assert module.A.from_dict(data).to_dict() == data
    assert not hasattr(module.A.from_dict(data), "x")
    with pytest.raises(module.ValidationError) as caught:
        module.A.from_dict({"x": None})
    assert caught.value.path == "x" and "must be absent" in caught.value.message


def test_literals_that_sanitise_alike_get_helpers_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    consts: list[Any] = ["a b", "a_b", "True", True, "1", 1, -1, "", "x/y", "x.y"]
    defs = {"A": {"type": "object", "properties": {
        f"p{i}": {"type": ["array", "null"], "items": {"const": c}} for i, c in enumerate(consts)}}}
    module, _ = generate(tmp_path, defs, monkeypatch)
    data = {f"p{i}": [c] for i, c in enumerate(consts)}
    assert module.A.from_dict(data).to_dict() == data
    for i in range(len(consts)):  # each list takes its own constant only, not its neighbour's
        with pytest.raises(module.ValidationError):
            module.A.from_dict({f"p{i}": [consts[i - 1]]})


def test_a_pointer_with_control_characters_prints_on_one_line_and_its_hint_is_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tomllib

    case = CORPUS / "field_collision_control_characters.json"
    code, stderr = run_cli(case, tmp_path, monkeypatch)
    assert code == 2
    error, hint = stderr.splitlines()[:2]
    assert error.startswith(f"{case.name}#/$defs/A%0AB/properties/a_b: error[field-collision]: ")
    assert "(/$defs/A%0AB/properties/a%09b)" in error and "\t" not in error
    line = hint.split("`")[1]
    assert tomllib.loads(line) == {"rename": {"/$defs/A\nB/properties/a_b": "new_name"}}
