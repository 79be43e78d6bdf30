"""Which generated binding the kit decodes with, and how it is found.

The bundled bindings (`v1`, `v2`) ship inside the wheel as `acpgen/_bundled/acp_v1` and
`acpgen/_bundled/acp_v2` (see pyproject's force-include); in a checkout they are read from
`generated/`. A schema file given with `--schema` is generated once into a cache folder keyed by
the schema's sha256 and the acpgen version, then imported from there. Each binding is imported
under a private module name, so it never clashes with a package the user has installed."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import acpgen

BUNDLED = {"v1": "acp_v1", "v2": "acp_v2"}
"""--protocol names of the bundled bindings (the package names are accepted too)."""


class BindingError(Exception):
    """The binding could not be found, generated or imported; the message says what to do.
    `usage` is true when the options themselves are wrong (exit 2, not 3)."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class Binding:
    """A loaded binding: its package module and the tables the kit reads."""

    name: str
    module: ModuleType
    protocol_version: int

    @property
    def agent_methods(self) -> Any:
        """What the agent handles: wire method -> MethodInfo."""
        return self.module.AGENT_METHODS

    @property
    def client_methods(self) -> Any:
        """What the client handles: wire method -> MethodInfo."""
        return self.module.CLIENT_METHODS

    def decode(self, def_name: str, data: object) -> object:
        return self.module.decode(def_name, data)

    @property
    def validation_error(self) -> type[Exception]:
        error: type[Exception] = self.module.ValidationError
        return error


def bundled_dir(package: str) -> Path | None:
    """The folder of a bundled binding: inside the installed package, else the checkout's generated/."""
    here = Path(acpgen.__file__).resolve().parent
    for candidate in (here / "_bundled" / package, here.parent / "generated" / package):
        if (candidate / "__init__.py").is_file():
            return candidate
    return None


def import_package(folder: Path, alias: str) -> ModuleType:
    """Import the generated package in `folder` under the module name `alias`."""
    if alias in sys.modules:
        return sys.modules[alias]
    spec = importlib.util.spec_from_file_location(
        alias, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise BindingError(f"{folder}: not an importable package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[alias]
        raise BindingError(f"{folder}: the generated package failed to import: {exc}") from exc
    return module


def cache_root() -> Path:
    """ACPGEN_CACHE_DIR, else $XDG_CACHE_HOME/acpgen/kit, else ~/.cache/acpgen/kit."""
    explicit = os.environ.get("ACPGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "acpgen" / "kit"


def generate_into_cache(schema: Path) -> Path:
    """Build a binding for `schema` (and its unstable companion, when found) into the cache."""
    from acpgen.config import schema_target
    from acpgen.pipeline import build

    if not schema.is_file():
        raise BindingError(f"{schema}: no such schema file (give a schema.json, or --protocol v1|v2)", usage=True)
    digest = hashlib.sha256(schema.read_bytes())
    companion = schema.with_name(schema.name.replace(".json", ".unstable.json"))
    if companion != schema and companion.is_file():
        digest.update(companion.read_bytes())
    digest.update(acpgen.__version__.encode())
    folder = cache_root() / f"schema_{digest.hexdigest()[:16]}"
    if (folder / "__init__.py").is_file():
        return folder
    target = schema_target(schema, package=folder.name, name="kit", output=folder)
    result = build(target)
    if not result.ok:
        errors = [d.render() for d in result.diagnostics if d.level == "error"]
        raise BindingError(
            f"{schema}: could not generate a binding:\n  " + "\n  ".join(errors[:10])
        )
    return folder


def load_binding(schema: Path | None = None, target: str | None = None) -> Binding:
    """The binding for `--schema FILE` or `--protocol NAME` (default: the bundled v1)."""
    if schema is not None and target is not None:
        raise BindingError("give --schema or --protocol, not both", usage=True)
    if schema is not None:
        folder = generate_into_cache(schema)
        name = f"{schema.name} ({folder.name})"
    else:
        key = target or "v1"
        package = BUNDLED.get(key, key)
        if package not in BUNDLED.values():
            raise BindingError(
                f"no bundled binding named {key!r} (bundled: {', '.join(BUNDLED)}); "
                "use --schema FILE for another schema", usage=True
            )
        found = bundled_dir(package)
        if found is None:
            raise BindingError(
                f"the bundled binding {package} is missing from this installation; reinstall acpgen"
            )
        folder, name = found, package
    module = import_package(folder, f"_acpgen_kit_{folder.name}")
    version = getattr(module, "PROTOCOL_VERSION", None)
    return Binding(name=name, module=module, protocol_version=int(version or 1))
