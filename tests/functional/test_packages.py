"""Facts every generated package must keep: the uniform entry points, the method table, names."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys

import pytest

from tests.conftest import GENERATED, ROOT

PACKAGES = ["acp_v0_4", "acp_v1", "acp_v2"]
SCHEMAS = {"acp_v0_4": ["v0_4/schema.json"], "acp_v1": ["v1/schema.json", "v1/schema.unstable.json"],
           "acp_v2": ["v2/schema.json", "v2/schema.unstable.json"]}


def defs_of(package: str) -> dict[str, object]:
    doc = json.loads((ROOT / "schema" / SCHEMAS[package][-1]).read_text())
    return doc["$defs"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_def_has_a_type_and_decoder(package: str) -> None:
    pkg = importlib.import_module(package)
    assert set(pkg.TYPES) == set(defs_of(package))
    assert set(pkg.DECODERS) == set(pkg.TYPES)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_x_method_is_in_the_method_table(package: str) -> None:
    pkg = importlib.import_module(package)
    table = {(m.method, m.params_def) for m in pkg.METHODS} | {(m.method, m.result_def) for m in pkg.METHODS}
    for name, schema in defs_of(package).items():
        if isinstance(schema, dict) and "x-method" in schema:
            assert (schema["x-method"], name) in table, name
    for info in pkg.METHODS:
        assert info.params is pkg.TYPES[info.params_def]
        assert info.notification == (info.result is None)


def test_v1_method_table_facts() -> None:
    import acp_v1

    by_name = {(m.method, m.notification): m for m in acp_v1.METHODS}
    prompt = by_name[("session/prompt", False)]
    assert (prompt.side, prompt.params_def, prompt.result_def, prompt.unstable) == (
        "agent", "PromptRequest", "PromptResponse", False)
    update = by_name[("session/update", True)]
    assert (update.side, update.result) == ("client", None)
    assert by_name[("$/cancel_request", True)].side == "protocol"
    assert by_name[("session/fork", False)].unstable
    assert by_name[("session/fork", False)].handler == "session_fork"


@pytest.mark.parametrize("package", PACKAGES)
def test_no_class_name_ends_in_a_digit(package: str) -> None:
    source = (GENERATED / package / "models.py").read_text()
    defs = set(defs_of(package))
    for name in re.findall(r"^class (\w+)", source, re.M):
        assert not name[-1].isdigit() or name in defs, name


@pytest.mark.parametrize("package", PACKAGES)
def test_unstable_marking(package: str) -> None:
    pkg = importlib.import_module(package)
    if package == "acp_v0_4":
        assert frozenset() == pkg.UNSTABLE_TYPES
        return
    stable = json.loads((ROOT / "schema" / SCHEMAS[package][0]).read_text())["$defs"]
    assert frozenset(defs_of(package)) - frozenset(stable) == pkg.UNSTABLE_TYPES


def test_generated_code_passes_mypy_strict_and_ruff() -> None:
    # The examples are checked in the same run: they are the generated API's first users.
    examples = [str(ROOT / "examples" / name) for name in (
        "agent.py", "client.py", "agent_v2.py", "client_versions.py", "agent_router.py", "remote_agent.py")]
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version",
                           "3.10", *PACKAGES, *examples], cwd=GENERATED, capture_output=True, text=True)
    assert mypy.returncode == 0, mypy.stdout[-3000:]
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--target-version", "py310",
         "--select", "E,F,W,I,UP,B,C4,SIM,RUF,PIE,N,ANN,PYI,TID,T20", "--ignore", "E501", *PACKAGES],
        cwd=GENERATED, capture_output=True, text=True)
    assert ruff.returncode == 0, ruff.stdout[-3000:]


def test_generated_packages_import_only_the_standard_library() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import acp_v0_4, acp_v1, acp_v2;"
        "import acp_v1.asgi, acp_v1.remote, acp_v2.asgi, acp_v2.remote;"  # remote transports: lazy imports
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('jinja2','jsonschema','referencing','typer','pydantic','acpgen',"
        "  'httpx','h2','websockets','uvicorn','hypercorn'));"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(GENERATED)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
