"""`acpgen diff OLD NEW`: what changed between two schema versions, and whom each change breaks.

Both sides are built into the IR (the same names the generated package uses), then compared node
by node. Every change gets two verdicts:

- **wire**: which deployed peers stop understanding the other side. The direction a type travels
  comes from the method table (`x-side`): the params of a method the agent handles go
  client -> agent, its result agent -> client, and so on transitively through fields, items,
  union variants and aliases. A change that makes *new senders* produce what old receivers reject
  breaks the old receivers; one that makes new receivers reject what old senders produce breaks the
  old senders. A type that travels both ways gets both.
- **source**: whether code written against the old generated package stops type-checking or
  running: a class, attribute, enum member or handler removed or renamed, an annotation changed,
  a constructor argument that became required.

A wire-breaking change also gets its **outcomes** (`outcome.py`): what the receiving version's
generated decoder does with the message, found along every path from a method to the changed type
(the first leniency annotation on the way drops the item or defaults the field; none rejects the
message; a closed union's default variant may take an unknown tag and misread it).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from acpgen.config import Target, schema_target
from acpgen.diagnostics import Diagnostic
from acpgen.diff.compare import diff_packages
from acpgen.diff.model import (
    CHANGE_KINDS,
    CLASSIFICATIONS,
    FAIL_ON,
    JSON_FORMAT,
    Change,
    Report,
    SideInfo,
)
from acpgen.diff.render import RENDERERS, render_json, render_markdown, render_text
from acpgen.ir.model import Package
from acpgen.load.loader import UNSTABLE_SUFFIX

__all__ = [
    "CHANGE_KINDS", "CLASSIFICATIONS", "FAIL_ON", "JSON_FORMAT", "RENDERERS", "Change", "Report", "SideInfo",
    "build_side", "diff_packages", "diff_targets", "file_target", "render_json", "render_markdown", "render_text",
]



def build_side(target: Target) -> tuple[Package | None, list[Diagnostic]]:
    """Load and build the IR of one side (no rendering): the same steps `acpgen build` takes."""
    from acpgen.pipeline import load_ir

    return load_ir(target)


def file_target(schema: Path, no_unstable: bool = False) -> Target:
    """A schema file given on the command line. `X.json` is merged with `X.unstable.json` beside it
    unless `no_unstable` (as `acpgen build` does); `X.unstable.json` stands for `X.json` merged with
    it (when `X.json` exists), so the items only it defines are marked unstable."""
    name = schema.name
    if name.endswith(UNSTABLE_SUFFIX):
        stable = schema.with_name(name[: -len(UNSTABLE_SUFFIX)] + ".json")
        if stable.is_file():
            return schema_target(stable, package="diff", name=schema.stem, output=Path(), unstable=schema)
    return schema_target(schema, package="diff", name=schema.stem, output=Path(), no_unstable=no_unstable)


def sources_of(package: Package) -> tuple[tuple[str, str], ...]:
    return tuple((s.file, s.sha256) for s in package.sources)


def diff_targets(old: Target, new: Target, old_label: str, new_label: str,
                 ignore_unstable: bool = False) -> tuple[Report | None, list[Diagnostic]]:
    """Build both sides and compare them; None and the diagnostics when either side fails. As
    `acpgen build`, no exception becomes a traceback: it is a diagnostic naming both files."""
    from acpgen.pipeline import failure_diagnostics, run_deep

    try:
        return run_deep(lambda: diff_targets_unguarded(old, new, old_label, new_label, ignore_unstable))
    except BaseException as exc:  # reported as a diagnostic
        return None, failure_diagnostics(f"{old.schema} -> {new.schema}", exc)


def diff_targets_unguarded(old: Target, new: Target, old_label: str, new_label: str,
                           ignore_unstable: bool = False) -> tuple[Report | None, list[Diagnostic]]:
    if ignore_unstable:
        old = dataclasses.replace(old, include_unstable=False, find_unstable=False, unstable=None)
        new = dataclasses.replace(new, include_unstable=False, find_unstable=False, unstable=None)
    old_pkg, old_diags = build_side(old)
    new_pkg, new_diags = build_side(new)
    diagnostics = old_diags + new_diags
    if old_pkg is None or new_pkg is None or any(d.level == "error" for d in diagnostics):
        return None, diagnostics
    report = Report(SideInfo(old_label, sources_of(old_pkg)), SideInfo(new_label, sources_of(new_pkg)),
                    ignore_unstable, tuple(diff_packages(old_pkg, new_pkg)))
    return report, diagnostics
