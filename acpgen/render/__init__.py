"""Stage 3: render the IR through the Jinja templates into Python source files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    StrictUndefined,
    Template,
    TemplateError,
)

from acpgen import __version__
from acpgen.diagnostics import Diagnostics
from acpgen.ir.model import Package
from acpgen.render.cache import bytecode_cache
from acpgen.render.codegen import constant_name, decoder_name
from acpgen.render.context import ContextBuilder, docstring

# Output file -> template. Every generated package has exactly these files.
OUTPUTS = {
    "__init__.py": "__init__.py.j2",
    "_codec.py": "_codec.py.j2",
    "_registry.py": "_registry.py.j2",
    "connections.py": "connections.py.j2",
    "interfaces.py": "interfaces.py.j2",
    "methods.py": "methods.py.j2",
    "models.py": "models.py.j2",
    "py.typed": None,
    "rpc.py": "rpc.py.j2",
}

MODEL_IMPORTS = (
    ("collections.abc", ("Callable",)),
    ("dataclasses", ("dataclass", "field")),
    ("enum", ("Enum",)),
    ("typing", ("Final", "Literal", "TypeAlias")),
    ("._codec", ("UNSET", "JsonValue", "Unset", "ValidationError", "decode_any", "decode_bool",
                 "decode_float", "decode_int", "decode_null", "decode_object", "decode_str",
                 "encode_value", "expected", "missing", "report_skipped")),
)


def builtin_templates() -> Path:
    """Templates ship inside the wheel as acpgen/templates; a source checkout has them at the top."""
    packaged = Path(__file__).resolve().parent.parent / "templates"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent.parent / "templates"


def make_environment(user_templates: Path | None = None) -> Environment:
    loaders = [FileSystemLoader(str(user_templates))] if user_templates else []
    loaders.append(FileSystemLoader(str(builtin_templates())))
    options: dict[str, Any] = {"undefined": StrictUndefined, "keep_trailing_newline": True, "autoescape": False}
    env = Environment(
        loader=ChoiceLoader(loaders),
        bytecode_cache=bytecode_cache(tuple(sorted((k, repr(v)) for k, v in options.items()))),
        **options,
    )
    env.filters["pyrepr"] = repr
    env.filters["docstring"] = docstring
    env.filters["decoder"] = decoder_name
    env.filters["constant"] = constant_name
    env.filters["zip_locals"] = lambda pys, fields: [f"{py}={f.local}" for py, f in zip(pys, fields, strict=True)]
    return env


def isort_key(name: str) -> tuple[int, str]:
    """isort's order-by-type: CONSTANTS, then Classes, then functions."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def used_imports(body: str, groups: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """Import lines for the names the rendered body actually uses (no dead imports)."""
    words = set(re.findall(r"(?<![\w.])\w+", body))  # every name not written as `x.name`
    lines = []
    for module, names in groups:
        used = [n for n in names if n in words]
        if used:
            lines.append(f"from {module} import {', '.join(sorted(used, key=isort_key))}")
    stdlib = [line for line in lines if not line.startswith("from .")]
    local = [line for line in lines if line.startswith("from .")]
    return "\n".join(stdlib) + ("\n\n" if stdlib and local else "") + "\n".join(local)


# Stands in for `{{ imports }}` in a first render, so the imports can be computed from the body
# and put in its place without rendering the template twice.
IMPORTS_MARK = "# acpgen: imports go here 5f0c2d"


def render_with_imports(tmpl: Template, ctx: dict[str, Any], imports_of: Callable[[str], str]) -> str:
    body = tmpl.render(dict(ctx, imports=IMPORTS_MARK))
    if body.count(IMPORTS_MARK) == 1:
        rest = body.replace(IMPORTS_MARK, "")
        return body.replace(IMPORTS_MARK, imports_of(rest))
    # a user template did something else with `imports`: render again with the real value
    return tmpl.render(dict(ctx, imports=imports_of(body)))


def render_package(
    package: Package, command: str, diags: Diagnostics, user_templates: Path | None = None
) -> dict[str, str] | None:
    env = make_environment(user_templates)
    ctx: dict[str, Any] = ContextBuilder(package).context()
    def_class = {def_name: ref.name for def_name, ref in package.defs}
    ctx["registry"] = [
        (d, py, call if call.startswith("decode_") else f"models.{call}") for d, py, call in ctx["registry"]
    ]
    ctx.update(
        acpgen_version=__version__,
        sources=", ".join(f"{s.file} (sha256 {s.sha256})" for s in package.sources),
        source_pairs=tuple((s.file, s.sha256) for s in package.sources),
        command=command,
        def_class=def_class,
        imports="",
    )
    codec = ("encode_value", *sorted({c for _, _, c in ctx["registry"] if c.startswith("decode_")}))

    def registry_imports(body: str) -> str:
        return "from . import models\n" + used_imports(body, (("._codec", codec),))

    files: dict[str, str] = {}
    try:
        for output, template in OUTPUTS.items():
            if template is None:
                files[output] = ""
                continue
            tmpl = env.get_template(template)
            if output == "models.py":
                text = render_with_imports(tmpl, ctx, lambda body: used_imports(body, MODEL_IMPORTS))
                public = [n.name for n in package.nodes if not n.name.startswith("_")]
                files[output] = text.rstrip() + "\n\n__all__ = " + repr(sorted(public)) + "\n"
            elif output == "_registry.py":
                files[output] = render_with_imports(tmpl, ctx, registry_imports)
            else:
                files[output] = tmpl.render(ctx)
    except TemplateError as exc:
        name = getattr(exc, "name", None) or getattr(exc, "filename", None) or "template"
        line = getattr(exc, "lineno", None)
        diags.error("template-error", "", f"{name}{f':{line}' if line else ''}: {exc.message or exc}",
                    "fix the template (a user template folder overrides built-in templates by name)")
        return None
    return files
