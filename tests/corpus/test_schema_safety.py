"""Every schema, safely (issue 11): what the CLI cases of tests/hostile/ cannot express.

Text from a schema, a file name or an option never becomes code (a property-based test puts random
Unicode into every text slot); nothing the generator needs for itself is reserved; output folders
behind symlinks; `check` refuses what `build` refuses and reproduces its options; overlapping
targets; unions too long for a flat `A | B | ...`.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import json
import keyword
import os
import random
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
from acpgen.ir.methods import CONNECTION_MEMBERS
from acpgen.ir.naming import BUILTIN_CLASS_NAMES, PACKAGE_EXPORTS, class_name
from acpgen.pipeline import build
from acpgen.render.codegen import NAME_SOURCES, dunder_all_order
from tests.conftest import GENERATED, ROOT

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
    """The rules tests/functional/test_packages.py applies to generated/, except: RUF001-003 judge the text
    itself (a Cyrillic letter in a title is the schema's text, kept as it is); ruff's pep8-naming
    (N8xx) takes identifiers holding uncased letters for not lowercase (`def f(y_惏: int)` is N803),
    so a property named in CJK cannot satisfy it, and names the schema gives (`SCHEMA_TITLE` as a
    class) are not CapWords (N801); E501 as for generated/ (a long literal or name is the schema's)."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--target-version", "py310",
         "--select", "E,F,W,I,UP,B,C4,SIM,RUF,PIE,N,ANN,PYI,TID,T20", "--ignore",
         "E501,RUF001,RUF002,RUF003,N8",
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


def names_the_package_uses() -> set[str]:
    """Every name a model class could take from the generated package: what the committed acp_v1's
    models.py and __init__.py use or import (typing names, codec helpers, builtins, enum members,
    whatever a future template adds), what its _codec defines, and the package's exports. Only
    capitalised names: a class name never starts lowercase (naming.is_class_name)."""
    names = set(PACKAGE_EXPORTS) | set(NAME_SOURCES) | set(BUILTIN_CLASS_NAMES)
    models = ast.parse((GENERATED / "acp_v1" / "models.py").read_text(encoding="utf-8"))
    own = {n.name for n in models.body if isinstance(n, ast.ClassDef)} | {
        t.id for n in models.body if isinstance(n, ast.AnnAssign | ast.Assign)
        for t in ([n.target] if isinstance(n, ast.AnnAssign) else n.targets) if isinstance(t, ast.Name)}
    for module in ("models.py", "__init__.py", "_codec.py"):
        tree = ast.parse((GENERATED / "acp_v1" / module).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name)
            elif isinstance(node, ast.ClassDef | ast.FunctionDef) and module == "_codec.py":
                names.add(node.name)
    return {n for n in names - own if n[:1].isupper() and not keyword.iskeyword(n)}


def every_name_schema(names: list[str], defs: dict[str, Any]) -> dict[str, Any]:
    """The definitions `defs` plus one per name, each kind in turn: an object (a list default, a
    closed-enum field), a closed enum, a tagged union, an object of literal / JSON / map fields."""
    out = dict(defs)
    for index, name in enumerate(names):
        kind = index % 4
        if kind == 0:
            out[name] = {"type": "object", "required": ["a"], "properties": {
                "a": S, "b": {"type": "array", "items": {"type": "integer"}, "default": []},
                "c": {"$ref": "#/$defs/StopReason"}}}
        elif kind == 1:
            out[name] = {"oneOf": [{"const": "x"}, {"const": "y"}]}
        elif kind == 2:
            out[name] = {"anyOf": [
                {"type": "object", "properties": {"kind": {"const": "p"}, "v": S}, "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "q"}}, "required": ["kind"]}]}
        else:
            out[name] = {"type": "object", "required": ["lit"], "properties": {
                "lit": {"const": "k"}, "any": {}, "o": {"type": "object"},
                "m": {"type": "object", "additionalProperties": {"$ref": f"#/$defs/{names[index - 1]}"}}}}
    return out


EVERY_NAME_WIRE = ({"a": "v", "b": [1], "c": "end_turn"}, "y", {"kind": "p", "v": "w"},
                   {"lit": "k", "any": [1, None], "o": {"z": 1}, "m": {"k": {"kind": "q"}}})


def test_a_schema_may_use_every_name_the_package_uses(tmp_path: Path) -> None:
    """The v1 schema (stable and unstable) plus a definition for every name the package uses or
    exports: it builds with a warning for each export only, models keep their names (builtins get
    a `_`), the package's own names keep meaning what they meant, every model and every v1 fixture
    round-trips, and mypy --strict and ruff pass. What a module prints after `use()` (`tag is
    UNSET`, `field(...)`, `Literal[...]`) is then an alias wherever a class took the name."""
    v1 = json.loads((ROOT / "schema" / "v1" / "schema.json").read_text(encoding="utf-8"))
    unstable = json.loads((ROOT / "schema" / "v1" / "schema.unstable.json").read_text(encoding="utf-8"))
    names = sorted(names_the_package_uses() - set(unstable["$defs"]))
    assert {"Literal", "Final", "TypeAlias", "Callable", "Enum", "Model", "Tagged", "Self",
            "TYPE_CHECKING", "JsonValue", "Unset", "UNSET", "KeyError", "RequestError", "TYPES"} <= set(names)
    package = "every_" + uuid.uuid4().hex[:8]
    (tmp_path / "schema.json").write_text(json.dumps({**v1, "$defs": every_name_schema(names, v1["$defs"])}), encoding="utf-8")
    (tmp_path / "schema.unstable.json").write_text(
        json.dumps({**unstable, "$defs": every_name_schema(names, unstable["$defs"])}), encoding="utf-8")
    target = Target(name=package, schema=tmp_path / "schema.json", output=tmp_path / package, package=package,
                    protocol_version=1, command="test")
    result = build(target)
    assert result.ok, [d.render() for d in result.diagnostics if d.level == "error"]
    renamed = {d.pointer.rsplit("/", 1)[1] for d in result.diagnostics if d.code == "export-renamed"}
    assert renamed == {n for n in PACKAGE_EXPORTS if n[:1].isupper()}  # `decode` & co.: no class is lowercase
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.invalidate_caches()
        pkg = importlib.import_module(package)
        # The package's exports are its own (the runtime's RequestError, the codec's UNSET, ...), and
        # exactly naming.PACKAGE_EXPORTS: a future export that the list misses fails here.
        assert set(pkg.__all__) - set(pkg.models.__all__) == PACKAGE_EXPORTS
        for name in renamed:
            model = pkg.models.__dict__[name]
            assert getattr(pkg, name) is not model and getattr(pkg, name + "_") is model, name
        assert pkg.RequestError.__module__ == f"{package}._protocol" and pkg.UNSET is pkg._codec.UNSET
        for index, name in enumerate(names):
            py = name + "_" if name in BUILTIN_CLASS_NAMES else name
            model = pkg.TYPES[name]
            assert pkg.models.__dict__[py] is model, name
            if index % 4 != 2:  # a union is a type alias, not a class
                assert model.__name__ == py, name
            wire = EVERY_NAME_WIRE[index % 4]
            assert pkg.encode(pkg.decode(name, wire)) == wire, name
        with pytest.raises(pkg.ValidationError, match="required key is missing"):
            pkg.decode(names[0], {})
        # The v1 messages take every path of the templates (tag-only subclasses, open unions, defaults).
        for path in sorted((ROOT / "tests" / "fixtures" / "messages" / "v1").glob("*.json")):
            for instance in json.loads(path.read_text(encoding="utf-8")):
                encoded = pkg.encode(pkg.decode(path.stem, instance))
                assert pkg.encode(pkg.decode(path.stem, encoded)) == encoded, path.stem
        other = pkg.decode("MultiSelectItems", {"type": "novel", "x": 1})
        assert type(other).__name__ == "OtherMultiSelectItems" and pkg.encode(other) == {"type": "novel", "x": 1}
        # The error paths use the codec's own UNSET and ValidationError, not the classes of those names.
        with pytest.raises(pkg.ValidationError, match="type: required key is missing"):
            pkg.models.OtherMultiSelectItems.from_dict({})
        with pytest.raises(pkg.ValidationError) as info:
            pkg.decode("PromptRequest", {"sessionId": "s", "prompt": [{"type": "text"}]})
        assert info.value.path == "prompt[0].text"
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
    ruff = ruff_check(tmp_path / package)
    assert ruff.returncode == 0, ruff.stdout[-3000:]
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                           package], cwd=tmp_path, capture_output=True, text=True, timeout=600)
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
            "value of this property: expected string, got an integer") in result.stderr
    assert not (tmp_path / "gen").exists()


# -- handler and proxy names -------------------------------------------------------------------------


def public_members(tree: ast.Module, classes: set[str]) -> set[str]:
    """The public methods of `classes` in a module, and the attributes their `__init__` sets."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in classes:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    out.add(item.name)
                    if item.name == "__init__":
                        out |= {t.attr for t in ast.walk(item) if isinstance(t, ast.Attribute)
                                and isinstance(t.ctx, ast.Store) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    return {n for n in out if not n.startswith("_")}


def test_handler_names_never_meet_the_connections_own_members_nor_each_other(tmp_path: Path) -> None:
    """tests/hostile/handler_names.json (wire methods `close`, `wait_closed`, `limits`, `agent`,
    `client`, `a/b` beside `a_b`, ...): every method reaches its own handler through its own proxy,
    and the connection's own `close` still closes. CONNECTION_MEMBERS is checked against the
    members the built classes define, so a member added to a template cannot be missed."""
    document = json.loads((ROOT / "tests" / "hostile" / "handler_names.json").read_text(encoding="utf-8"))
    pkg, out = build_and_import(tmp_path, document)
    handlers = {m.handler for m in pkg.METHODS}
    own = public_members(ast.parse((out / "rpc.py").read_text(encoding="utf-8")), {"Connection"})
    own |= public_members(ast.parse((out / "sides.py").read_text(encoding="utf-8")), {"AgentSide", "ClientSide"})
    own |= public_members(ast.parse((out / "connections.py").read_text(encoding="utf-8")),
                          {"AgentSideConnection", "ClientSideConnection"}) - handlers
    own |= public_members(ast.parse((out / "interfaces.py").read_text(encoding="utf-8")), {"Agent", "Client"}) - handlers
    assert own <= CONNECTION_MEMBERS and {"close", "limits", "agent", "client", "ext_method"} <= own
    assert not handlers & CONNECTION_MEMBERS
    by_wire = {m.method: m.handler for m in pkg.METHODS}
    assert by_wire["close"] == "close_" and by_wire["a/b"] == "a_b" and by_wire["a_b"] == "a_b_2"
    assert by_wire["$/cancel_request"] == "cancel_request" and by_wire["cancel/request"] == "cancel_request_2"
    agent_side = [m for m in pkg.METHODS if m.side == "agent"]

    def answer(name: str) -> Any:
        async def handler(self: object, params: object) -> object:
            return {"handled_by": name}
        return handler

    MyAgent = type("MyAgent", (pkg.Agent,), {m.handler: answer(m.handler) for m in agent_side})

    async def main() -> None:
        from tests.runtime_support import duplex

        (a_in, a_out), (c_in, c_out) = duplex()
        agent_conn = pkg.AgentSideConnection(MyAgent(), a_in, a_out)
        client_conn = pkg.ClientSideConnection(pkg.Client(), c_in, c_out)
        for m in agent_side:
            got = await asyncio.wait_for(getattr(client_conn, m.handler)({}), 10)
            assert got == {"handled_by": m.handler}, m.method
        assert not client_conn.closed
        await asyncio.wait_for(client_conn.close(), 10)
        assert client_conn.closed
        await asyncio.wait_for(agent_conn.close(), 10)

    asyncio.run(main())


def test_dunder_all_is_in_the_order_ruff_wants(tmp_path: Path) -> None:
    """models.py's `__all__` (dunder_all_order) against ruff's RUF022 itself: casing categories,
    natural order of digit runs (`V2` < `V10`, `V01` < `V1`), non-ASCII and uncased names, over 300
    random lists of class names derived from random text, in one ruff run."""
    rng = random.Random(11)
    tricky = ["Name2", "Name10", "Name1", "NAME", "N", "Ab", "AB", "ÄB", "Ωmega", "ΩMEGA", "日本", "V0", "V00", "V01",
              "V001", "V1a", "V1", "X_1", "X_01", "ALL_CAPS", "ALL2", "A", "B_", "Ǆ", "ǅa", "Ⅻ", "ⅫA", "Value1st"]
    alphabet = "aZ09_ÄäΩω日本Ⅻǅ-"
    for index in range(300):
        derived = {class_name("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))) for _ in range(12)}
        names = dunder_all_order(set(rng.sample(tricky, 8)) | derived)
        (tmp_path / f"m{index}.py").write_text(f"__all__ = {names!r}\n", encoding="utf-8")
    ruff = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "RUF022", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ruff.returncode == 0, ruff.stdout[-3000:]


# -- no silent loss: a union inside an object variant -------------------------------------------------


def test_a_union_inside_an_object_is_honoured(tmp_path: Path) -> None:
    """tests/hostile/nested_union.json: a JSON-RPC response variant `{id, oneOf: [{result}, {error}]}`
    (as ACP 0.5.1's AgentOutgoingMessage is) and an `allOf` member `{color, oneOf: [circle, square]}`:
    the inner alternatives are read from the same object, written back into it, and a value that
    matches none of them is an error (its keys used to be dropped with a warning)."""
    document = json.loads((ROOT / "tests" / "hostile" / "nested_union.json").read_text(encoding="utf-8"))
    pkg, _ = build_and_import(tmp_path, document)
    for wire in ({"jsonrpc": "2.0", "id": 1, "method": "m"}, {"jsonrpc": "2.0", "id": 2, "result": {"x": [1]}},
                 {"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "no"}}):
        assert pkg.encode(pkg.decode("Message", wire)) == wire
    response = pkg.decode("Message", {"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "no"}})
    assert type(response.one_of).__name__ == "ErrorResponseMessageOneOf" and response.one_of.error.code == -1
    # Message's inner `oneOf` makes it a checked definition: its schema judges the value first.
    with pytest.raises(pkg.ValidationError, match=r"matches none of the `oneOf` alternatives .*result: a required key"):
        pkg.decode("Message", {"jsonrpc": "2.0", "id": 4})
    built = pkg.models.ResponseMessage(id=5, jsonrpc="2.0", one_of=pkg.models.ResultResponseMessageOneOf(result=None))
    assert pkg.encode(built) == {"jsonrpc": "2.0", "id": 5, "result": None}
    for wire in ({"name": "c", "color": "red", "kind": "circle", "radius": 1.5}, {"name": "s", "kind": "square", "side": 2}):
        assert pkg.encode(pkg.decode("Shape", wire)) == wire
    with pytest.raises(pkg.ValidationError) as info:
        pkg.decode("Shape", {"name": "t", "kind": "circle"})
    assert info.value.path == "radius"
