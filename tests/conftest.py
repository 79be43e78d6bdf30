"""Shared fixtures: the generated packages on sys.path, and a snapshot store that is generated/."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))


class GeneratedTreeExtension(SingleFileSnapshotExtension):
    """Snapshots stored as the committed generated package itself: `generated/<pkg>/<name>.py`.

    The test id carries the package (`test_snapshot[acp_v1]`); the snapshot name is the module.
    So there is one copy of the output, and `pytest --snapshot-update` rewrites it in place.
    """

    _write_mode = WriteMode.TEXT
    file_extension = "py"

    @classmethod
    def get_snapshot_name(cls, *, test_location, index=0) -> str:  # type: ignore[no-untyped-def]
        return str(index)

    @classmethod
    def dirname(cls, *, test_location) -> str:  # type: ignore[no-untyped-def]
        _, _, param = test_location.nodename.partition("[")
        return str(GENERATED / param.rstrip("]")) if param else str(GENERATED / ".snapshot-discovery-disabled")

    @classmethod
    def discovery_dirname(cls, *, test_location) -> str:  # type: ignore[no-untyped-def]
        # Never scan generated/ for "unused" snapshots: py.typed, the manifest and tool caches live
        # there too, and `--snapshot-update` would delete them. acpgen's manifest owns the tree.
        return str(GENERATED / ".snapshot-discovery-disabled")


@pytest.fixture
def generated_snapshot(snapshot):  # type: ignore[no-untyped-def]
    return snapshot.use_extension(GeneratedTreeExtension)
