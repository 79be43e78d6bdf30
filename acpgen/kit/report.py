"""Conformance results: each check names its rule (MUST/SHOULD and the spec section), and the
report renders as a table, JSON or JUnit XML. The exit status follows `acpgen.kit.gate`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from acpgen.kit.gate import EXIT_COULD_NOT_RUN, EXIT_FAIL, EXIT_OK, Gate

PASS, FAIL, SKIP, BLOCKED, WAIVED = "pass", "fail", "skipped", "blocked", "waived"
"""BLOCKED: the check could not run because the agent asked for authentication (-32000) first.
WAIVED: the check failed and a waiver file says why that is accepted."""
MARKS = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP", BLOCKED: "BLOCKED", WAIVED: "WAIVED"}


@dataclass(frozen=True)
class Rule:
    id: str
    level: str  # MUST or SHOULD
    text: str
    section: str


@dataclass
class Result:
    rule: Rule
    status: str
    detail: str = ""


@dataclass
class Report:
    subject: str
    schema: str
    results: list[Result] = field(default_factory=list)
    stopped: str = ""
    """Set when the run could not check what it was asked to (e.g. the agent speaks another
    protocol version): the reason, printed above the table; the exit status is 3."""
    strict: bool = False

    def add(self, rule: Rule, status: str, detail: str = "") -> None:
        self.results.append(Result(rule, status, detail))

    def apply(self, gate: Gate) -> None:
        """--skip drops a rule's verdict; a waiver turns its failure into WAIVED (with the reason)."""
        self.strict = gate.strict
        for r in self.results:
            if r.rule.id in gate.skip:
                r.status, r.detail = SKIP, "skipped by --skip"
            elif r.rule.id in gate.waivers:
                reason = gate.waivers[r.rule.id]
                if r.status in (FAIL, BLOCKED):
                    r.status, r.detail = WAIVED, f"waived: {reason}\n{r.detail}".rstrip()
                else:
                    r.detail = f"(waiver not needed: {reason}) {r.detail}".rstrip()

    @property
    def failed_must(self) -> list[Result]:
        return [r for r in self.results if r.status == FAIL and r.rule.level == "MUST"]

    @property
    def failed_should(self) -> list[Result]:
        return [r for r in self.results if r.status == FAIL and r.rule.level == "SHOULD"]

    @property
    def ok(self) -> bool:
        return not self.failed_must

    def exit_code(self) -> int:
        if self.failed_must or (self.strict and self.failed_should):
            return EXIT_FAIL
        if self.stopped or any(r.status == BLOCKED for r in self.results):
            return EXIT_COULD_NOT_RUN
        return EXIT_OK

    def counts(self) -> dict[str, int]:
        out = {PASS: 0, FAIL: 0, SKIP: 0, BLOCKED: 0, WAIVED: 0}
        for r in self.results:
            out[r.status] += 1
        return out

    def table(self) -> str:
        width = max((len(r.rule.id) for r in self.results), default=10)
        lines = [f"acpgen conform: {self.subject} (schema {self.schema})", ""]
        if self.stopped:
            lines += [f"could not run: {self.stopped}", ""]
        for r in self.results:
            lines.append(f"{MARKS[r.status]:4}  {r.rule.level:6}  {r.rule.id:{width}}  {r.rule.text}  [{r.rule.section}]")
            if r.detail and r.status != PASS:
                for detail_line in r.detail.splitlines()[:12]:
                    lines.append(f"{'':14}{'':{width}}  -> {detail_line}")
        c = self.counts()
        must, should = len(self.failed_must), len(self.failed_should)
        summary = f"{c[PASS]} passed, {c[FAIL]} failed ({must} MUST, {should} SHOULD), {c[SKIP]} skipped"
        if c[BLOCKED]:
            summary += f", {c[BLOCKED]} blocked by auth"
        if c[WAIVED]:
            summary += f", {c[WAIVED]} waived"
        if self.strict:
            summary += " (--strict: SHOULD failures fail the run)"
        lines += ["", summary]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, object]:
        return {
            "subject": self.subject, "schema": self.schema, "ok": self.ok, "exit": self.exit_code(),
            "strict": self.strict, "stopped": self.stopped or None, "counts": self.counts(),
            "checks": [
                {"id": r.rule.id, "level": r.rule.level, "rule": r.rule.text, "section": r.rule.section,
                 "status": r.status, "detail": r.detail}
                for r in self.results
            ],
        }

    def junit(self) -> str:
        c = self.counts()
        out = ['<?xml version="1.0" encoding="utf-8"?>',
               f'<testsuite name={quoteattr("acpgen conform " + self.subject)} tests="{len(self.results)}" '
               f'failures="{c[FAIL]}" errors="{c[BLOCKED]}" skipped="{c[SKIP] + c[WAIVED]}">']
        for r in self.results:
            name = quoteattr(f"{r.rule.id} ({r.rule.level})")
            out.append(f'  <testcase classname={quoteattr("conform." + r.rule.section)} name={name}>')
            if r.status == FAIL:
                message = quoteattr(r.rule.level + ": " + r.rule.text)
                out.append(f"    <failure message={message}>{escape(r.detail)}</failure>")
            elif r.status == BLOCKED:
                out.append(f"    <error message={quoteattr('blocked by auth')}>{escape(r.detail)}</error>")
            elif r.status in (SKIP, WAIVED):
                out.append(f"    <skipped message={quoteattr(r.detail)}/>")
            out.append("  </testcase>")
        out.append("</testsuite>")
        return "\n".join(out) + "\n"

    def write(self, json_path: Path | None, junit_path: Path | None) -> None:
        if json_path is not None:
            json_path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        if junit_path is not None:
            junit_path.write_text(self.junit(), encoding="utf-8")
