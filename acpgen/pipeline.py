"""load -> ir -> render -> format -> write, with diagnostics collected at every stage."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from acpgen.config import Target
from acpgen.diagnostics import Diagnostic, Diagnostics
from acpgen.ir import IrOptions, build_package
from acpgen.load import load_schema
from acpgen.render import render_package
from acpgen.render.format import format_sources
from acpgen.write import read_tree, recover, write_tree


@dataclass
class Result:
    target: Target
    files: dict[str, str] | None
    diagnostics: list[Diagnostic]

    @property
    def ok(self) -> bool:
        return self.files is not None and not any(d.level == "error" for d in self.diagnostics)


def generate(target: Target) -> Result:
    """Everything but the write: the files the target should contain, or the reasons it cannot."""
    loaded, reports = load_schema(
        target.schema,
        target.unstable if target.include_unstable else None,
        target.meta,
        find_companion=target.find_unstable,
    )
    diagnostics = [d for r in reports for d in r.items]
    if loaded is None:
        return Result(target, None, diagnostics)
    options = IrOptions(
        package=target.package,
        renames=target.rename,
        defaults=target.defaults,
        hooks=target.hooks,
        include_unstable=target.include_unstable,
        keep_unknown=target.keep_unknown,
        protocol_version=target.protocol_version,
    )
    package, ir_diags = build_package(loaded, options)
    diagnostics += ir_diags.items
    if package is None:
        return Result(target, None, diagnostics)
    stage = Diagnostics(str(target.templates or "templates"))
    files = render_package(package, target.command, stage, target.templates)
    if files is not None:
        files = format_sources(files, stage)
    diagnostics += stage.items
    return Result(target, files, diagnostics)


def build(target: Target) -> Result:
    result = generate(target)
    if result.files is None:
        return result
    diags = Diagnostics(str(target.output))
    if not write_tree(target.output, result.files, diags, allow_foreign=target.allow_foreign):
        result.files = None
    result.diagnostics += diags.items
    return result


def stale_files(target: Target, files: dict[str, str]) -> tuple[list[str], str]:
    """Files on disk that differ from `files`, and a unified diff of the difference. A swap that a
    killed build left half done is finished or undone first, as the next build would."""
    recover(target.output)
    on_disk = read_tree(target.output)
    stale: list[str] = []
    diff: list[str] = []
    for name in sorted(set(files) | set(on_disk)):
        old, new = on_disk.get(name), files.get(name)
        if old == new:
            continue
        stale.append(name)
        path = f"{target.output}/{name}"
        diff += difflib.unified_diff(
            (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
            fromfile=f"{path} (on disk)" if old is not None else "/dev/null",
            tofile=f"{path} (generated)" if new is not None else "/dev/null",
        )
    return stale, "".join(diff)
