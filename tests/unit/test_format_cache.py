"""The formatted-code cache (acpgen.render.format.FormatCache) changes nothing but speed: the same
bytes with and without it; ruff runs only on what it has not formatted before; a damaged entry, an
unusable folder or another ruff is a miss, never an error or a wrong output."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from acpgen.config import Target
from acpgen.diagnostics import Diagnostics
from acpgen.pipeline import generate
from acpgen.render import format as format_stage
from tests.conftest import ROOT

SCHEMA = ROOT / "schema" / "v1" / "schema.json"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(folder))
    monkeypatch.delenv("ACPGEN_NO_CACHE", raising=False)
    return folder


@pytest.fixture
def ruff_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The file names of every ruff run."""
    runs: list[list[str]] = []
    real = format_stage.run_ruff

    def counted(texts: dict[str, str], diags: Diagnostics) -> Any:
        runs.append(sorted(texts))
        return real(texts, diags)

    monkeypatch.setattr(format_stage, "run_ruff", counted)
    return runs


def build(tmp_path: Path) -> dict[str, str]:
    result = generate(Target(name="p", schema=SCHEMA, output=tmp_path / "out", package="p"))
    assert result.ok and result.files is not None
    return result.files


def entries(cache_dir: Path) -> list[Path]:
    return [p for p in cache_dir.glob("ruff-*/*") if not p.name.startswith(".")]


def test_a_rebuild_formats_nothing_and_gives_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_dir: Path, ruff_runs: list[list[str]]
) -> None:
    monkeypatch.setenv("ACPGEN_NO_CACHE", "1")
    plain = build(tmp_path)
    assert len(ruff_runs) == 1 and not list(cache_dir.glob("ruff-*"))
    monkeypatch.delenv("ACPGEN_NO_CACHE")
    assert build(tmp_path) == plain  # cold: ruff runs, the parts are stored
    assert len(ruff_runs) == 2 and any(".py." in name for name in ruff_runs[1])  # models.py in pieces
    stored = entries(cache_dir)
    assert len(stored) == len(ruff_runs[1])
    assert stored[0].parent.stat().st_mode & 0o777 == 0o700
    assert build(tmp_path) == plain  # warm: ruff does not run
    assert len(ruff_runs) == 2


def test_a_changed_module_formats_only_its_changed_pieces(
    cache_dir: Path, ruff_runs: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(format_stage, "PIECE_BYTES", 1024)
    text = "".join(f"class C{i}:\n    x   = {i}\n\n\n" for i in range(400))
    first = format_stage.format_sources({"m.py": text}, Diagnostics("t"))
    pieces = len(ruff_runs[0])
    assert pieces > 4
    at = text.index("class C200:")
    changed = text[:at] + "class Added:\n    y =  1\n\n\n" + text[at:]
    second = format_stage.format_sources({"m.py": changed}, Diagnostics("t"))
    assert len(ruff_runs) == 2 and len(ruff_runs[1]) <= 2  # the piece that grew (and a new cut)
    assert first is not None and second is not None
    assert second["m.py"] == first["m.py"].replace("class C200:", "class Added:\n    y = 1\n\n\nclass C200:")
    monkeypatch.setenv("ACPGEN_NO_CACHE", "1")
    assert format_stage.format_sources({"m.py": changed}, Diagnostics("t")) == second


def test_a_damaged_entry_is_a_miss(tmp_path: Path, cache_dir: Path, ruff_runs: list[list[str]]) -> None:
    plain = build(tmp_path)
    for entry in entries(cache_dir):
        check, _, text = entry.read_text(encoding="utf-8").partition("\n")
        entry.write_text(f"{check}\n{text}import os  # not what ruff wrote\n", encoding="utf-8")
    assert build(tmp_path) == plain
    assert len(ruff_runs) == 2 and len(ruff_runs[1]) == len(ruff_runs[0])


def test_another_ruff_has_a_folder_of_its_own(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, ruff_runs: list[list[str]]
) -> None:
    build(tmp_path)
    real = format_stage.ruff_binary()
    other = tmp_path / "ruff"
    other.symlink_to(real)
    monkeypatch.setattr(format_stage, "ruff_binary", lambda: str(other))
    build(tmp_path)
    assert len(ruff_runs) == 2 and len(list(cache_dir.glob("ruff-*"))) == 2
    build(tmp_path)  # warm for that one too
    assert len(ruff_runs) == 2


def test_an_unusable_folder_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ruff_runs: list[list[str]]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(blocker))
    assert format_stage.FormatCache.open() is None
    first = build(tmp_path)
    assert build(tmp_path) == first and len(ruff_runs) == 2
    shared = tmp_path / "shared"
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(shared))
    cache = format_stage.FormatCache.open()
    assert cache is not None
    os.chmod(cache.folder, 0o777)  # others could put code there: never take it into a package
    assert format_stage.FormatCache.open() is None


def test_the_oldest_entries_go_beyond_the_limit(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_stage, "FORMAT_CACHE_ENTRIES", 8)
    cache = format_stage.FormatCache.open()
    assert cache is not None
    for i in range(12):
        cache.put({f"x = {i}\n": f"x = {i}\n"})
        os.utime(cache.folder / format_stage.digest(f"x = {i}\n"), ns=(i * 10**9, i * 10**9))
    kept = {p.name for p in entries(cache_dir)}
    assert 6 <= len(kept) <= 8
    assert format_stage.digest("x = 11\n") in kept and format_stage.digest("x = 0\n") not in kept
    assert cache.get("x = 11\n") == "x = 11\n" and cache.get("x = 0\n") is None
