"""The compiled-template cache changes nothing but speed: same bytes with and without it, an edited
template is recompiled, and a cache folder that cannot be used is skipped, never an error."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from acpgen.config import Target
from acpgen.pipeline import generate
from acpgen.render import builtin_templates, make_environment
from acpgen.render.cache import bytecode_cache
from tests.conftest import ROOT

SCHEMA = ROOT / "schema" / "v0_4" / "schema.json"


def build(tmp_path: Path, templates: Path | None = None) -> dict[str, str]:
    target = Target(name="p", schema=SCHEMA, output=tmp_path / "out", package="p", templates=templates)
    result = generate(target)
    assert result.ok and result.files is not None
    return result.files


def test_cached_builds_match_uncached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPGEN_NO_CACHE", "1")
    plain = build(tmp_path)
    monkeypatch.delenv("ACPGEN_NO_CACHE")
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(tmp_path / "cache"))
    assert build(tmp_path) == plain  # cold: compiles and stores
    stored = list((tmp_path / "cache").rglob("*.cache"))
    assert len(stored) >= 6
    assert build(tmp_path) == plain  # warm: loads the stored code
    folder = stored[0].parent
    assert folder.stat().st_mode & 0o777 == 0o700


def test_an_edited_template_is_recompiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(tmp_path / "cache"))
    user = tmp_path / "templates"
    user.mkdir()
    shutil.copy(builtin_templates() / "header.j2", user / "header.j2")
    first = build(tmp_path, user)
    (user / "header.j2").write_text("# edited header\n" + (user / "header.j2").read_text())
    second = build(tmp_path, user)
    assert "# edited header" not in first["models.py"]
    assert second["models.py"].startswith("# edited header")


def test_an_unusable_cache_folder_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(blocker))
    assert bytecode_cache(()) is None
    assert make_environment().bytecode_cache is None
    build(tmp_path)
    shared = tmp_path / "shared"
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(shared))
    cache = bytecode_cache(("x",))
    assert cache is not None
    folder = Path(cache.directory)
    os.chmod(folder, 0o777)  # others could write code there: never load from it
    assert bytecode_cache(("x",)) is None
