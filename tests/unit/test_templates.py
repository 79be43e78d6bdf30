"""User templates (`--templates DIR` / the `templates` config key): overrides by name, including
included and imported templates; and the errors: unknown names, bad folders, broken templates."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from acpgen.cli import app
from acpgen.render import builtin_template_names, builtin_templates
from tests.conftest import ROOT


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(ROOT / "schema/v0_4/schema.json", tmp_path / "schema.json")
    (tmp_path / "tpl").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def build(*extra: str) -> Result:
    return CliRunner().invoke(app, ["build", "schema.json", "-o", "out", "--package", "out", "-q", *extra])


def tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_builtin_names_are_the_j2_files_and_readme_is_not_one() -> None:
    names = builtin_template_names()
    assert "models.py.j2" in names and "header.j2" in names and "macros.j2" in names
    assert all(n.endswith(".j2") for n in names)
    assert (builtin_templates() / "README.md").is_file()
    assert "README.md" not in names


def test_overrides_reach_included_and_imported_templates(work: Path) -> None:
    (work / "tpl/header.j2").write_text("# Vendored ACP binding, acpgen {{ acpgen_version }}; do not edit.\n")
    macros = (builtin_templates() / "macros.j2").read_text()
    assert '"""{{ body }}"""' in macros
    (work / "tpl/macros.j2").write_text(macros.replace('"""{{ body }}"""', '"""[doc] {{ body }}"""'))
    result = build("--templates", "tpl")
    assert result.exit_code == 0, result.stderr
    models = (work / "out/models.py").read_text()
    assert models.startswith("# Vendored ACP binding, acpgen ")  # header.j2 is included
    assert '"""[doc] ' in models  # macros.j2 is imported
    assert (work / "out/methods.py").read_text().startswith("# Vendored ACP binding")


def test_the_config_key_uses_the_folder_too(work: Path) -> None:
    (work / "tpl/header.j2").write_text("# from config\n")
    (work / "pyproject.toml").write_text(
        '[tool.acpgen.targets.out]\nschema = "schema.json"\noutput = "out"\ntemplates = "tpl"\n')
    result = CliRunner().invoke(app, ["build", "-q"])
    assert result.exit_code == 0, result.stderr
    assert (work / "out/models.py").read_text().startswith("# from config\n")
    assert CliRunner().invoke(app, ["check"]).exit_code == 0


def test_a_user_template_receives_the_context_of_the_template_it_replaces(work: Path) -> None:
    (work / "tpl/methods.py.j2").write_text(
        '{% include "header.j2" %}\nDEFS = {{ def_class|length }}\nSIDES = {{ agent_sides|pyrepr }}\n')
    result = build("--templates", "tpl")
    assert result.exit_code == 0, result.stderr
    methods = (work / "out/methods.py").read_text()
    assert "SIDES = (\"agent\", \"both\", \"protocol\")" in methods
    assert int(methods.split("DEFS = ", 1)[1].split()[0]) > 0  # every $defs name of the schema
    # and only that: `structs` belongs to models.py.j2's context
    (work / "tpl/methods.py.j2").write_text("# {{ structs|length }}\n")
    result = build("--templates", "tpl")
    assert result.exit_code == 2
    assert "tpl/methods.py.j2:1: error[template-error]: 'structs' is undefined" in result.stderr, result.stderr


@pytest.mark.parametrize("name", ["modles.py.j2", "README.md", "sub/models.py.j2"])
def test_a_file_that_overrides_nothing_is_an_error(work: Path, name: str) -> None:
    assert build().exit_code == 0
    before = tree(work / "out")
    (work / "tpl" / name).parent.mkdir(parents=True, exist_ok=True)
    (work / "tpl" / name).write_text("whatever")
    (work / "tpl/header.j2").write_text("# fine\n")
    (work / "tpl/.DS_Store").write_text("ignored: a dot file")
    result = build("--templates", "tpl")
    assert result.exit_code == 2
    assert f"tpl/{name}: error[unknown-template]: {name} matches no built-in template" in result.stderr
    assert "hint: rename it to one of: " + ", ".join(builtin_template_names()) in result.stderr
    assert "header.j2" not in result.stderr.split("hint:")[0]
    assert tree(work / "out") == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: None, "missing: error[templates-missing]: the templates folder missing does not exist"),
        (lambda p: p.write_text("x"), "missing: error[templates-not-a-folder]: --templates must be a folder, and missing is a file"),
    ],
)
def test_a_bad_templates_folder_is_an_error(work: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    make(work / "missing")
    for command in (["build", "schema.json", "-o", "out", "--package", "out"],
                    ["check", "schema.json", "-o", "out", "--package", "out"]):
        result = CliRunner().invoke(app, [*command, "--templates", "missing"])
        assert result.exit_code == 2
        assert message in result.stderr, result.stderr
    assert not (work / "out").exists()


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("# ok\n# {% if %}\n", 2, "Expected an expression, got 'end of statement block'"),
        ("# ok\n# ok\n# {{ schema_title }}\n", 3, "'schema_title' is undefined"),
        ("# {{ package.nope }}\n", 1, "has no attribute 'nope'"),
        ("# ok\n# {{ 1 // 0 }}\n", 2, "ZeroDivisionError: integer division or modulo by zero"),
        ("{% include 'nothere.j2' %}\n", 1, "nothere.j2"),
    ],
)
def test_a_broken_user_template_names_file_and_line_and_keeps_the_output(
    work: Path, text: str, line: int, message: str
) -> None:
    assert build().exit_code == 0
    before = tree(work / "out")
    (work / "tpl/header.j2").write_text(text)
    result = build("--templates", "tpl")
    assert result.exit_code == 2
    assert f"tpl/header.j2:{line}: error[template-error]: " in result.stderr, result.stderr
    assert message in result.stderr
    assert "templates/README.md lists what each template receives" in result.stderr
    assert "Traceback" not in result.stderr
    assert tree(work / "out") == before


# -- templates/README.md documents what templates receive ----------------------------------------


def documented(section: str) -> set[str]:
    """The backticked names in the first column of the table under `## {section}`."""
    text = (builtin_templates() / "README.md").read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return {re.match(r"\| `([\w.]+)", line).group(1) for line in body.splitlines()  # type: ignore[union-attr]
            if re.match(r"\| `[\w.]+", line)}


def documented_contexts() -> dict[str, set[str]]:
    """Template -> the variables its context adds, from the `| template | context | adds |` table."""
    text = (builtin_templates() / "README.md").read_text()
    body = text.split("## Context variables\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in body.splitlines() if re.match(r"\| `[\w.]+\.j2` \| `\w+Context`", line)]
    return {row[0].strip("| `"): set(re.findall(r"`(\w+)`", row[2])) for row in rows}


def test_readme_lists_every_context_variable_each_template_receives(monkeypatch: pytest.MonkeyPatch) -> None:
    from jinja2 import Template

    from acpgen.config import Target
    from acpgen.pipeline import generate

    seen: dict[str, set[str]] = {}
    original = Template.render

    def spy(self: Template, *args: object, **kwargs: object) -> str:
        context = dict(*args, **kwargs)  # type: ignore[call-overload]
        seen.setdefault(self.name or "?", set()).update(context)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Template, "render", spy)
    target = Target(name="p", schema=ROOT / "schema/v0_4/schema.json", output=Path("unused"), package="p")
    assert generate(target).ok
    # header.j2 is rendered on its own too: it heads the runtime modules copied from acpgen/runtime/
    # _schemas.py.j2 renders only for a package with checked definitions, which v0.4 has none of
    assert set(seen) == {n for n in builtin_template_names() if n.endswith(".py.j2")} - {"_schemas.py.j2"} | {"header.j2"}
    templates = set(builtin_template_names())
    documented_vars = documented("Context variables") - templates
    common = {"package", "acpgen_version", "sources", "command"}
    per_template = documented_contexts()
    for template, names in sorted(seen.items()):
        stated = common | per_template.get(template, set())
        assert names == stated, (
            f"{template}: undocumented {sorted(names - stated)}, gone {sorted(stated - names)}; "
            "keep templates/README.md in step with acpgen/render")
    assert set().union(*seen.values()) | {"checked_schema"} == documented_vars
    assert documented("The templates") == set(builtin_template_names())


def test_readme_lists_every_filter_and_macro() -> None:
    from jinja2 import Environment

    from acpgen.render import make_environment

    assert documented("Filters") == set(make_environment().filters) - set(Environment().filters)
    macros = set(re.findall(r"\{%-? macro (\w+)\(", (builtin_templates() / "macros.j2").read_text()))
    assert documented("Macros (`macros.j2`)") == macros
