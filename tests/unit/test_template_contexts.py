"""Each template receives its own typed context: every variable a bundled template reads is a field
of that context, and every field a context adds to the common ones is read by its template."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
from jinja2 import meta, nodes

from acpgen.ir import IrOptions, build_package
from acpgen.load import load_schema
from acpgen.render import OUTPUTS, RUNTIME, builtin_templates, make_environment
from acpgen.render.context import ContextBuilder, TemplateContext

ROOT = Path(__file__).resolve().parents[2]
COMMON = {f.name for f in fields(TemplateContext)}


def read_variables(name: str) -> set[str]:
    """The variables a template reads from its context, with those of the templates it includes
    (`macros.j2` is imported without context: its macros take arguments)."""
    env = make_environment()
    tree = env.parse((builtin_templates() / name).read_text(encoding="utf-8"))
    own = {a.target.name for a in tree.find_all(nodes.Assign) if isinstance(a.target, nodes.Name)}
    found = set(meta.find_undeclared_variables(tree)) - own  # `set` in a loop reads as undeclared
    for included in meta.find_referenced_templates(tree):
        if included == "header.j2":
            found |= read_variables(included)
    return found


@pytest.fixture(scope="module")
def contexts() -> dict[str, TemplateContext]:
    loaded, _ = load_schema(ROOT / "schema" / "v1" / "schema.json", ROOT / "schema" / "v1" / "schema.unstable.json")
    assert loaded is not None
    package, _ = build_package(loaded, IrOptions(package="acp_v1"))
    assert package is not None
    return ContextBuilder(package).contexts("acpgen build")


def module_templates() -> list[str]:
    return sorted({t for t in OUTPUTS.values() if t not in (None, RUNTIME)})


@pytest.mark.parametrize("template", [*module_templates(), "header.j2"])
def test_a_template_reads_only_what_its_context_holds(template: str, contexts: dict[str, TemplateContext]) -> None:
    held = {f.name for f in fields(contexts[template])}
    assert read_variables(template) - held == set()


@pytest.mark.parametrize("template", module_templates())
def test_a_context_holds_nothing_its_template_does_not_read(template: str, contexts: dict[str, TemplateContext]) -> None:
    added = {f.name for f in fields(contexts[template])} - COMMON
    assert added - read_variables(template) == set()


def test_every_template_has_a_context(contexts: dict[str, TemplateContext]) -> None:
    assert set(contexts) == {*module_templates(), "header.j2"}
    assert all(isinstance(c, TemplateContext) for c in contexts.values())
