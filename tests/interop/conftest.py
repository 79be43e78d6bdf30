"""The interop layer's marker: `real_agents` marks the tests that start real, independently
written agents (tests/interop/test_real_agents.py); `pytest -m "not real_agents"` leaves them out."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_agents: drives real ACP agents installed in .venv-agents")
