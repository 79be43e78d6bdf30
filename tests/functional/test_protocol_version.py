"""The protocol version a package speaks is stated (option, config key, meta.json) or said to be
unknown; a package that does not know it never echoes what a client asks for."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT

ACPGEN = [sys.executable, "-m", "acpgen"]


def build(tmp_path: Path, name: str, *args: str, meta: object = None) -> tuple[ModuleType, str]:
    """Build schema/v2 (stable + unstable) as package `name` in tmp_path and import it."""
    folder = tmp_path / f"src_{name}"
    folder.mkdir()
    for file in ("schema.json", "schema.unstable.json"):
        shutil.copy(ROOT / "schema/v2" / file, folder / file)
    if meta is not None:
        (folder / "meta.json").write_text(json.dumps(meta))
    out = tmp_path / "out" / name
    run = subprocess.run([*ACPGEN, "build", str(folder / "schema.json"), "-o", str(out), *args],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    sys.path.insert(0, str(out.parent))
    try:
        return importlib.import_module(name), run.stderr
    finally:
        sys.path.remove(str(out.parent))


def test_the_option_states_the_version(tmp_path: Path) -> None:
    pkg, stderr = build(tmp_path, "pv_option", "--protocol-version", "2")
    assert "protocol-version-unknown" not in stderr
    assert pkg.SUPPORTED_PROTOCOL_VERSIONS == (2,)
    assert pkg.negotiate_protocol_version(2) == 2
    assert pkg.negotiate_protocol_version(1001) == 2  # the latest it speaks, never the echo
    assert "--protocol-version 2" in (tmp_path / "out/pv_option/connections.py").read_text().splitlines()[1]


def test_meta_json_beside_the_schema_states_the_version(tmp_path: Path) -> None:
    pkg, stderr = build(tmp_path, "pv_meta", meta={"version": 2})
    assert "protocol-version-unknown" not in stderr
    assert pkg.SUPPORTED_PROTOCOL_VERSIONS == (2,)
    assert pkg.negotiate_protocol_version(1001) == 2


def test_option_and_meta_disagreeing_is_a_warning_and_the_option_wins(tmp_path: Path) -> None:
    pkg, stderr = build(tmp_path, "pv_both", "--protocol-version", "3", meta={"version": 2})
    assert "meta.json#/version: warning[protocol-version-mismatch]" in stderr
    assert pkg.SUPPORTED_PROTOCOL_VERSIONS == (3,)


def test_a_meta_version_that_is_no_version_is_a_located_warning(tmp_path: Path) -> None:
    pkg, stderr = build(tmp_path, "pv_badmeta", meta={"version": "2"})
    assert "meta.json#/version: warning[bad-meta-version]" in stderr
    assert "warning[protocol-version-unknown]" in stderr
    assert pkg.SUPPORTED_PROTOCOL_VERSIONS == ()


def test_unknown_version_warns_and_never_echoes(tmp_path: Path) -> None:
    pkg, stderr = build(tmp_path, "pv_none")
    assert "schema.json: warning[protocol-version-unknown]" in stderr
    assert "--protocol-version N" in stderr
    assert pkg.SUPPORTED_PROTOCOL_VERSIONS == ()
    with pytest.raises(pkg.RequestError) as caught:
        pkg.negotiate_protocol_version(1001)
    assert caught.value.code == -32603
    assert "without a protocol version" in caught.value.message + str(caught.value.data)
    # ... and cannot route: the router's names are not exported, and router.py says why when used
    assert not hasattr(pkg, "agent_route") and "agent_route" not in pkg.__all__
    router = importlib.import_module("pv_none.router")
    with pytest.raises(router.NotRoutableError, match="without a protocol version"):
        router.agent_route(pkg.Agent())
    with pytest.raises(router.NotRoutableError):
        router.client_route(pkg.Client(), pkg.InitializeRequest(protocol_version=2, info=pkg.Implementation(name="t", version="0")))


def test_one_version_for_several_configured_targets_is_refused() -> None:
    run = subprocess.run([*ACPGEN, "check", "--protocol-version", "2"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2
    assert "option --protocol-version: error[bad-option]" in run.stderr
