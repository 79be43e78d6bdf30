"""What a diff reports: changes with their wire and source verdicts, and the report around them."""

from __future__ import annotations

from dataclasses import dataclass, field
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
# What a receiver does with a message a wire-breaking change makes it fail on, worst first: the
# identifier (JSON) and how the text reports say it.
REJECTS, MISREADS, KEEPS, DROPS, DEFAULTS, ABSENT, OTHER_DEFAULT = (
    "rejects", "misreads", "keeps-unknown", "drops-item", "defaults", "reads-absent", "other-default")
OUTCOMES: dict[str, str] = {
    REJECTS: "reject the message",
    MISREADS: "misread it as another variant",
    KEEPS: "keep it whole as an unknown variant (where the schema reads the default)",
    DROPS: "drop the item",
    DEFAULTS: "replace the value by its default",
    ABSENT: "read the value as absent",
    OTHER_DEFAULT: "read an absent key as a different default",
}


SiteKind = Literal["missing", "value", "type", "tag", "outcome"]


@dataclass(frozen=True)
class Site:
    """Where a change makes a receiver fail, by the names each package gives it.

    - `missing`: the required key `wire` of struct `old`/`new` is absent;
    - `value`: the value of field `wire` of struct `old`/`new` is one the receiver cannot take;
    - `type`: a value of type `old`/`new` is one the receiver cannot take;
    - `tag`: union `old`/`new` gets a tag it does not list, on the object struct `sent` (named in
      the sender's package) describes;
    - `outcome`: the outcome is known without a path (`wire` holds it, `old`/`new` where).
    """

    kind: SiteKind
    old: str = ""
    new: str = ""
    wire: str = ""
    sent: str = ""
    value: str | int | None = None  # `type` sites of enums: the value the receiver does not list


@dataclass(frozen=True)
class Outcome:
    """What one side's receivers do with what the blamed side sends: `receivers` names them with
    their version (`new agents`, `old clients`), `at` where it happens (the message, or the field
    whose annotation catches the failure), one entry per place."""

    receivers: str
    outcome: str
    at: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {"receivers": self.receivers, "outcome": self.outcome, "at": list(self.at)}

    def text(self, limit: int = 3) -> str:
        places = ", ".join(self.at[:limit]) + (f" and {len(self.at) - limit} more" if len(self.at) > limit else "")
        return f"{self.receivers} {OUTCOMES[self.outcome]}" + (f" ({places})" if places else "")


@dataclass(frozen=True)
class Change:
    kind: str  # a stable identifier such as `field-added` (see CHANGE_KINDS)
    path: str  # `session/prompt`, `PromptRequest`, `PromptRequest.sessionId`, `ToolKind`
    detail: str
    breaks: Who
    source_breaking: bool
    directions: tuple[str, ...]
    unstable: bool = False
    outcomes: tuple[Outcome, ...] = ()  # wire-breaking changes: what the receivers really do
    site: Site | None = field(default=None, compare=False)  # where the outcomes were computed from

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
            "outcomes": [o.as_json() for o in self.outcomes],
        }


CHANGE_KINDS = (
    "method-added", "method-removed", "method-side-changed", "method-notification-changed",
    "method-params-changed", "method-result-changed",
    "type-added", "type-removed", "type-kind-changed",
    "field-added", "field-removed", "field-renamed", "field-wire-renamed", "field-required-changed", "field-nullable-changed",
    "field-type-changed", "field-constraints-changed", "field-default-changed",
    "annotation-added", "annotation-removed",
    "enum-value-added", "enum-value-removed", "enum-member-renamed", "enum-openness-changed",
    "enum-base-changed",
    "variant-added", "variant-removed", "variant-renamed", "union-openness-changed", "union-tag-changed",
    "alias-target-changed", "alias-constraints-changed",
    "protocol-rule-added", "protocol-rule-removed", "protocol-rule-changed",
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


