"""What a conform run means for CI: which rules count, which are waived (with a reason), and the
exit status.

    0  no MUST failed (with --strict: no SHOULD either), nothing blocked
    1  a MUST failed (with --strict: or a SHOULD)
    2  usage error: a bad option, an unknown rule id, an unreadable waiver file, an output folder
       that does not exist
    3  could not run: the program could not be started, the binding could not be loaded, the
       agent speaks another protocol version than the one asked for, or checks were blocked
       (by authentication) and none failed

A waiver file is TOML:

    [[waive]]
    rule = "rpc.parse_error"
    reason = "upstream SDK bug, tracked in example/agent#12"

A waived rule still runs and is still shown, as WAIVED with its reason; it no longer changes the
exit status. `--skip RULE` does not run the rule's verdict at all (shown as SKIP, "--skip")."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_COULD_NOT_RUN = 0, 1, 2, 3


class GateError(Exception):
    """A usage error in the gate's options (exit 2); the message says what to fix."""


@dataclass(frozen=True)
class Gate:
    """The CI options of one run: --strict, --skip, --waivers."""

    strict: bool = False
    skip: frozenset[str] = frozenset()
    waivers: dict[str, str] = field(default_factory=dict)
    """rule id -> reason"""

    def check_ids(self, known: set[str]) -> None:
        unknown = sorted((set(self.skip) | set(self.waivers)) - known)
        if unknown:
            raise GateError(f"unknown rule id(s): {', '.join(unknown)} (list them with `acpgen conform rules`)")


def read_waivers(path: Path) -> dict[str, str]:
    """rule id -> reason, from a TOML file of `[[waive]]` tables (each with `rule` and `reason`)."""
    if sys.version_info >= (3, 11):  # imported here: only --waivers reads TOML
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateError(f"{path}: cannot read the waiver file: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise GateError(f"{path}: not valid TOML: {exc}") from None
    entries = data.get("waive", [])
    if not isinstance(entries, list) or set(data) - {"waive"}:
        raise GateError(f"{path}: expected only [[waive]] tables (rule = \"...\", reason = \"...\")")
    out: dict[str, str] = {}
    for number, entry in enumerate(entries, 1):
        rule = entry.get("rule") if isinstance(entry, dict) else None
        reason = entry.get("reason") if isinstance(entry, dict) else None
        if not isinstance(rule, str) or not isinstance(reason, str) or not reason.strip():
            raise GateError(f"{path}: waiver #{number} needs a rule id and a non-empty reason (both strings)")
        out[rule] = reason.strip()
    return out


def make_gate(strict: bool, skip: list[str] | None, waiver_file: Path | None) -> Gate:
    return Gate(strict=strict, skip=frozenset(skip or ()),
                waivers=read_waivers(waiver_file) if waiver_file is not None else {})


def check_output_folder(path: Path | None, option: str) -> None:
    """A report file goes into an existing folder; else a usage error before anything runs."""
    if path is not None and not path.parent.is_dir():
        raise GateError(f"{option} {path}: the folder {path.parent} does not exist")
