"""Every schema, safely (issue 11): what the CLI cases of tests/hostile/ cannot express.

Text from a schema, a file name or an option never becomes code (a property-based test puts random
Unicode into every text slot); nothing the generator needs for itself is reserved; output folders
behind symlinks; `check` refuses what `build` refuses and reproduces its options; overlapping
targets; unions too long for a flat `A | B | ...`.
"""

from __future__ import annotations

import importlib
import inspect
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
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from acpgen.cli import app
from acpgen.config import Target
from acpgen.pipeline import build
from acpgen.render.codegen import NAME_SOURCES

DRAFT = "https://json-schema.org/draft/2020-12/schema"
S = {"type": "string"}


def build_and_import(folder: Path, document: dict[str, Any], file_name: str = "schema.json") -> tuple[ModuleType, Path]:
    package = "safety_" + uuid.uuid4().hex[:10]
    folder.mkdir(parents=True, exist_ok=True)
    schema = folder / file_name
    schema.write_text(json.dumps(document), encoding="utf-8")  # ASCII: lone surrogates survive as escapes
    target = Target(name=package, schema=schema, output=folder / package, package=package, include_unstable=False,
                    find_unstable=False, command="test")
    result = build(target)
    assert result.ok, [d.render() for d in result.diagnostics if d.level == "error"]
    sys.path.insert(0, str(folder))
    try:
        importlib.invalidate_caches()
        return importlib.import_module(package), folder / package
    finally:
        sys.path.remove(str(folder))


def ruff_check(package_dir: Path) -> subprocess.CompletedProcess[str]:
    """The rules tests/test_packages.py applies to generated/, except: RUF001-003 judge the text
    itself (a Cyrillic letter in a title is the schema's text, kept as it is); ruff's pep8-naming
    (N8xx) takes identifiers holding uncased letters for not lowercase (`def f(y_惏: int)` is N803),
    so a property named in CJK cannot satisfy it; and F401 / RUF022 are known template issues of
    packages without methods / with numbered names, outside this issue."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--target-version", "py310",
         "--select", "E,F,W,I,UP,B,C4,SIM,RUF,PIE,N,ANN,PYI,TID,T20", "--ignore",
         "E501,F401,RUF022,RUF001,RUF002,RUF003,N8",
         package_dir.name], cwd=package_dir.parent, capture_output=True, text=True, timeout=300)


# -- text never becomes code -------------------------------------------------------------------------

# Any code point, surrogates and control characters included (JSON can carry every one of them).
TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
# A file name: no "/" or NUL, short enough for any filesystem once encoded.
FILE_NAME = st.text(st.characters(min_codepoint=1, max_codepoint=0x10FFFF, blacklist_characters="/",
                                  blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(
    lambda n: n not in (".", "..") and len(n.encode()) < 200)


@settings(max_examples=int(os.environ.get("ACPGEN_TEXT_EXAMPLES", "12")), derandomize=True, deadline=None,
          database=None, suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
@given(title=TEXT, description=TEXT, field_doc=TEXT, prop=TEXT, values=st.lists(TEXT, min_size=1, max_size=4, unique=True),
       variant_title=TEXT, file_name=FILE_NAME)
def test_random_text_in_every_slot_builds_imports_passes_ruff_and_stays_text(
    tmp_path_factory: pytest.TempPathFactory, title: str, description: str, field_doc: str, prop: str,
    values: list[str], variant_title: str, file_name: str,
) -> None:
    folder = tmp_path_factory.mktemp("text")
    document = {"$schema": DRAFT, "title": title, "$defs": {
        "Doc": {"type": "object", "description": description,
                "properties": {prop: {"type": "string", "description": field_doc}, "mode": {"$ref": "#/$defs/Mode"}}},
        "Mode": {"enum": values, "description": description},
        "Either": {"oneOf": [{"type": "object", "title": variant_title, "properties": {"a": S}, "required": ["a"]},
                             {"type": "object", "properties": {"b": S}, "required": ["b"]}]},
    }}
    pkg, out = build_and_import(folder, document, file_name + ".json")
    try:
        # The text is data: docstrings hold it (a lone surrogate, which no str in a class docstring
        # can hold, reads as U+FFFD), literals hold it exactly.
        def readable(text: str) -> str:
            return inspect.cleandoc("".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text).strip())

        doc = pkg.models.Doc.__doc__
        assert inspect.cleandoc(doc or "") == readable(description), (doc, description)
        assert title == pkg.SCHEMA_TITLE
        assert pkg.SCHEMA_SOURCES[0][0] == file_name + ".json"
        wire = {prop: "x", "mode": values[0]}
        assert pkg.encode(pkg.decode("Doc", wire)) == wire
        assert [m.value for m in pkg.TYPES["Mode"]] == values
        assert pkg.encode(pkg.decode("Either", {"a": "1"})) == {"a": "1"}
        ruff = ruff_check(out)
        assert ruff.returncode == 0, ruff.stdout[-3000:]
    finally:
        for name in [m for m in sys.modules if m == pkg.__name__ or m.startswith(pkg.__name__ + ".")]:
            del sys.modules[name]


# -- nothing generator-internal is reserved ---------------------------------------------------------


def test_no_name_the_package_defines_can_be_shadowed_by_a_schema(tmp_path: Path) -> None:
    """Every public name of a generated package (its exports and what its modules import) used as a
    `$defs` key: the build succeeds, the package's own names still mean what they meant, the models
    are reachable through TYPES under the schema's names, and mypy --strict passes."""
    probe, _ = build_and_import(tmp_path / "probe", {"$schema": DRAFT, "$defs": {"Anything": S}})
    # what a models.py may import: the names NAME_SOURCES places, and what _codec defines
    may_import = [*NAME_SOURCES, *(n for n, v in vars(probe._codec).items() if not isinstance(v, ModuleType))]
    names = {n for n in [*probe.__all__, *vars(probe), *vars(probe.models), *vars(probe._registry), *may_import]
             if n.isidentifier() and not n.startswith("_") and n != "Anything"}
    originals = {n: getattr(probe, n) for n in probe.__all__ if n != "Anything"}
    defs = {n: {"type": "object", "properties": {"a": S}} for n in sorted(names)}
    pkg, out = build_and_import(tmp_path / "shadow", {"$schema": DRAFT, "$defs": defs})
    for name, original in originals.items():
        mine = getattr(pkg, name)  # the package's own object, not the model of that name
        assert type(mine).__name__ == type(original).__name__, name
        assert getattr(mine, "__name__", None) == getattr(original, "__name__", None), name
    for name in names:
        assert pkg.encode(pkg.decode(name, {"a": "v"})) == {"a": "v"}, name
    assert pkg.TYPES["Literal"].__name__ == "Literal_" and pkg.TYPES["SCHEMA_TITLE"].__name__ == "SCHEMA_TITLE_"
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                           out.name], cwd=out.parent, capture_output=True, text=True, timeout=600)
    assert mypy.returncode == 0, mypy.stdout[-3000:]


def test_a_union_too_long_for_a_flat_chain_compiles(tmp_path: Path) -> None:
    """CPython compiles `A | B | ...` into a tree as deep as the chain: 2,000 variants used to build
    and then fail to import with RecursionError."""
    variants = [{"type": "object", "properties": {"k": {"const": f"v{i}"}}, "required": ["k"]} for i in range(2000)]
    pkg, _ = build_and_import(tmp_path, {"$schema": DRAFT, "$defs": {"U": {"oneOf": variants}}})
    value = pkg.decode("U", {"k": "v1999"})
    assert type(value).__name__ == "V1999U" and pkg.encode(value) == {"k": "v1999"}


def test_a_schema_file_name_with_quotes_and_newlines_stays_a_name(tmp_path: Path) -> None:
    pkg, out = build_and_import(tmp_path, {"$schema": DRAFT, "$defs": {"A": S}}, 'x"""y\nimport os\\.json')
    assert pkg.SCHEMA_SOURCES[0][0] == 'x"""y\nimport os\\.json'
    header = (out / "models.py").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("# Generated by acpgen") and "import os" in header


# -- output folders, build and check -------------------------------------------------------------------


def cli(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def write_schema(folder: Path) -> Path:
    schema = folder / "schema.json"
    schema.write_text(json.dumps({"$schema": DRAFT, "$defs": {"A": {"type": "object", "properties": {"a": S}}}}),
                      encoding="utf-8")
    return schema


def test_a_symlinked_output_folder_is_updated_through_the_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_schema(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real", target_is_directory=True)
    for _ in range(2):  # the second build replaces a tree that is there already
        result = cli(["build", "schema.json", "-o", "link", "--package", "pkg", "--no-unstable"], tmp_path, monkeypatch)
        assert result.exit_code == 0, result.output
        assert (tmp_path / "link").is_symlink() and (tmp_path / "real" / "models.py").is_file()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real", "schema.json"]
    result = cli(["check", "schema.json", "-o", "link", "--package", "pkg", "--no-unstable"], tmp_path, monkeypatch)
    assert result.exit_code == 0 and "up to date" in result.stdout


def test_check_refuses_foreign_files_as_build_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_schema(tmp_path)
    args = ["schema.json", "-o", "out", "--package", "pkg", "--no-unstable"]
    assert cli(["build", *args], tmp_path, monkeypatch).exit_code == 0
    (tmp_path / "out" / "notes.txt").write_text("mine", encoding="utf-8")
    checked = cli(["check", *args], tmp_path, monkeypatch)
    built = cli(["build", *args], tmp_path, monkeypatch)
    assert checked.exit_code == built.exit_code == 2
    assert "error[foreign-files]" in checked.stderr and "error[foreign-files]" in built.stderr
    assert cli(["build", *args, "--allow-foreign"], tmp_path, monkeypatch).exit_code == 0
    assert cli(["check", *args, "--allow-foreign"], tmp_path, monkeypatch).exit_code == 0
    assert (tmp_path / "out" / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_check_takes_builds_options_and_the_header_reproduces_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_schema(tmp_path)
    args = ["schema.json", "-o", "out", "--package", "pkg", "--no-unstable", "--keep-unknown"]
    assert cli(["build", *args], tmp_path, monkeypatch).exit_code == 0
    assert cli(["check", *args], tmp_path, monkeypatch).exit_code == 0
    assert cli(["check", *args[:-1]], tmp_path, monkeypatch).exit_code == 1  # without the option: stale
    header = (tmp_path / "out" / "models.py").read_text(encoding="utf-8").splitlines()[1]
    assert header == "# Regenerate with: acpgen build schema.json --output out --package pkg --no-unstable --keep-unknown"
    rebuilt = subprocess.run([sys.executable, "-m", "acpgen", *header.split(": ", 1)[1].split()[1:]], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert cli(["check", *args], tmp_path, monkeypatch).exit_code == 0


@pytest.mark.parametrize(("first", "second", "how"), [("gen/a", "gen/a", "the same folder"),
                                                      ("gen", "gen/b", "folders inside one another")])
def test_targets_with_overlapping_outputs_are_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str, second: str, how: str
) -> None:
    write_schema(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.acpgen.targets.one]\nschema = "schema.json"\noutput = "{first}"\n'
        f'[tool.acpgen.targets.two]\nschema = "schema.json"\noutput = "{second}"\n', encoding="utf-8")
    for command in ("build", "check"):
        result = cli([command], tmp_path, monkeypatch)
        assert result.exit_code == 2
        assert (f"pyproject.toml#/tool/acpgen/targets/two/output: error[config-overlapping-output]: targets `one` and "
                f"`two` write {how}") in result.stderr
    assert not (tmp_path / "gen").exists()


def test_a_rename_to_a_keyword_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_schema(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acpgen.targets.one]\nschema = "schema.json"\noutput = "gen"\n'
        '[tool.acpgen.targets.one.rename]\n"/$defs/A" = "class"\n', encoding="utf-8")
    result = cli(["build"], tmp_path, monkeypatch)
    assert result.exit_code == 2 and "error[config-bad-value]" in result.stderr and "'class'" in result.stderr
    shutil.rmtree(tmp_path / "gen", ignore_errors=True)


def test_a_config_default_of_the_wrong_type_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_schema(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acpgen.targets.one]\nschema = "schema.json"\noutput = "gen"\n'
        '[tool.acpgen.targets.one.defaults]\n"/$defs/A/properties/a" = 3\n', encoding="utf-8")
    result = cli(["build"], tmp_path, monkeypatch)
    assert result.exit_code == 2
    assert ("schema.json#/$defs/A/properties/a: error[bad-default]: the `defaults` entry default 3 is not a valid "
            "value of this property: 3 is not of type 'string'") in result.stderr
    assert not (tmp_path / "gen").exists()
