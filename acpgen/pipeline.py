"""load -> ir -> render -> format -> write, with diagnostics collected at every stage."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from acpgen.config import Target
from acpgen.diagnostics import Diagnostic, Diagnostics
from acpgen.ir import IrOptions, build_package
from acpgen.ir.model import Package
from acpgen.load import load_schema
from acpgen.render import render_package, runtime_outputs
from acpgen.render.format import format_sources
from acpgen.write import check_foreign, output_problem, read_tree, recover, write_tree


@dataclass
class Result:
    """What a build stage gives back: the files (None when it failed) and every diagnostic."""

    target: Target
    files: dict[str, str] | None
    diagnostics: list[Diagnostic]

    @property
    def ok(self) -> bool:
        return self.files is not None and not any(d.level == "error" for d in self.diagnostics)


# Deeply nested schemas recurse deeply (JSON parsing, the meta-schema check, the IR, rendering): the
# stages run in a thread with a large stack and a high recursion limit, and the loader refuses
# documents nested deeper than acpgen.load.MAX_DEPTH, so RecursionError is never reached in practice.
STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 60_000
T = TypeVar("T")


def run_deep(stage: Callable[[], T]) -> T:
    """Run `stage` in a thread with a deep stack and a high recursion limit; return what it
    returns, or raise what it raised."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(stage())
        except BaseException as exc:  # raised again in the calling thread
            failure.append(exc)

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        threading.stack_size(STACK_BYTES)
        sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
        worker = threading.Thread(target=run, name="acpgen-build")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if outcome:
        return outcome[0]
    raise failure[0] if failure else RuntimeError("the build thread ended without a result")


def failure_diagnostics(file: str, exc: BaseException) -> list[Diagnostic]:
    """An exception that escaped a stage, as the diagnostic the CLI prints instead of a traceback
    (KeyboardInterrupt is raised again)."""
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    diags = Diagnostics(file)
    if isinstance(exc, RecursionError):
        diags.error("too-deep", "", "the schema nests too deeply to generate code for",
                    "flatten the schema: move nested object schemas into `$defs` and reference them")
    else:
        diags.error("internal-error", "", f"acpgen failed on this schema: {type(exc).__name__}: {exc}",
                    "this is a bug in acpgen; please report it with the schema (the previous output is untouched)")
    return diags.items


def guarded(target: Target, stage: Callable[[], Result]) -> Result:
    """Run a stage so that no exception becomes a traceback: a deep stack, and any failure
    reported as a diagnostic on the schema file (the previous output is untouched)."""
    try:
        return run_deep(stage)
    except BaseException as exc:  # reported as a diagnostic
        return Result(target, None, failure_diagnostics(str(target.schema), exc))


def load_ir(target: Target) -> tuple[Package | None, list[Diagnostic]]:
    """Load the target's schema files and build its IR: the one path `build`, `check`, `diff` and
    the kit share. None (with the reasons among the diagnostics) when a stage failed."""
    loaded, reports = load_schema(
        target.schema,
        target.unstable if target.include_unstable else None,
        target.meta,
        find_companion=target.find_unstable,
    )
    diagnostics = [d for r in reports for d in r.items]
    if loaded is None:
        return None, diagnostics
    options = IrOptions(
        package=target.package,
        renames=target.rename,
        defaults=target.defaults,
        hooks=target.hooks,
        include_unstable=target.include_unstable,
        keep_unknown=target.keep_unknown,
        protocol_version=target.protocol_version,
        error_codes=target.error_codes,
    )
    package, ir_diags = build_package(loaded, options)
    return package, diagnostics + ir_diags.items


def generate(target: Target) -> Result:
    """Everything but the write: the files the target should contain, or the reasons it cannot."""
    return guarded(target, lambda: generate_unguarded(target))


def generate_unguarded(target: Target) -> Result:
    inputs = [p for p in (target.schema, target.unstable, target.meta, target.templates) if p is not None]
    problem = output_problem(target.output, inputs)
    if problem is not None:
        diags = Diagnostics(str(target.output))
        diags.error(problem[0], "", problem[1], problem[2])
        return Result(target, None, diags.items)
    package, diagnostics = load_ir(target)
    if package is None:
        return Result(target, None, diagnostics)
    stage = Diagnostics(str(target.templates or "templates"))
    files = render_package(package, target.command, stage, target.templates)
    if files is not None:
        files = format_sources(files, stage, runtime_outputs())
    diagnostics += stage.items
    return Result(target, files, diagnostics)


def build(target: Target) -> Result:
    return guarded(target, lambda: build_unguarded(target))


def build_unguarded(target: Target) -> Result:
    result = generate_unguarded(target)
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
    return compare_tree(target, files)


def check_target(target: Target) -> tuple[Result, list[str], str]:
    """What `acpgen check` does for one target: generate in memory, refuse what `build` would
    refuse (a folder holding foreign files), and compare with the files on disk."""
    result = generate(target)
    if not result.ok or result.files is None:
        return result, [], ""
    diags = Diagnostics(str(target.output))
    recover(target.output)
    if not check_foreign(target.output, diags, target.allow_foreign):
        result.diagnostics += diags.items
        result.files = None
        return result, [], ""
    stale, diff = compare_tree(target, result.files)
    return result, stale, diff


def compare_tree(target: Target, files: dict[str, str]) -> tuple[list[str], str]:
    import difflib  # only `check` compares

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
