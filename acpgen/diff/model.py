"""What a diff reports: changes with their wire and source verdicts, and the report around them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

C2A = "client->agent"
A2C = "agent->client"
# What a change does on the wire: new senders may produce what old receivers reject (RECEIVERS),
# or new receivers reject what old senders produce (SENDERS).
RECEIVERS, SENDERS = "receivers", "senders"
Who = Literal["old clients", "old agents", "both", "nobody"]
Classification = Literal["wire-breaking", "source-breaking", "compatible"]
CLASSIFICATIONS: tuple[Classification, ...] = ("wire-breaking", "source-breaking", "compatible")
FAIL_ON = ("breaking", "source", "any")
JSON_FORMAT = "acpgen-diff/1"


@dataclass(frozen=True)
class Change:
    kind: str  # a stable identifier such as `field-added` (see CHANGE_KINDS)
    path: str  # `session/prompt`, `PromptRequest`, `PromptRequest.sessionId`, `ToolKind`
    detail: str
    breaks: Who
    source_breaking: bool
    directions: tuple[str, ...]
    unstable: bool = False

    @property
    def classification(self) -> Classification:
        if self.breaks != "nobody":
            return "wire-breaking"
        return "source-breaking" if self.source_breaking else "compatible"

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "path": self.path,
            "classification": self.classification,
            "breaks": self.breaks,
            "source_breaking": self.source_breaking,
            "directions": list(self.directions),
            "unstable": self.unstable,
            "detail": self.detail,
        }


CHANGE_KINDS = (
    "method-added", "method-removed", "method-side-changed", "method-notification-changed",
    "method-params-changed", "method-result-changed",
    "type-added", "type-removed", "type-kind-changed",
    "field-added", "field-removed", "field-renamed", "field-required-changed", "field-nullable-changed",
    "field-type-changed", "field-constraints-changed", "field-default-changed",
    "enum-value-added", "enum-value-removed", "enum-member-renamed", "enum-openness-changed",
    "enum-base-changed",
    "variant-added", "variant-removed", "variant-renamed", "union-openness-changed", "union-tag-changed",
    "alias-target-changed", "alias-constraints-changed",
)


@dataclass(frozen=True)
class SideInfo:
    """One side of the comparison as the report names it."""

    label: str
    sources: tuple[tuple[str, str], ...]  # (file name, sha256)


@dataclass(frozen=True)
class Report:
    old: SideInfo
    new: SideInfo
    ignore_unstable: bool
    changes: tuple[Change, ...]

    def count(self, classification: Classification) -> int:
        return sum(c.classification == classification for c in self.changes)

    def fails(self, fail_on: str) -> bool:
        """`breaking`: any wire-breaking change; `source`: wire- or source-breaking; `any`: any change."""
        if fail_on == "any":
            return bool(self.changes)
        if fail_on == "source":
            return any(c.classification != "compatible" for c in self.changes)
        return any(c.classification == "wire-breaking" for c in self.changes)


