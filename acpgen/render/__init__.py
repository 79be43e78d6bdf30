"""Stage 3: render the IR through the Jinja templates into Python source files."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    StrictUndefined,
    Template,
    TemplateSyntaxError,
)

from acpgen.diagnostics import Diagnostic, Diagnostics
from acpgen.ir.model import Package
from acpgen.render.cache import bytecode_cache
from acpgen.render.codegen import PrivateNames, constant_name, isort_key
from acpgen.render.context import ContextBuilder, RegistryContext, docstring
from acpgen.render.text import comment_text, fstring_text

# Output file -> template, or RUNTIME for a module of acpgen/runtime/ copied below the provenance
# header. Every generated package has exactly these files.
RUNTIME = "runtime"
OUTPUTS = {
    "__init__.py": "__init__.py.j2",
    "_codec.py": RUNTIME,
    "_protocol.py": "_protocol.py.j2",
    "_registry.py": "_registry.py.j2",
    "_schemas.py": "_schemas.py.j2",
    "_tables.py": RUNTIME,
    "asgi.py": RUNTIME,
    "connections.py": "connections.py.j2",
    "errors.py": RUNTIME,
    "helpers.py": "helpers.py.j2",
    "interfaces.py": "interfaces.py.j2",
    "methods.py": "methods.py.j2",
    "models.py": "models.py.j2",
    "py.typed": None,
    "remote.py": RUNTIME,
    "router.py": RUNTIME,
    "rpc.py": RUNTIME,
    "_validate.py": RUNTIME,
    "sides.py": RUNTIME,
    "telemetry.py": RUNTIME,
}
# Only a package with checked definitions (a schema saying more than its types) has these.
CHECKED_ONLY = frozenset({"_schemas.py", "_validate.py"})

def runtime_outputs() -> frozenset[str]:
    """The output files that are runtime modules copied as they are (already in ruff's format)."""
    return frozenset(name for name, template in OUTPUTS.items() if template == RUNTIME)


def runtime_source(output: str) -> str:
    """The text of a runtime module as it ships in acpgen/runtime/ (read, never imported here)."""
    return (Path(__file__).resolve().parent.parent / "runtime" / output).read_text(encoding="utf-8")


def builtin_templates() -> Path:
    """Templates ship inside the wheel as acpgen/templates; a source checkout has them at the top."""
    packaged = Path(__file__).resolve().parent.parent / "templates"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent.parent / "templates"


TEMPLATE_SUFFIX = ".j2"


def builtin_template_names() -> list[str]:
    """The names a user template may override: the built-in `*.j2` files (not README.md)."""
    root = builtin_templates()
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(f"*{TEMPLATE_SUFFIX}") if p.is_file())


def check_user_templates(folder: Path, diags: Diagnostics) -> bool:
    """A user folder must exist, and every file in it must override a built-in template by name
    (a misspelt name would otherwise be ignored without a word). Dot files are skipped."""
    if not folder.exists():
        diags.error("templates-missing", "", f"the templates folder {folder} does not exist",
                    "pass --templates (or set `templates`) to a folder of *.j2 files named like the built-in ones")
        return False
    if not folder.is_dir():
        diags.error("templates-not-a-folder", "", f"--templates must be a folder, and {folder} is a file",
                    "put the template in a folder and pass the folder")
        return False
    valid = builtin_template_names()
    ok = True
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_dir() or any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        if name not in valid:
            diags.items.append(Diagnostic(
                "error", "unknown-template", "", f"{name} matches no built-in template, so it would never be used",
                str(path), f"rename it to one of: {', '.join(valid)}",
            ))
            ok = False
    return ok


def template_error(exc: Exception, user_templates: Path | None) -> Diagnostic:
    """A failure while rendering, located at the template file and line that caused it."""
    file, line = "", None
    if isinstance(exc, TemplateSyntaxError):
        file, line = exc.filename or exc.name or "", exc.lineno
    else:
        # Jinja rewrites tracebacks so that template frames carry the template's file and line.
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename.endswith(TEMPLATE_SUFFIX):
                file, line = frame.filename, frame.lineno
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if not isinstance(exc, TemplateSyntaxError) and type(exc).__module__ != "jinja2.exceptions":
        message = f"{type(exc).__name__}: {message}"
    where = f"{file}:{line}" if file and line else file or "template"
    user = user_templates is not None and file and Path(file).resolve().is_relative_to(user_templates.resolve())
    hint = ("fix this template of your --templates folder; templates/README.md lists what each template receives"
            if user else "fix the template (a user template folder overrides built-in templates by name)")
    return Diagnostic("error", "template-error", "", message, where, hint)


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
    env.filters["comment"] = comment_text
    env.filters["fstring"] = fstring_text
    names = PrivateNames()  # render_package binds the package's own
    env.filters["decoder"] = names.decoder
    env.filters["wire_table"] = names.wire_table
    env.filters["encoders_table"] = names.encoders_table
    env.filters["constant"] = constant_name
    env.filters["hook_alias"] = names.hook
    return env


def uses_name(body: str, name: str) -> bool:
    """Whether `name` occurs in `body` as a whole word that is not an attribute (`x.name`).

    `str.find` plus a look at the neighbours: one regex over a 1 MB module per name cost 25 ms."""
    start = body.find(name)
    while start >= 0:
        end = start + len(name)
        before = body[start - 1] if start else " "
        after = body[end] if end < len(body) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return True
        start = body.find(name, start + 1)
    return False


def used_imports(body: str, groups: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """Import lines for the names the rendered body actually uses (no dead imports)."""
    lines = []
    for module, names in groups:
        used = [n for n in names if uses_name(body, n)]
        if used:
            lines.append(f"from {module} import {', '.join(sorted(used, key=isort_key))}")
    stdlib = [line for line in lines if not line.startswith("from .")]
    local = [line for line in lines if line.startswith("from .")]
    return "\n".join(stdlib) + ("\n\n" if stdlib and local else "") + "\n".join(local)


# helpers.py's imports, each kept only when the body uses it. Lower-case names are looked for as
# calls or decorators: prose in a docstring says "field" or "cast" too.
HELPERS_IMPORTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("collections.abc", ("Callable", "Mapping")),
    ("dataclasses", ("dataclass", "field")),
    ("typing", ("TYPE_CHECKING", "Literal", "cast")),
    (".", ("models",)),
    ("._codec", ("UNSET", "JsonValue", "Unset")),
    (".interfaces", ("UnstableAgent", "UnstableClient")),
    (".rpc", ("RequestError",)),
)
_CALLED = {"dataclass": "@dataclass", "field": "field(", "cast": "cast(", "models": "models."}


def helpers_imports(body: str) -> str:
    code = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    groups = tuple(
        (module, tuple(n for n in names if (_CALLED[n] in code if n in _CALLED else uses_name(code, n))))
        for module, names in HELPERS_IMPORTS
    )
    return used_imports(code, groups)


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
    if user_templates is not None and not check_user_templates(user_templates, diags):
        return None
    env = make_environment(user_templates)
    builder = ContextBuilder(package)
    contexts = builder.contexts(command)  # the one place the contexts are made
    names = builder.emit.private  # the module-private names, unique per package
    env.filters.update(decoder=names.decoder, wire_table=names.wire_table, encoders_table=names.encoders_table,
                       hook_alias=names.hook)
    registry = contexts["_registry.py.j2"]
    assert isinstance(registry, RegistryContext)
    codec = ("encode_value", *sorted({c for _, _, c in registry.registry if c.startswith("decode_")}))

    def registry_imports(body: str) -> str:
        # An empty schema has no types: the registry then names no model.
        models_import = "from . import models\n" if any(py for _, py, _ in registry.registry) else ""
        return models_import + used_imports(body, (("._codec", codec), ("._tables", ("decode_def",))))

    files: dict[str, str] = {}
    try:
        for output, template in OUTPUTS.items():
            if output in CHECKED_ONLY and not package.checked_schema:
                continue
            if template is None:
                files[output] = ""
                continue
            if template == RUNTIME:
                header = contexts["header.j2"].variables()
                files[output] = env.get_template("header.j2").render(header) + "\n" + runtime_source(output)
                continue
            tmpl = env.get_template(template)
            ctx = contexts[template].variables()
            if output == "_registry.py":
                files[output] = render_with_imports(tmpl, ctx, registry_imports)
            elif output == "helpers.py":
                files[output] = render_with_imports(tmpl, ctx, helpers_imports)
            else:
                files[output] = tmpl.render(ctx)
    except Exception as exc:  # a user template can raise anything; report where, never a traceback
        diags.items.append(template_error(exc, user_templates))
        return None
    return files
