"""The test kit works from the built wheel alone: the bundled v1 and v2 bindings are inside it,
`conform` and its fake agent run from it, and `--schema FILE` generates a binding into the cache
with the wheel's own templates."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("kitwheel")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp / "dist"), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    wheel = next((tmp / "dist").glob("acpgen-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp / "site")
    for package in ("acp_v1", "acp_v2"):
        for name in ("__init__.py", "models.py", "methods.py", "rpc.py"):
            assert f"acpgen/_bundled/{package}/{name}" in names
    return tmp / "site"


def wheel_env(site: Path, **extra: str) -> dict[str, str]:
    # The unpacked wheel comes first on the path (before the editable checkout), in every child too.
    return {**os.environ, "PYTHONPATH": str(site), **extra}


def test_bundled_bindings_load_from_the_wheel(site: Path, tmp_path: Path) -> None:
    code = ("import json, acpgen; from acpgen.kit.bindings import load_binding; "
            "out = {t: load_binding(target=t).module.__file__ for t in ('v1', 'v2')}; "
            "out['acpgen'] = acpgen.__file__; print(json.dumps(out))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env=wheel_env(site), timeout=120)
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)
    assert files["acpgen"].startswith(str(site))
    assert files["v1"] == str(site / "acpgen" / "_bundled" / "acp_v1" / "__init__.py")
    assert files["v2"] == str(site / "acpgen" / "_bundled" / "acp_v2" / "__init__.py")


def test_conform_client_runs_from_the_wheel(site: Path, tmp_path: Path) -> None:
    client = tmp_path / "client.py"
    shutil.copy(ROOT / "tests" / "kit" / "faulty_client.py", client)
    result = subprocess.run([sys.executable, "-m", "acpgen", "conform", "client", "--json", str(tmp_path / "r.json"),
                             "--", sys.executable, str(client)],
                            cwd=tmp_path, capture_output=True, text=True, env=wheel_env(site), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["schema"] == "acp_v1" and report["counts"]["pass"] >= 15


def test_schema_option_generates_a_binding_into_the_cache(site: Path, tmp_path: Path) -> None:
    schema_dir = tmp_path / "schemas"
    schema_dir.mkdir()
    shutil.copy(ROOT / "schema" / "v1" / "schema.json", schema_dir / "schema.json")
    code = ("import sys; from pathlib import Path; from acpgen.kit.bindings import load_binding; "
            "b = load_binding(schema=Path(sys.argv[1])); "
            "print(b.module.__file__); print(sorted(b.agent_methods)[:3])")
    cache = tmp_path / "cache"
    result = subprocess.run([sys.executable, "-c", code, str(schema_dir / "schema.json")], cwd=tmp_path,
                            capture_output=True, text=True, env=wheel_env(site, ACPGEN_CACHE_DIR=str(cache)), timeout=300)
    assert result.returncode == 0, result.stderr
    first, methods = result.stdout.splitlines()
    assert first.startswith(str(cache))
    assert "'authenticate'" in methods and "'initialize'" in methods
    # A second load reuses the cached package (nothing regenerated).
    stamp = {p: p.stat().st_mtime_ns for p in cache.rglob("*.py")}
    again = subprocess.run([sys.executable, "-c", code, str(schema_dir / "schema.json")], cwd=tmp_path,
                           capture_output=True, text=True, env=wheel_env(site, ACPGEN_CACHE_DIR=str(cache)), timeout=300)
    assert again.returncode == 0 and {p: p.stat().st_mtime_ns for p in cache.rglob("*.py")} == stamp
