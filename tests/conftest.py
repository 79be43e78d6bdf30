"""Shared fixtures: the generated packages on sys.path, a snapshot store that is generated/, and
what keeps the suite safe to run in parallel (pytest-xdist, `-n auto` in pyproject's addopts)."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))


def pytest_configure(config: pytest.Config) -> None:
    # syrupy decides per process which snapshots are unused (it does not support xdist): a worker
    # would see the snapshots of the files another worker ran as unused, and `--snapshot-update`
    # deletes unused ones. So an update runs in one process (xdist's pytest_configure runs last).
    if config.getoption("update_snapshots", False) and getattr(config.option, "dist", "no") != "no":
        config.option.dist = "no"
        config.option.numprocesses = 0
        config.option.tx = []


# The files that take longest in a parallel run (measured with --durations), longest first. They run
# first: pyproject's addopts hold `--dist loadfile --no-loadscope-reorder`, so xdist hands out whole
# files in collection order (its default reorder is by number of tests, which put the few-test,
# long-waiting kit files last), and a long file that starts last keeps one worker busy while the
# other has finished. The rest keep their order. A file missing here only runs later.
LONGEST_FIRST = (
    "corpus/test_acp_releases.py",
    "kit/test_kit_conform.py",
    "interop/test_real_agents.py",
    "interop/test_interop_sdk1.py",
    "corpus/test_property.py",
    "kit/test_kit_gate.py",
    "corpus/test_corpus.py",
    "corpus/test_hostile_schemas.py",
    "interop/test_interop.py",
    "functional/test_build_cli.py",
    "corpus/test_schema_safety.py",
    "kit/test_kit_replay.py",
    "interop/test_interop_v2.py",
    "snapshots/test_diff_outcomes.py",
    "remote/test_remote_security.py",
    "corpus/test_real_schemas.py",
)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {ROOT / "tests" / name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path, len(rank)))  # stable: each file keeps its order


def pytest_collection_finish(session: pytest.Session) -> None:
    # The runtime tests call gc.collect() after each run (an "exception was never retrieved" is
    # reported only when its future is collected), and a full collection scans every object alive in
    # the process: with the whole suite imported and collected, about 0.3 s a call. What collection
    # built lives to the end of the run anyway; frozen, it is left out of every later scan, while
    # everything a test creates is still collected.
    gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """acpgen's caches (compiled templates, the kit's generated bindings) in a folder of this
    process, for the test run and every process it starts: parallel workers never share one, and
    the suite never writes to the user's ~/.cache."""
    saved = os.environ.get("ACPGEN_CACHE_DIR")
    os.environ["ACPGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("acpgen-cache"))
    yield
    if saved is None:
        os.environ.pop("ACPGEN_CACHE_DIR", None)
    else:
        os.environ["ACPGEN_CACHE_DIR"] = saved


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
