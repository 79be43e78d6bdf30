"""`[tool.acpgen]` as a user's project has it: the messages of bad configs, and the build / check
cycle of a configured project (fresh, after a schema change, after a hand edit)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from acpgen.cli import app
from tests.conftest import ROOT

TARGET = """
[tool.acpgen.targets.acp]
schema = "schema/schema.json"
output = "src/acp"
"""


def project(tmp_path: Path, config: str) -> Path:
    (tmp_path / "schema").mkdir()
    shutil.copy(ROOT / "schema/v0_4/schema.json", tmp_path / "schema/schema.json")
    (tmp_path / "pyproject.toml").write_text(config)
    return tmp_path


def acpgen(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize(
    ("config", "messages"),
    [
        pytest.param(TARGET + 'shema = "x.json"\n', [
            "pyproject.toml#/tool/acpgen/targets/acp/shema: error[config-unknown-key]: unknown key `tool.acpgen.targets.acp.shema`",
            "hint: known keys: allow_foreign, defaults, error_codes, hooks, include_unstable, keep_unknown, meta, output, "
            "package, protocol_version, rename, schema, templates, unstable",
        ], id="unknown-target-key"),
        pytest.param("[tool.acpgen]\nverbose = true\n" + TARGET, [
            "pyproject.toml#/tool/acpgen/verbose: error[config-unknown-key]: unknown key `tool.acpgen.verbose`",
        ], id="unknown-top-key"),
        pytest.param(TARGET + 'include_unstable = "yes"\n', [
            "pyproject.toml#/tool/acpgen/targets/acp/include_unstable: error[config-bad-value]: "
            "`tool.acpgen.targets.acp.include_unstable` must be true or false, got 'yes'",
        ], id="wrong-type"),
        pytest.param(TARGET + 'error_codes = { "/$defs/X" = "-32002" }\n', [
            "`tool.acpgen.targets.acp.error_codes.'/$defs/X'` must be an integer error code, got '-32002'",
        ], id="error-code-not-int"),
        pytest.param(TARGET + "protocol_version = true\n", [
            "`tool.acpgen.targets.acp.protocol_version` must be an integer, got True",
        ], id="bool-is-not-int"),
        pytest.param('[tool.acpgen.targets.acp]\noutput = "src/acp"\n', [
            "pyproject.toml#/tool/acpgen/targets/acp: error[config-missing-key]: `tool.acpgen.targets.acp` needs `schema`",
            "hint: add `schema = ...`: a path to schema.json",
        ], id="missing-schema-key"),
        pytest.param(TARGET.replace("schema/schema.json", "schema/missing.json"), [
            "pyproject.toml#/tool/acpgen/targets/acp/schema: error[config-missing-path]: "
            "`tool.acpgen.targets.acp.schema` names 'schema/missing.json', which is not an existing file",
        ], id="missing-schema-file"),
        pytest.param(TARGET + 'templates = "my-templates"\n', [
            "pyproject.toml#/tool/acpgen/targets/acp/templates: error[config-missing-path]: "
            "`tool.acpgen.targets.acp.templates` names 'my-templates', which is not an existing folder",
        ], id="missing-templates-folder"),
        pytest.param(TARGET + 'package = "my-acp"\n', [
            "`tool.acpgen.targets.acp.package` 'my-acp' cannot name a package: it is not a Python identifier",
        ], id="bad-package"),
        pytest.param(TARGET + 'rename = { "/$defs/ToolKind" = "tool kind" }\n', [
            "`tool.acpgen.targets.acp.rename.'/$defs/ToolKind'` must be a Python identifier that is not a keyword, got 'tool kind'",
        ], id="bad-rename"),
        pytest.param("[tool.black]\nline-length = 1\n", [
            "pyproject.toml#/tool/acpgen: error[config-missing]: no [tool.acpgen] table",
        ], id="no-table"),
        pytest.param("[tool.acpgen\n", ["pyproject.toml: error[config-invalid-toml]: invalid TOML"], id="bad-toml"),
    ],
)
def test_config_errors_name_the_key_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, messages: list[str]
) -> None:
    project(tmp_path, config)
    for command in (["build"], ["check"]):
        result = acpgen(command, tmp_path, monkeypatch)
        assert result.exit_code == 2, result.output
        for message in messages:
            assert message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "src").exists()


def test_unknown_target_lists_the_known_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path, TARGET)
    result = acpgen(["build", "--target", "acp_v9"], tmp_path, monkeypatch)
    assert result.exit_code == 2
    assert "pyproject.toml: error[unknown-target]: no target named acp_v9 (known: acp)" in result.stderr


def test_missing_pyproject_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = acpgen(["check"], tmp_path, monkeypatch)
    assert result.exit_code == 2
    assert "error[config-unreadable]: cannot read pyproject.toml" in result.stderr
    assert "pass --config FILE, or give a schema file" in result.stderr


def test_check_fresh_then_schema_change_then_hand_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path, TARGET)
    built = acpgen(["build"], tmp_path, monkeypatch)
    assert built.exit_code == 0, built.stderr
    assert "[1/1] acp: wrote" in built.stdout

    fresh = acpgen(["check"], tmp_path, monkeypatch)
    assert fresh.exit_code == 0, fresh.stderr
    assert "acp: src/acp is up to date" in fresh.stdout

    # A protocol update: the schema gains a value; the committed package is now stale.
    schema_path = tmp_path / "schema/schema.json"
    schema = json.loads(schema_path.read_text())
    schema["$defs"]["ToolKind"]["oneOf"].append({"const": "browse", "description": "Browsing the web."})
    schema_path.write_text(json.dumps(schema, indent=2))
    stale = acpgen(["check"], tmp_path, monkeypatch)
    assert stale.exit_code == 1
    listed = next(line for line in stale.stderr.splitlines() if "is stale:" in line)
    # models.py gains the member, and every module's provenance header names the new sha256.
    assert listed.startswith("acp: src/acp is stale: ")
    modules = {p.name for p in (tmp_path / "src/acp").glob("*.py")}
    assert {"models.py", "methods.py", "__init__.py"} <= modules
    assert set(listed.split(": ", 2)[2].split(", ")) == modules
    assert "+    BROWSE = 'browse'" in stale.stdout or '+    BROWSE = "browse"' in stale.stdout
    assert "run `acpgen build --target acp` to regenerate" in stale.stderr

    assert acpgen(["build"], tmp_path, monkeypatch).exit_code == 0
    assert acpgen(["check"], tmp_path, monkeypatch).exit_code == 0

    # A hand edit of a generated file is stale too, and only that file is listed.
    models = tmp_path / "src/acp/models.py"
    models.write_text(models.read_text().replace('"""Browsing the web."""', '"""Edited."""'))
    edited = acpgen(["check", "--quiet"], tmp_path, monkeypatch)
    assert edited.exit_code == 1
    assert "acp: src/acp is stale: models.py\n" in edited.stderr
    assert edited.stdout == ""  # --quiet: the list, not the diff


def test_pre_commit_hook_runs_the_check_command() -> None:
    """No YAML parser is a dependency: read the one hook's flat `key: value` lines."""
    lines = (ROOT / ".pre-commit-hooks.yaml").read_text().splitlines()
    hooks = [line for line in lines if line.startswith("- ")]
    assert len(hooks) == 1
    fields = dict(line.lstrip("- ").split(": ", 1) for line in lines if line.strip() and not line.startswith("#"))
    assert fields["id"] == "acpgen-check"
    assert fields["entry"] == "acpgen check"
    assert fields["language"] == "python"
    assert fields["pass_filenames"] == "false"
    command = fields["entry"].split()[1]
    assert command in {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    readme = (ROOT / "README.md").read_text()
    assert "      - id: acpgen-check" in readme


# -- provenance and output safety of a configured build ------------------------------------------


def test_every_module_names_acpgen_the_schema_sha256_and_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    from acpgen import __version__

    project(tmp_path, TARGET)
    assert acpgen(["build"], tmp_path, monkeypatch).exit_code == 0
    digest = hashlib.sha256((tmp_path / "schema/schema.json").read_bytes()).hexdigest()
    modules = sorted((tmp_path / "src/acp").glob("*.py"))
    assert len(modules) >= 5
    for module in modules:
        head = module.read_text().splitlines()[:2]
        assert head == [f"# Generated by acpgen {__version__} from schema.json (sha256 {digest}).",
                        "# Regenerate with: acpgen build --target acp"], module.name
    manifest = json.loads((tmp_path / "src/acp/.acpgen-manifest.json").read_text())
    assert set(manifest["files"]) == {p.name for p in (tmp_path / "src/acp").iterdir()} - {".acpgen-manifest.json"}


def test_foreign_files_are_refused_kept_with_allow_foreign_and_never_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project(tmp_path, TARGET)
    out = tmp_path / "src/acp"
    out.mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    refused = acpgen(["build"], tmp_path, monkeypatch)
    assert refused.exit_code == 2
    assert "src/acp holds files acpgen did not write: notes.txt" in refused.stderr
    assert "pass --allow-foreign" in refused.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]

    assert acpgen(["build", "--allow-foreign"], tmp_path, monkeypatch).exit_code == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert "notes.txt" not in json.loads((out / ".acpgen-manifest.json").read_text())["files"]

    # A file acpgen wrote before and no longer generates goes; the foreign one stays.
    manifest = json.loads((out / ".acpgen-manifest.json").read_text())
    manifest["files"]["old_module.py"] = "0" * 64
    (out / ".acpgen-manifest.json").write_text(json.dumps(manifest))
    (out / "old_module.py").write_text("# generated by an older acpgen\n")
    assert acpgen(["build", "--allow-foreign"], tmp_path, monkeypatch).exit_code == 0
    assert not (out / "old_module.py").exists()
    assert (out / "notes.txt").read_text() == "mine"


# -- hooks: what the schema cannot say ----------------------------------------------------------

HOOKS = '''
hooks = { "/$defs/InitializeRequest/properties/protocolVersion" = "acp_hooks:version", "#/$defs/ToolCall/properties/kind" = "acp_hooks:tool_kind" }
'''

HOOK_MODULE = '''
def version(value: object) -> object:
    """Some clients sent a date string as the protocol version; read any string as version 1."""
    return 1 if isinstance(value, str) else value


def tool_kind(value: object) -> object:
    """An unknown tool kind is read as "other" (the Rust SDK's serde(other))."""
    return value if value in ("read", "edit", "delete", "move", "search", "execute", "think", "fetch") else "other"
'''


def test_hooks_rewrite_raw_values_before_decoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    project(tmp_path, TARGET + HOOKS)
    (tmp_path / "src").mkdir()
    (tmp_path / "src/acp_hooks.py").write_text(HOOK_MODULE)
    result = acpgen(["build"], tmp_path, monkeypatch)
    assert result.exit_code == 0, result.stderr
    models = (tmp_path / "src/acp/models.py").read_text()
    assert "from acp_hooks import tool_kind as _hook_acp_hooks_tool_kind\n" in models
    assert "from acp_hooks import version as _hook_acp_hooks_version\n" in models
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "E,F,W,I,UP,B,C4,SIM,RUF,PIE,N,ANN,PYI,TID,T20", "--ignore", "E501",
                           "--target-version", "py310", "models.py"], cwd=tmp_path / "src/acp",
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    typed = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.10",
                            "acp", "acp_hooks.py"], cwd=tmp_path / "src", capture_output=True, text=True)
    assert typed.returncode == 0, typed.stdout[-2000:]
    code = (
        "import acp;"
        "r = acp.decode('InitializeRequest', {'protocolVersion': '2024-11-05', 'clientCapabilities': {}});"
        "t = acp.decode('ToolCall', {'toolCallId': 't', 'title': 'x', 'kind': 'browse'});"
        "u = acp.decode('ToolCall', {'toolCallId': 't', 'title': 'x'});"
        "print(r.protocol_version, t.kind.value, u.kind is acp.UNSET)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "src", capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "other", "True"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('hooks = { "/$defs/ToolCall/properties/kind" = "acp_hooks.tool_kind" }\n',
         "`tool.acpgen.targets.acp.hooks.'/$defs/ToolCall/properties/kind'` must be \"module:function\", got 'acp_hooks.tool_kind'"),
        ('hooks = { "/$defs/ToolCall/properties/kinds" = "acp_hooks:tool_kind" }\n',
         "schema.json#/$defs/ToolCall/properties/kinds: error[unknown-hook]: `hooks` names a JSON pointer that is no property"),
        ('defaults = { "/$defs/ToolCall/properties/knd" = "other" }\n',
         "schema.json#/$defs/ToolCall/properties/knd: error[unknown-default]: `defaults` names a JSON pointer that is no property"),
    ],
)
def test_bad_hooks_and_defaults_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str, message: str
) -> None:
    project(tmp_path, TARGET + extra)
    result = acpgen(["build"], tmp_path, monkeypatch)
    assert result.exit_code == 2
    assert message in result.stderr, result.stderr
    assert not (tmp_path / "src/acp").exists()


def test_check_exits_2_on_a_broken_schema_and_leaves_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path, TARGET)
    assert acpgen(["build"], tmp_path, monkeypatch).exit_code == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "src/acp").iterdir()}
    (tmp_path / "schema/schema.json").write_text('{"$defs": {"A": {"type": "object",}}}')
    for command in (["check"], ["build"]):
        result = acpgen(command, tmp_path, monkeypatch)
        assert result.exit_code == 2
        assert "schema/schema.json: error[invalid-json]: invalid JSON at line 1, column 35" in result.stderr, result.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "src/acp").iterdir()} == before


def test_two_hook_targets_that_derive_one_alias_get_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hk.mod:fix` and `hk_mod:fix` both derive `_hook_hk_mod_fix`: the second in sorted order
    takes `_2`, and each field still runs its own function."""
    import subprocess
    import sys

    project(tmp_path, TARGET + 'hooks = { "/$defs/ToolCall/properties/kind" = "hk.mod:fix", '
                               '"/$defs/ToolCall/properties/title" = "hk_mod:fix" }\n')
    (tmp_path / "src/hk").mkdir(parents=True)
    (tmp_path / "src/hk/__init__.py").write_text("")
    (tmp_path / "src/hk/mod.py").write_text("def fix(value: object) -> object:\n    return 'other'\n")
    (tmp_path / "src/hk_mod.py").write_text("def fix(value: object) -> object:\n    return 'from hk_mod'\n")
    result = acpgen(["build"], tmp_path, monkeypatch)
    assert result.exit_code == 0, result.stderr
    models = (tmp_path / "src/acp/models.py").read_text()
    assert "from hk.mod import fix as _hook_hk_mod_fix\n" in models
    assert "from hk_mod import fix as _hook_hk_mod_fix_2\n" in models
    code = ("import acp; t = acp.decode('ToolCall', {'toolCallId': 't', 'title': 'x', 'kind': 'browse'});"
            "print(t.kind.value, '|', t.title)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "src", capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "other | from hk_mod"
