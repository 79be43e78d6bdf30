"""Protocol facts the schema alone does not carry, each from a stated source or said to be unknown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acpgen.diagnostics import Diagnostics
from acpgen.ir.model import Method

# The params field through which a client asks for a protocol version (ACP's `initialize`).
VERSION_FIELD = "protocolVersion"

VERSION_HINT = ("pass --protocol-version N, set `protocol_version` in the target's [tool.acpgen] table, "
                "or put the release's meta.json beside the schema (or pass --meta)")


def negotiating_method(document: dict[str, Any], defs_key: str, methods: Sequence[Method]) -> str | None:
    """The request whose params carry `protocolVersion` (ACP: `initialize`), if the schema has one."""
    defs = document.get(defs_key)
    for m in methods:
        params = defs.get(m.params) if isinstance(defs, dict) else None
        properties = params.get("properties") if isinstance(params, dict) else None
        if not m.notification and isinstance(properties, dict) and VERSION_FIELD in properties:
            return m.wire
    return None


def protocol_version(given: int | None, meta: dict[str, Any] | None, meta_file: str,
                     diags: Diagnostics, *, negotiates: str | None) -> int | None:
    """The `protocolVersion` the package speaks: the option or config key, else the meta file's
    `version`; when neither says and the schema has a request that negotiates it, a warning (the
    runtime then refuses to negotiate, never echoes)."""
    stated = None if meta is None else meta.get("version")
    meta_diags = Diagnostics(meta_file or diags.file)
    if stated is not None and (not isinstance(stated, int) or isinstance(stated, bool) or stated < 0):
        meta_diags.warning("bad-meta-version", "/version",
                           f"the meta file's version {stated!r} is not a protocol version (a non-negative integer)",
                           "ignored; " + VERSION_HINT)
        stated = None
    if given is not None and stated is not None and stated != given:
        meta_diags.warning("protocol-version-mismatch", "/version",
                           f"the meta file says version {stated}, the option or config key {given}; "
                           f"the package speaks {given}", "drop one of them, or make them agree")
    diags.items.extend(meta_diags.items)
    if given is not None:
        return given
    if stated is not None:
        return stated
    if negotiates is not None:
        diags.warning("protocol-version-unknown", "",
                      f"no protocol version is known for this schema: the generated agent answers {negotiates!r} "
                      "with an error rather than echo the version asked for", VERSION_HINT)
    return None
