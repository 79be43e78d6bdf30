"""Stage 5: put the output in place so that a reader sees the old tree or the new one, never a mix.

The new tree is written into a temporary sibling folder and swapped in with two renames; the
previous tree is kept aside until the swap is done and put back if a build was cut off between
the two renames. acpgen owns only the files its manifest lists.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from acpgen.diagnostics import Diagnostics

MANIFEST = ".acpgen-manifest.json"
DERIVED = ("__pycache__",)


def manifest_of(files: dict[str, str]) -> str:
    entries = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in sorted(files.items())}
    return json.dumps({"generator": "acpgen", "files": entries}, indent=2, sort_keys=True) + "\n"


def owned_files(target: Path) -> set[str] | None:
    """Names the manifest in `target` lists; None when there is no readable manifest."""
    try:
        data = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
        return set(data["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def foreign_entries(target: Path) -> list[str]:
    """Entries of `target` that acpgen did not write."""
    if not target.exists():
        return []
    owned = owned_files(target) or set()
    return sorted(
        p.name for p in target.iterdir()
        if p.name not in owned and p.name != MANIFEST and p.name not in DERIVED
    )


def aside_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.acpgen-old")


def recover(target: Path) -> None:
    """Finish or undo a swap that a killed build left half done."""
    target = real_folder(target)
    aside = aside_path(target)
    if aside.exists():
        if target.exists():
            shutil.rmtree(aside)
        else:
            os.replace(aside, target)


def real_folder(target: Path) -> Path:
    """The folder a build writes: a symlinked output folder is followed, so the folder it points
    to is updated and the link stays a link."""
    return Path(os.path.realpath(target))


def output_problem(target: Path, inputs: list[Path]) -> tuple[str, str, str] | None:
    """(code, message, hint) when `target` cannot be an output folder: an existing file, the
    filesystem root, or a folder holding one of the build's own inputs."""
    real = real_folder(target)
    if real.exists() and not real.is_dir():
        return ("output-not-a-folder", f"the output {target} is a file, not a folder",
                "pass -o/--output a folder (it is created when missing), e.g. -o generated/acp")
    if real.parent == real:
        return ("output-is-root", f"the output {target} is the filesystem root",
                "pass -o/--output a folder of its own, e.g. -o generated/acp")
    for path in inputs:
        source = Path(os.path.realpath(path))
        if source == real or real in source.parents:
            return ("output-holds-input", f"the output folder {target} holds {path}, an input of this build",
                    "write the package to a folder of its own, e.g. -o generated/acp; the whole folder is replaced on every build")
    other = nested_output(real)
    if other is not None:
        shown = os.path.relpath(other) if other.is_relative_to(Path.cwd()) else other.as_posix()
        return ("output-nested",
                f"the output folder {target} {'is inside' if other in real.parents else 'holds'} {shown}, "
                f"the output of another acpgen build: each build replaces its whole folder",
                "give each package a folder of its own, side by side, e.g. -o generated/acp_a and -o generated/acp_b")
    return None


def nested_output(real: Path) -> Path | None:
    """Another acpgen output (a folder with a manifest) that holds `real` or lies inside it."""
    for parent in real.parents:
        if (parent / MANIFEST).is_file():
            return parent
    if not real.is_dir():
        return None
    for root, dirs, files in os.walk(real):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)) and d != "__pycache__")
        if root != str(real) and MANIFEST in files:
            return Path(root)
    return None


def check_foreign(target: Path, diags: Diagnostics, allow_foreign: bool) -> bool:
    """False (and an error) when `target` holds files acpgen did not write and that is not allowed:
    `build` refuses such a folder, so `check` does too."""
    foreign = foreign_entries(real_folder(target))
    if foreign and not allow_foreign:
        diags.error(
            "foreign-files", "",
            f"{target} holds files acpgen did not write: {', '.join(foreign[:10])}",
            "move them elsewhere, pick another output folder, or pass --allow-foreign to keep them beside the output",
        )
        return False
    return True


def write_tree(target: Path, files: dict[str, str], diags: Diagnostics, *, allow_foreign: bool = False) -> bool:
    target = real_folder(target)
    recover(target)
    foreign = foreign_entries(target)
    if not check_foreign(target, diags, allow_foreign):
        return False
    staging = target.with_name(f".{target.name}.acpgen-new")
    try:
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
        for name, text in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        (staging / MANIFEST).write_text(manifest_of(files), encoding="utf-8")
        for name in [*foreign, *DERIVED]:
            source = target / name
            if source.is_dir():
                shutil.copytree(source, staging / name)
            elif source.exists():
                shutil.copy2(source, staging / name)
        aside = aside_path(target)
        if target.exists():
            os.replace(target, aside)
        os.replace(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        recover(target)
        diags.error("write-failed", "", f"could not write {target}: {exc}",
                    "the previous output is unchanged; check the folder's permissions and free space")
        return False
    # The new tree is in place: failing to delete the old one must not report the build as failed
    # (and "unchanged"); the next build or check removes what is left of it.
    try:
        if aside.exists():
            shutil.rmtree(aside)
    except OSError:
        pass
    return True


def read_tree(target: Path) -> dict[str, str]:
    """The files acpgen owns in `target`, as they are on disk now."""
    target = real_folder(target)
    owned = owned_files(target)
    if owned is None:
        return {}
    out = {}
    for name in owned:
        try:
            out[name] = (target / name).read_text(encoding="utf-8")
        except OSError:
            continue
    return out
