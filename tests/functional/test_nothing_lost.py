"""Nothing lost: a build that fails at any stage leaves the previous output byte-identical, and a
build killed while it writes leaves the complete old or the complete new output, never a mix;
the next build or check finishes the job.

Failures are injected from the test (monkeypatching the function a stage calls, or a stand-in
formatter); acpgen has no test-only hooks.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from acpgen import write
from acpgen.config import Target
from acpgen.diagnostics import Diagnostics
from acpgen.pipeline import build, generate
from acpgen.render import format as format_stage
from tests.conftest import ROOT

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tiny",
    "$defs": {
        "Greeting": {"type": "object", "properties": {"text": {"type": "string"}, "count": {"type": "integer"}},
                     "required": ["text"]},
        "Mood": {"oneOf": [{"const": "happy"}, {"const": "sad"}]},
    },
}


def tree_digest(folder: Path, siblings: bool = True) -> dict[str, str]:
    """sha256 of every file under `folder` (relative path -> hex), and the folder's siblings (so a
    staging or set-aside folder left behind shows)."""
    out = {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
           for p in sorted(folder.rglob("*")) if p.is_file()}
    if siblings:
        out["<siblings>"] = ",".join(sorted(p.name for p in folder.parent.iterdir()))
    return out


def make_target(tmp_path: Path, schema: dict[str, Any] | None = None, **extra: Any) -> Target:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema or SCHEMA), encoding="utf-8")
    return Target(name="pkg", schema=path, output=tmp_path / "out" / "pkg", package="pkg",
                  include_unstable=False, find_unstable=False, command="acpgen build schema.json", **extra)


@pytest.fixture
def built(tmp_path: Path) -> tuple[Target, dict[str, str]]:
    target = make_target(tmp_path)
    result = build(target)
    assert result.ok, [d.render() for d in result.diagnostics]
    # A second schema version, so that a build that wrongly went through would change the bytes.
    changed = json.loads(json.dumps(SCHEMA))
    changed["$defs"]["Greeting"]["properties"]["extra"] = {"type": "boolean"}
    target.schema.write_text(json.dumps(changed), encoding="utf-8")
    return target, tree_digest(target.output)


def assert_failed_and_untouched(result: Any, target: Target, before: dict[str, str], code: str) -> None:
    assert not result.ok
    assert code in {d.code for d in result.diagnostics if d.level == "error"}, [d.render() for d in result.diagnostics]
    assert tree_digest(target.output) == before


def test_load_failure_leaves_the_output(built: tuple[Target, dict[str, str]]) -> None:
    target, before = built
    target.schema.write_text("{ not json", encoding="utf-8")
    assert_failed_and_untouched(build(target), target, before, "invalid-json")


def test_ir_failure_leaves_the_output(built: tuple[Target, dict[str, str]]) -> None:
    target, before = built
    # `a-b` and `a_b` both become the class name `AB`.
    target.schema.write_text(json.dumps({**SCHEMA, "$defs": {"a-b": {"type": "string"}, "a_b": {"type": "string"}}}))
    assert_failed_and_untouched(build(target), target, before, "name-collision")


def test_render_failure_leaves_the_output(built: tuple[Target, dict[str, str]], tmp_path: Path) -> None:
    target, before = built
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "models.py.j2").write_text("{{ no_such_variable }}\n", encoding="utf-8")
    broken = Target(**{**target.__dict__, "templates": templates})
    assert_failed_and_untouched(build(broken), target, before, "template-error")


@pytest.mark.parametrize("crash", ["exit 3", "segfault", "missing binary", "hangs"])
def test_formatter_crash_leaves_the_output(built: tuple[Target, dict[str, str]], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, crash: str) -> None:
    target, before = built
    fake = tmp_path / "fake-ruff"
    body = {
        "exit 3": "print('ruff: internal error', file=sys.stderr); sys.exit(3)",
        "segfault": "os.kill(os.getpid(), signal.SIGSEGV)",
        "hangs": "time.sleep(30)",
    }.get(crash)
    if body is not None:
        fake.write_text(f"#!{sys.executable}\nimport os, signal, sys, time\n{body}\n", encoding="utf-8")
        fake.chmod(0o755)
    monkeypatch.setattr(format_stage, "ruff_binary", lambda: str(fake))
    if crash == "hangs":
        real_run = subprocess.run
        monkeypatch.setattr(format_stage.subprocess, "run", lambda *a, **k: real_run(*a, **{**k, "timeout": 1}))
    result = build(target)
    assert_failed_and_untouched(result, target, before, "formatter-failed")
    assert "Traceback" not in "".join(d.message for d in result.diagnostics)


def fs_operations() -> list[tuple[Any, str]]:
    """The filesystem calls write_tree makes (module attribute, name), each a place to fail."""
    return [(write, "open"), (write.os, "replace"), (write.shutil, "rmtree"), (write.shutil, "copytree"),
            (write.shutil, "copy2"), (write.Path, "mkdir"), (write.Path, "write_text")]


def test_a_write_failing_at_any_step_leaves_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = make_target(tmp_path)
    assert build(target).ok
    (target.output / "__pycache__").mkdir(exist_ok=True)
    (target.output / "__pycache__" / "models.cpython-311.pyc").write_bytes(b"derived")
    pristine = tmp_path / "pristine"
    shutil.copytree(target.output, pristine)
    changed = json.loads(json.dumps(SCHEMA))
    changed["$defs"]["Mood"]["oneOf"].append({"const": "calm"})
    target.schema.write_text(json.dumps(changed))
    files = generate(target).files
    assert files is not None
    before = tree_digest(target.output)

    def write_failing_at(index: int) -> tuple[bool, Diagnostics, list[str]]:
        """write_tree with the index-th filesystem call raising ENOSPC (-1: none does)."""
        calls: list[str] = []

        def failing(real: Any, name: str) -> Any:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                calls.append(name)
                if len(calls) - 1 == index:
                    raise OSError(28, "No space left on device (injected)")
                return real(*args, **kwargs)

            return wrapper

        diags = Diagnostics()
        with monkeypatch.context() as patch:
            for owner, name in fs_operations():
                real = builtins.open if name == "open" else getattr(owner, name)
                patch.setattr(owner, name, failing(real, name), raising=False)
            ok = write.write_tree(target.output, files, diags)
        return ok, diags, calls

    ok, _, calls = write_failing_at(-1)
    assert ok
    steps = len(calls)
    assert steps > len(files)
    for index in range(steps):
        shutil.rmtree(target.output)
        shutil.copytree(pristine, target.output)
        ok, diags, calls = write_failing_at(index)
        if ok:  # only removing the old tree, after the swap, may fail without failing the build
            assert calls[index] == "rmtree" and write.read_tree(target.output) == files, (index, calls)
            assert write.write_tree(target.output, files, Diagnostics())  # and the next one tidies up
            assert sorted(p.name for p in target.output.parent.iterdir()) == ["pkg"]
            continue
        assert [d.code for d in diags.errors] == ["write-failed"], index
        assert tree_digest(target.output) == before, (index, calls[index])


CHILD = textwrap.dedent("""
    import json, os, random, sys, time
    from pathlib import Path
    from acpgen import write
    from acpgen.diagnostics import Diagnostics

    target, files_path, seed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    files = json.loads(Path(files_path).read_text())
    rng = random.Random(seed)
    # Slow every filesystem step down a little so that a kill lands inside the write at a varied
    # step; the code under test is unchanged.
    def slowly(fn):
        def wrapper(*args, **kwargs):
            time.sleep(rng.uniform(0, 0.004))
            return fn(*args, **kwargs)
        return wrapper
    write.os.replace = slowly(os.replace)
    write.shutil.rmtree = slowly(write.shutil.rmtree)
    write.open = slowly(open)
    print("writing", flush=True)
    write.write_tree(target, files, Diagnostics())
    print("done", flush=True)
""")


def test_a_killed_write_leaves_old_or_new_and_the_next_build_recovers(tmp_path: Path) -> None:
    target = tmp_path / "out" / "pkg"
    old = {f"module_{i}.py": f"OLD = {i}\n" * 50 for i in range(40)}
    new = {f"module_{i}.py": f"NEW = {i}\n" * 50 for i in range(40)} | {"added.py": "NEW = True\n"}
    assert write.write_tree(target, old, Diagnostics())
    old_digest = tree_digest(target, siblings=False)
    files = tmp_path / "new.json"
    files.write_text(json.dumps(new))
    rng = random.Random(20261130)
    outcomes: dict[str, int] = {}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for round_ in range(12):
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(target), str(files), str(round_)],
                                stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        assert proc.stdout.readline() == "writing\n"
        time.sleep(rng.uniform(0, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not target.exists():
            state = "missing"  # killed between the two renames: the old tree is aside
        elif tree_digest(target, siblings=False) == old_digest:
            state = "old"
        else:
            state = "new"
            assert write.read_tree(target) == new, f"round {round_}: a mix of old and new"
        write.recover(target)
        assert tree_digest(target, siblings=False) == old_digest or write.read_tree(target) == new, round_
        outcomes[state] = outcomes.get(state, 0) + 1
        # The next build completes the job and leaves nothing beside the output.
        assert write.write_tree(target, new if round_ % 2 else old, Diagnostics())
        assert sorted(p.name for p in target.parent.iterdir()) == ["pkg"]
        if not round_ % 2:
            assert tree_digest(target, siblings=False) == old_digest
    assert len(outcomes) >= 2, outcomes  # the kills landed at different moments


def test_check_finishes_a_swap_a_killed_build_left_half_done(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    args = ["build", str(schema), "-o", str(tmp_path / "pkg"), "--package", "pkg", "--no-unstable"]
    run = [sys.executable, "-m", "acpgen"]
    assert subprocess.run([*run, *args], capture_output=True, cwd=tmp_path).returncode == 0
    before = tree_digest(tmp_path / "pkg")
    # The state between the two renames of a swap: the old tree aside, no output folder.
    os.replace(tmp_path / "pkg", tmp_path / ".pkg.acpgen-old")
    check = subprocess.run([*run, "check", *args[1:]], capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert tree_digest(tmp_path / "pkg") == before
