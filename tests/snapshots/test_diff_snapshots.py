"""`acpgen diff` on the vendored releases, in all three formats, locked as plain snapshot files in
tests/snapshots/__snapshots__/test_diff_snapshots/ (`pytest --snapshot-update` rewrites them); and the CLI
around it: exit codes, `--fail-on`, targets and bad input."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from typer.testing import CliRunner, Result

from acpgen.cli import app
from acpgen.config import Target
from acpgen.diff import RENDERERS, Report, SideInfo, build_side, diff_packages, file_target
from acpgen.ir.model import Package
from tests.conftest import ROOT

# (OLD, NEW, --no-unstable, --ignore-unstable) as one would type them at the repository root.
PAIRS = {
    "v0_4-to-v1": ("schema/v0_4/schema.json", "schema/v1/schema.json", False, True),
    "v1-stable-to-v1-unstable": ("schema/v1/schema.json", "schema/v1/schema.unstable.json", True, False),
    "v1-to-v2": ("schema/v1/schema.json", "schema/v2/schema.json", False, False),
    # Release pairs (tests/diff_pairs/README.md says which schema release each file stands for).
    **{f"release-{pair}": (f"tests/diff_pairs/{old}/schema.json", f"tests/diff_pairs/{new}/schema.json", False, False)
       for pair, (old, new) in {
           "0.4.11-to-0.6.3": ("sdk-0.4.9", "sdk-0.5.1"), "0.11.7-to-0.12.2": ("sdk-0.19.0", "sdk-0.20.0"),
           "0.12.2-to-0.13.0": ("sdk-0.20.0", "sdk-0.22.0"), "1.0.0-to-1.3.0": ("sdk-1.0.0", "sdk-1.2.0"),
           "1.5.0-to-1.7.0": ("sdk-1.3.0", "sdk-1.4.0")}.items()},
}
FORMATS = {"text": "txt", "markdown": "md", "json": "json"}


class DiffSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT


EXTENSIONS = {fmt: type(f"DiffSnapshot_{ext}", (DiffSnapshot,), {"file_extension": ext})
              for fmt, ext in FORMATS.items()}


@functools.cache
def package(path: str, no_unstable: bool, ignore_unstable: bool) -> Package:
    target = file_target(ROOT / path, no_unstable)
    if ignore_unstable:
        target = Target(**{**target.__dict__, "include_unstable": False, "find_unstable": False, "unstable": None})
    built, diagnostics = build_side(target)
    assert built is not None, [d.render() for d in diagnostics]
    return built


@functools.cache
def report(pair: str) -> Report:
    old, new, no_unstable, ignore_unstable = PAIRS[pair]
    a, b = package(old, no_unstable, ignore_unstable), package(new, no_unstable, ignore_unstable)

    def side(label: str, p: Package) -> SideInfo:
        return SideInfo(label, tuple((s.file, s.sha256) for s in p.sources))

    return Report(side(old, a), side(new, b), ignore_unstable, tuple(diff_packages(a, b)))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_real_pair(pair: str, fmt: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    assert RENDERERS[fmt](report(pair)) == snapshot.use_extension(EXTENSIONS[fmt])


def test_json_output_is_stable_and_matches_the_report() -> None:
    r = report("v1-to-v2")
    data = json.loads(RENDERERS["json"](r))
    assert data["format"] == "acpgen-diff/1"
    assert set(data) == {"format", "old", "new", "ignore_unstable", "summary", "changes"}
    assert sum(data["summary"].values()) == len(data["changes"]) == len(r.changes)
    assert {tuple(sorted(c)) for c in data["changes"]} == {(
        "breaks", "classification", "detail", "directions", "kind", "outcomes", "path", "source_breaking", "unstable")}
    for c in data["changes"]:
        # a protocol rule is acted on by the runtime, not the decoders: no decoder outcome to state
        decoded = not c["kind"].startswith("protocol-rule-")
        assert bool(c["outcomes"]) == (c["classification"] == "wire-breaking" and decoded), c
        assert all(set(o) == {"receivers", "outcome", "at"} and o["at"] for o in c["outcomes"]), c
    # Facts from the release notes of v2, as the diff reports them.
    by_key = {(c["kind"], c["path"]): c for c in data["changes"]}
    assert by_key[("method-removed", "session/load")]["breaks"] == "old clients"
    assert by_key[("method-removed", "fs/read_text_file")]["breaks"] == "old agents"
    assert by_key[("method-added", "tool_call/cancel")]["classification"] == "compatible"
    assert by_key[("enum-openness-changed", "ToolKind")]["breaks"] == "old clients"
    assert by_key[("enum-openness-changed", "ToolKind")]["outcomes"] == [
        {"receivers": "old clients", "outcome": "defaults",
         "at": ["ToolCall.kind", "ToolCallSessionUpdate.kind", "ToolCallUpdate.kind", "ToolCallUpdateSessionUpdate.kind"]}]


# -- the command line ----------------------------------------------------------------------------


def acpgen(args: list[str], cwd: Path = ROOT, seed: str = "0") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "acpgen", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONHASHSEED": seed})


def in_process(args: list[str], monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(ROOT)
    return CliRunner().invoke(app, args)


def test_cli_prints_the_snapshot_under_any_hash_seed_and_fails_on_breaking_changes() -> None:
    old, new, _, ignore_unstable = PAIRS["v0_4-to-v1"]
    assert ignore_unstable
    args = ["diff", old, new, "--ignore-unstable", "--format", "markdown"]
    expected = RENDERERS["markdown"](report("v0_4-to-v1"))
    for seed in ("1", "4242"):
        result = acpgen([*args, "--fail-on", "breaking"], seed=seed)
        assert result.returncode == 1, result.stderr
        assert result.stdout == expected
        assert "Traceback" not in result.stderr


def test_cli_targets_and_exit_0_without_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    result = in_process(["diff", "acp_v0_4", "acp_v0_4", "--fail-on", "any", "--format", "json"], monkeypatch)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["changes"] == [] and data["old"]["label"] == "target acp_v0_4 (schema.json)"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["diff", "missing.json", "schema/v1/schema.json"],
         "missing.json: error[bad-argument]: OLD is neither a schema file nor a configured target (targets in pyproject.toml: acp_v1, acp_v2, acp_v0_4)"),
        (["diff", "schema/v1/schema.json", "acp_v9"], "acp_v9: error[bad-argument]: NEW is neither a schema file nor a configured target"),
        (["diff", "schema", "schema/v1/schema.json"], "schema: error[bad-argument]: OLD is a folder; give a schema file"),
        (["diff", "acp_v1", "acp_v2", "--format", "yaml"], "option --format: error[bad-option]: --format must be one of text, markdown, json, not 'yaml'"),
        (["diff", "acp_v1", "acp_v2", "--fail-on", "all"], "option --fail-on: error[bad-option]: --fail-on must be one of breaking, source, any, not 'all'"),
    ],
)
def test_cli_bad_arguments_exit_2(args: list[str], needle: str, monkeypatch: pytest.MonkeyPatch) -> None:
    result = in_process(args, monkeypatch)
    assert result.exit_code == 2
    assert needle in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_cli_bad_schema_exits_2_with_file_and_pointer(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"$defs": {"A": {"$ref": "#/$defs/Missing"}}}')
    result = acpgen(["diff", str(ROOT / "schema/v0_4/schema.json"), str(bad)], cwd=tmp_path)
    assert result.returncode == 2
    assert f"{bad}#/$defs/A/$ref: error[unresolvable-ref]" in result.stderr
    assert "nothing compared" in result.stderr and "Traceback" not in result.stderr


def test_docs_excerpt_is_real_output() -> None:
    readme = (ROOT / "docs" / "diff.md").read_text()
    excerpt = readme.split("the whole output is `tests/snapshots/__snapshots__/test_diff_snapshots/test_real_pair[v1-to-v2-text].txt`):", 1)[1]
    excerpt = excerpt.split("```text\n", 1)[1].split("```", 1)[0]
    output = RENDERERS["text"](report("v1-to-v2")).splitlines()
    lines = [line for line in excerpt.splitlines() if line.strip()]
    assert len(lines) >= 8
    for line in lines:
        assert line in output, line


@pytest.mark.parametrize("failure", [RuntimeError("boom"), RecursionError("maximum recursion depth exceeded")])
def test_a_failure_inside_the_comparison_is_a_diagnostic_not_a_traceback(
        failure: BaseException, monkeypatch: pytest.MonkeyPatch) -> None:
    """As `acpgen build`, `acpgen diff` turns whatever escapes its stages into a located diagnostic
    (exit 2) instead of a traceback."""
    import acpgen.diff

    def broken(old: Package, new: Package) -> list[object]:
        raise failure

    monkeypatch.setattr(acpgen.diff, "diff_packages", broken)
    result = in_process(["diff", "acp_v0_4", "acp_v1"], monkeypatch)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr and result.stdout == ""
    code = "too-deep" if isinstance(failure, RecursionError) else "internal-error"
    assert f"error[{code}]" in result.stderr, result.stderr
    assert "schema/v0_4/schema.json -> " in result.stderr and "schema/v1/schema.json" in result.stderr
