"""Conformance results: each check names its rule (MUST/SHOULD and the spec section), and the
report renders as a table, JSON or JUnit XML. Exit 0 only when no MUST failed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

PASS, FAIL, SKIP = "pass", "fail", "skipped"


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

    def add(self, rule: Rule, status: str, detail: str = "") -> None:
        self.results.append(Result(rule, status, detail))

    @property
    def failed_must(self) -> list[Result]:
        return [r for r in self.results if r.status == FAIL and r.rule.level == "MUST"]

    @property
    def ok(self) -> bool:
        return not self.failed_must

    def counts(self) -> dict[str, int]:
        out = {PASS: 0, FAIL: 0, SKIP: 0}
        for r in self.results:
            out[r.status] += 1
        return out

    def table(self) -> str:
        width = max((len(r.rule.id) for r in self.results), default=10)
        lines = [f"acpgen conform: {self.subject} (schema {self.schema})", ""]
        for r in self.results:
            mark = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP"}[r.status]
            lines.append(f"{mark:4}  {r.rule.level:6}  {r.rule.id:{width}}  {r.rule.text}  [{r.rule.section}]")
            if r.detail and r.status != PASS:
                for detail_line in r.detail.splitlines()[:12]:
                    lines.append(f"{'':14}{'':{width}}  -> {detail_line}")
        c = self.counts()
        must = len(self.failed_must)
        should = sum(r.status == FAIL and r.rule.level == "SHOULD" for r in self.results)
        lines += ["", f"{c[PASS]} passed, {c[FAIL]} failed ({must} MUST, {should} SHOULD), {c[SKIP]} skipped"]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, object]:
        return {
            "subject": self.subject, "schema": self.schema, "ok": self.ok, "counts": self.counts(),
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
               f'failures="{c[FAIL]}" skipped="{c[SKIP]}">']
        for r in self.results:
            name = quoteattr(f"{r.rule.id} ({r.rule.level})")
            out.append(f'  <testcase classname={quoteattr("conform." + r.rule.section)} name={name}>')
            if r.status == FAIL:
                message = quoteattr(r.rule.level + ": " + r.rule.text)
                out.append(f"    <failure message={message}>{escape(r.detail)}</failure>")
            elif r.status == SKIP:
                out.append(f"    <skipped message={quoteattr(r.detail)}/>")
            out.append("  </testcase>")
        out.append("</testsuite>")
        return "\n".join(out) + "\n"

    def write(self, json_path: Path | None, junit_path: Path | None) -> None:
        if json_path is not None:
            json_path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        if junit_path is not None:
            junit_path.write_text(self.junit(), encoding="utf-8")
