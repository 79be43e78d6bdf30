"""The committed generated/ is the snapshot of each vendored schema version."""

from __future__ import annotations

import pytest

from acpgen.config import load_config
from acpgen.diagnostics import Diagnostics
from acpgen.pipeline import generate
from tests.conftest import ROOT

TARGETS = {t.name: t for t in load_config(ROOT / "pyproject.toml", Diagnostics())}


@pytest.mark.parametrize("package", sorted(TARGETS))
def test_snapshot(package: str, generated_snapshot) -> None:  # type: ignore[no-untyped-def]
    result = generate(TARGETS[package])
    assert result.ok, [d.render() for d in result.diagnostics if d.level == "error"]
    assert result.files is not None
    for name, text in sorted(result.files.items()):
        if name.endswith(".py"):
            assert text == generated_snapshot(name=name[:-3])
