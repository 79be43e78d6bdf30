"""`[tool.acpgen]` in pyproject.toml: one table per target. Unknown keys and bad values are errors
that name the key."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen.diagnostics import Diagnostics
from acpgen.ir.naming import is_safe_identifier, package_name_problem


@dataclass(frozen=True)
class Target:
    """One package to build: the schema files, the output folder and the options that apply."""

    name: str
    schema: Path
    output: Path
    package: str
    unstable: Path | None = None
    meta: Path | None = None
    include_unstable: bool = True
    find_unstable: bool = True
    templates: Path | None = None
    rename: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, str] = field(default_factory=dict)
    keep_unknown: bool = False
    protocol_version: int | None = None
    error_codes: dict[str, int] = field(default_factory=dict)
    allow_foreign: bool = False
    command: str = ""


# The package name `acpgen build SCHEMA` uses when neither --package nor --output names one: the
# schema file's name would be `schema` for every release (a PyPI package of that name exists), so
# it is `acp_v<N>` when the protocol version is known and DEFAULT_PACKAGE otherwise.
DEFAULT_PACKAGE = "acp_generated"


def default_package(schema: Path, meta: Path | None, protocol_version: int | None) -> str:
    """`acp_v<N>` for the version `--protocol-version` gives, else the `version` of the meta file
    (given, or `meta.json` beside the schema); else DEFAULT_PACKAGE. An unreadable meta file only
    loses the version here: the build itself reports it."""
    if protocol_version is None:
        meta_file = meta if meta is not None else schema.parent / "meta.json"
        try:
            version = json.loads(meta_file.read_text(encoding="utf-8")).get("version")
        except (OSError, ValueError, AttributeError):
            version = None
        if isinstance(version, int) and not isinstance(version, bool) and version >= 0:
            protocol_version = version
    return f"acp_v{protocol_version}" if protocol_version is not None else DEFAULT_PACKAGE


def schema_target(
    schema: Path, *, package: str, output: Path | None = None, name: str | None = None,
    unstable: Path | None = None, no_unstable: bool = False, meta: Path | None = None,
    templates: Path | None = None, allow_foreign: bool = False, keep_unknown: bool = False,
    protocol_version: int | None = None,
) -> Target:
    """The one place a Target is made: for a schema file named on the command line (`build`,
    `check`, `diff`, the kit's `--schema`), and under each configured target (`parse_target` adds
    the config-only keys and its `--target` command). The unstable companion is the one
    `unstable` names, else the one found beside it, unless `no_unstable`; `command` is the `acpgen
    build` line that regenerates it exactly (the provenance header prints it)."""
    out = output if output is not None else Path("generated") / package
    parts = ["acpgen", "build", schema.as_posix(), "--output", out.as_posix(), "--package", package]
    parts += [*(["--unstable", unstable.as_posix()] if unstable else []), *(["--no-unstable"] if no_unstable else []),
              *(["--meta", meta.as_posix()] if meta else []),
              *(["--protocol-version", str(protocol_version)] if protocol_version is not None else []),
              *(["--templates", templates.as_posix()] if templates else []),
              *(["--allow-foreign"] if allow_foreign else []), *(["--keep-unknown"] if keep_unknown else [])]
    return Target(
        name=name or package, schema=schema, output=out, package=package, unstable=unstable, meta=meta,
        include_unstable=not no_unstable, find_unstable=unstable is None and not no_unstable,
        templates=templates, allow_foreign=allow_foreign, keep_unknown=keep_unknown,
        protocol_version=protocol_version, command=" ".join(shlex.quote(p) for p in parts),
    )


# key -> (expected python type, description for the error message)
TARGET_KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "schema": (str, "a path to schema.json"),
    "output": (str, "the folder the package is written to"),
    "package": (str, "a Python package name"),
    "unstable": (str, "a path to schema.unstable.json"),
    "meta": (str, "a path to meta.json"),
    "include_unstable": (bool, "true or false"),
    "templates": (str, "a folder of templates overriding the built-in ones"),
    "rename": (dict, 'a table of JSON pointer -> name, e.g. { "/$defs/Foo" = "Bar" }'),
    "defaults": (dict, 'a table of property JSON pointer -> default value'),
    "hooks": (dict, 'a table of property JSON pointer -> "module:function" that rewrites the raw value before decoding'),
    "keep_unknown": (bool, "true or false"),
    "protocol_version": (int, "an integer"),
    "error_codes": (dict, 'a table of error data type JSON pointer -> the error code it belongs to, '
                    'e.g. { "/$defs/SessionNotFoundErrorData" = -32002 }'),
    "allow_foreign": (bool, "true or false"),
}
TOP_KEYS = {"targets"}
HOOK = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


def load_config(pyproject: Path, diags: Diagnostics) -> list[Target]:
    if sys.version_info >= (3, 11):  # imported here: a build of a schema file reads no TOML
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    diags.file = str(pyproject)
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except OSError as exc:
        diags.error("config-unreadable", "", f"cannot read {pyproject}: {exc.strerror or exc}",
                    "run acpgen in the folder that holds pyproject.toml, pass --config FILE, or give a schema file")
        return []
    except tomllib.TOMLDecodeError as exc:
        diags.error("config-invalid-toml", "", f"invalid TOML: {exc}")
        return []
    section = data.get("tool", {}).get("acpgen")
    if section is None:
        diags.error("config-missing", "/tool/acpgen", "no [tool.acpgen] table",
                    "add [tool.acpgen.targets.NAME] with `schema` and `output`, or pass a schema file")
        return []
    for key in sorted(set(section) - TOP_KEYS):
        diags.error("config-unknown-key", f"/tool/acpgen/{key}", f"unknown key `tool.acpgen.{key}`",
                    f"known keys: {', '.join(sorted(TOP_KEYS))}")
    targets_table = section.get("targets", {})
    if not isinstance(targets_table, dict) or not targets_table:
        diags.error("config-no-targets", "/tool/acpgen/targets", "`tool.acpgen.targets` must hold at least one target table")
        return []
    root = pyproject.parent
    targets = []
    for name, table in targets_table.items():
        target = parse_target(name, table, root, diags)
        if target is not None:
            targets.append(target)
    check_overlaps(targets, diags)
    return targets


def check_overlaps(targets: list[Target], diags: Diagnostics) -> None:
    """Two targets writing the same folder (or one inside the other) would replace each other's
    output on every build: a config error naming both."""
    real = [(t, Path(os.path.realpath(t.output))) for t in targets]
    for index, (t, out) in enumerate(real):
        for other, other_out in real[:index]:
            if out == other_out or other_out in out.parents or out in other_out.parents:
                how = "the same folder" if out == other_out else "folders inside one another"
                diags.error("config-overlapping-output", f"/tool/acpgen/targets/{t.name}/output",
                            f"targets `{other.name}` and `{t.name}` write {how} ({other.output} and {t.output})",
                            "give every target an output folder of its own, side by side")


def parse_target(name: str, table: Any, root: Path, diags: Diagnostics) -> Target | None:
    where = f"tool.acpgen.targets.{name}"
    if not isinstance(table, dict):
        diags.error("config-bad-value", f"/tool/acpgen/targets/{name}", f"`{where}` must be a table")
        return None
    ok = True
    for key in sorted(table):
        if key not in TARGET_KEYS:
            diags.error("config-unknown-key", f"/tool/acpgen/targets/{name}/{key}", f"unknown key `{where}.{key}`",
                        f"known keys: {', '.join(sorted(TARGET_KEYS))}")
            ok = False
            continue
        kind, wanted = TARGET_KEYS[key]
        value = table[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            diags.error("config-bad-value", f"/tool/acpgen/targets/{name}/{key}",
                        f"`{where}.{key}` must be {wanted}, got {value!r}")
            ok = False
    for key in ("schema", "output"):
        if key not in table:
            diags.error("config-missing-key", f"/tool/acpgen/targets/{name}", f"`{where}` needs `{key}`",
                        f"add `{key} = ...`: {TARGET_KEYS[key][1]}")
            ok = False
    package = table.get("package", name)
    if isinstance(package, str) and package_name_problem(package):
        diags.error("config-bad-value", f"/tool/acpgen/targets/{name}/package",
                    f"`{where}.package` {package!r} cannot name a package: {package_name_problem(package)}",
                    "e.g. package = \"acp_v1\"")
        ok = False
    for key in ("rename",):
        for pointer, new in (table.get(key) or {}).items() if isinstance(table.get(key), dict) else []:
            if not isinstance(new, str) or not is_safe_identifier(new):
                diags.error("config-bad-value", f"/tool/acpgen/targets/{name}/{key}",
                            f"`{where}.{key}.{pointer!r}` must be a Python identifier that is not a keyword, got {new!r}")
                ok = False
    codes = table.get("error_codes")
    for pointer, code in codes.items() if isinstance(codes, dict) else []:
        if not isinstance(code, int) or isinstance(code, bool):
            diags.error("config-bad-value", f"/tool/acpgen/targets/{name}/error_codes",
                        f"`{where}.error_codes.{pointer!r}` must be an integer error code, got {code!r}")
            ok = False
    hooks = table.get("hooks")
    for pointer, target in hooks.items() if isinstance(hooks, dict) else []:
        if not isinstance(target, str) or not HOOK.fullmatch(target):
            diags.error("config-bad-value", f"/tool/acpgen/targets/{name}/hooks",
                        f"`{where}.hooks.{pointer!r}` must be \"module:function\", got {target!r}",
                        'e.g. hooks = { "/$defs/InitializeRequest/properties/protocolVersion" = "myapp.acp_hooks:version" }')
            ok = False
    paths_ok = ok
    for key, want_dir in (("schema", False), ("unstable", False), ("meta", False), ("templates", True)):
        value = table.get(key)
        if paths_ok and isinstance(value, str) and not ((root / value).is_dir() if want_dir else (root / value).is_file()):
            what = "folder" if want_dir else "file"
            diags.error("config-missing-path", f"/tool/acpgen/targets/{name}/{key}",
                        f"`{where}.{key}` names {value!r}, which is not an existing {what}",
                        f"fix the path (relative to the folder of pyproject.toml): {TARGET_KEYS[key][1]}")
            ok = False
    if not ok:
        return None

    def path(key: str) -> Path | None:
        return root / table[key] if key in table else None

    built = schema_target(
        root / table["schema"], package=package, output=root / table["output"], name=name,
        unstable=path("unstable"), no_unstable=not table.get("include_unstable", True), meta=path("meta"),
        templates=path("templates"), allow_foreign=table.get("allow_foreign", False),
        keep_unknown=table.get("keep_unknown", False), protocol_version=table.get("protocol_version"),
    )
    return dataclasses.replace(
        built,
        rename={normalise_pointer(k): v for k, v in table.get("rename", {}).items()},
        defaults={normalise_pointer(k): v for k, v in table.get("defaults", {}).items()},
        hooks={normalise_pointer(k): v for k, v in table.get("hooks", {}).items()},
        error_codes={normalise_pointer(k): v for k, v in table.get("error_codes", {}).items()},
        command=f"acpgen build --target {name}",
    )


def normalise_pointer(pointer: str) -> str:
    """Accept `#/$defs/X` as well as `/$defs/X`."""
    return pointer[1:] if pointer.startswith("#") else pointer
