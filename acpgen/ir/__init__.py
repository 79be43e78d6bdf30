"""Stage 2: turn a loaded schema into the frozen IR (acpgen.ir.model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acpgen.diagnostics import Diagnostics
from acpgen.ir.build import Builder, StableIndex, check_keywords, check_unenforced, export_aliases
from acpgen.ir.checks import census_of, referenced
from acpgen.ir.companion import narrowings
from acpgen.ir.cycles import check_required_cycles
from acpgen.ir.methods import collect_methods
from acpgen.ir.model import Package, SchemaSource
from acpgen.ir.protocol import derive_protocol, negotiating_method, protocol_version
from acpgen.load import LoadedSchema, SchemaFile


@dataclass(frozen=True)
class IrOptions:
    """What the IR build takes besides the schema: names, renames, defaults, hooks and switches."""

    package: str
    renames: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, str] = field(default_factory=dict)
    include_unstable: bool = True
    keep_unknown: bool = False
    protocol_version: int | None = None
    error_codes: dict[str, int] = field(default_factory=dict)  # data type pointer -> error code (config)


def build_package(loaded: LoadedSchema, options: IrOptions) -> tuple[Package | None, Diagnostics]:
    """Build the stable IR, then (when merging) the unstable one marked against it."""
    stable_file = loaded.stable
    diags = Diagnostics(str(stable_file.path))
    unstable_file = loaded.unstable if options.include_unstable else None
    stable = Builder(stable_file.document, diags, options.renames, defaults=options.defaults, hooks=options.hooks,
                     reference=unstable_file is not None, census=census(stable_file))
    stable.build()
    stable_methods = collect_methods(stable_file.document, stable.defs_key, diags, meta=None)
    builder, chosen = stable, stable_file
    methods = stable_methods
    if unstable_file is not None:
        diags = Diagnostics(str(unstable_file.path))
        builder = Builder(unstable_file.document, diags, options.renames,
                          stable=StableIndex.of(stable.nodes), defaults=options.defaults, hooks=options.hooks,
                          census=census(unstable_file))
        builder.build()
        for pointer, stable_pointer, what in narrowings(stable.nodes, builder.nodes):
            diags.error(
                "unstable-narrows", pointer,
                f"{what}: the merged package would reject input the stable schema accepts "
                f"(stable: {stable_file.path}#{stable_pointer})",
                "the unstable companion may only add; fix it, or build the stable schema alone (--no-unstable)")
        chosen = unstable_file
        methods = collect_methods(
            unstable_file.document, builder.defs_key, diags,
            stable_methods={(m.wire, m.notification) for m in stable_methods}, meta=loaded.meta,
            meta_file=loaded.meta_file, meta_strict=not loaded.meta_found,
        )
    elif loaded.meta is not None:
        methods = collect_methods(stable_file.document, stable.defs_key, diags, meta=loaded.meta,
                                  meta_file=loaded.meta_file, meta_strict=not loaded.meta_found)
    check_required_cycles(builder.nodes, diags)
    checked = tuple(sorted(n.check for n in builder.nodes.values() if n.check))
    check_keywords(chosen.document, diags, checked)
    check_unenforced(chosen.document, diags, checked)
    aliases = export_aliases(builder.nodes, diags)
    protocol = derive_protocol(builder.nodes, builder.def_types, methods, options.error_codes, diags)
    stable_diags = Diagnostics(str(stable_file.path))  # the version is the release's, named by its stable file
    version = protocol_version(options.protocol_version, loaded.meta, loaded.meta_file, stable_diags,
                               negotiates=negotiating_method(builder.nodes, builder.def_types, methods))
    diags.items.extend(stable_diags.items)
    if diags.errors:
        return None, diags
    sources = [SchemaSource(stable_file.name, stable_file.sha256)]
    if unstable_file is not None:
        sources.append(SchemaSource(unstable_file.name, unstable_file.sha256))
    title = str(chosen.document.get("title", ""))
    package = Package(
        name=options.package,
        sources=tuple(sources),
        title=title,
        nodes=tuple(sorted(builder.nodes.values(), key=lambda n: n.name)),
        defs=tuple(sorted(builder.def_types.items())),
        methods=tuple(methods),
        protocol_version=version,
        options=(("keep_unknown", options.keep_unknown),),
        export_aliases=aliases,
        checked_schema=referenced(chosen.document, builder.defs_key, checked) if checked else "",
        protocol=protocol,
    )
    return package, diags


def census(file: SchemaFile) -> tuple[bool, bool] | None:
    """What the loader's walk found that the Builder's checks need (None: it did not look)."""
    if file.nested_dialect is None or file.patterns is None:
        return None
    return census_of(file.nested_dialect, file.patterns)


__all__ = ["IrOptions", "build_package"]
