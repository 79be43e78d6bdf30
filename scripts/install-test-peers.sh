#!/usr/bin/env bash
# What the test suite needs beside the `test` extra, each pinned by this repository's own files:
# the official TypeScript SDK (tests/peers/package-lock.json), codex-acp and acpx
# (tests/peers/agents-npm/package-lock.json), acp-factory (tests/peers/factory-npm/package-lock.json), the Python SDK 1.0 pre-release in a
# venv of its own (its import name is that of 0.12.1, which .venv holds), and the real agents of the
# interop layer in another (fast-agent-mcp needs Python >= 3.12 and pins its own SDK and pydantic).
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --prefix tests/peers --no-audit --no-fund
# codex-acp and acpx (266 MB). `npm install` with the lock file, not `npm ci`: acpx's dependency
# @openclaw/fs-safe names its platform packages without versions, which `npm ci` reports as a lock
# out of sync; the lock still pins every version installed.
npm install --prefix tests/peers/agents-npm --no-audit --no-fund --no-save
npm ci --prefix tests/peers/factory-npm --no-audit --no-fund  # acp-factory (10 MB)
python3 -m venv .venv-sdk1 && .venv-sdk1/bin/pip install -q --pre -r tests/peers/requirements-sdk1.txt
PY312=""
for candidate in python3 python3.14 python3.13 python3.12 \
    $(ls -d "$(pyenv root 2>/dev/null)"/versions/3.1[234]*/bin/python3 2>/dev/null); do
  if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then PY312=$candidate; break; fi
done
[ -n "$PY312" ] || { echo "install-test-peers: no Python >= 3.12 for .venv-agents (tests/interop/test_real_agents.py)" >&2; exit 1; }
"$PY312" -m venv .venv-agents && .venv-agents/bin/pip install -q -r tests/peers/requirements-agents.txt
