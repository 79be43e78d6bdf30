"""The report as text (for a terminal), markdown (for a pull request) or JSON (for tools)."""

from __future__ import annotations

import json

from acpgen.diff.model import CLASSIFICATIONS, JSON_FORMAT, Change, Report, SideInfo


def side_text(side: SideInfo) -> str:
    files = ", ".join(f"{name} (sha256 {digest[:12]})" for name, digest in side.sources)
    return f"{side.label}: {files}"


def summary_line(report: Report) -> str:
    counts = ", ".join(f"{report.count(c)} {c}" for c in CLASSIFICATIONS)
    return f"{len(report.changes)} change(s): {counts}"


def tail(c: Change) -> str:
    parts = [c.kind, ", ".join(c.directions) if c.directions else "not sent by any method"]
    if c.source_breaking and c.classification == "wire-breaking":
        parts.append("also source-breaking")
    if c.unstable:
        parts.append("unstable")
    return "; ".join(parts)


def render_text(report: Report) -> str:
    lines = ["acpgen diff", f"  old  {side_text(report.old)}", f"  new  {side_text(report.new)}"]
    if report.ignore_unstable:
        lines.append("  items only the unstable files define are ignored")
    lines += ["", summary_line(report)]
    for classification in CLASSIFICATIONS:
        group = [c for c in report.changes if c.classification == classification]
        if not group:
            continue
        lines += ["", f"{classification} ({len(group)})"]
        for c in group:
            who = f"[breaks {c.breaks}] " if c.breaks != "nobody" else ""
            lines.append(f"  {who}{c.path}: {c.detail} ({tail(c)})")
            lines += [f"      -> {o.text()}" for o in c.outcomes]
    return "\n".join(lines) + "\n"


def md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    lines = [
        "# acpgen diff", "",
        "| side | label | files |", "| --- | --- | --- |",
        *(f"| {name} | `{md_cell(s.label)}` | {md_cell(', '.join(f'{f} (sha256 `{d[:12]}`)' for f, d in s.sources))} |"
          for name, s in (("old", report.old), ("new", report.new))),
        "",
    ]
    if report.ignore_unstable:
        lines += ["Items only the unstable files define are ignored.", ""]
    lines.append(f"**{summary_line(report)}**")
    titles = {"wire-breaking": "Wire-breaking", "source-breaking": "Source-breaking", "compatible": "Compatible"}
    for classification in CLASSIFICATIONS:
        group = [c for c in report.changes if c.classification == classification]
        if not group:
            continue
        wire = classification == "wire-breaking"
        lines += ["", f"## {titles[classification]} ({len(group)})", "",
                  "| breaks | where | change | direction | detail |" + (" outcome |" if wire else ""),
                  "| --- | --- | --- | --- | --- |" + (" --- |" if wire else "")]
        for c in group:
            flags = (" (also source-breaking)" if c.source_breaking and wire else "") + (
                " (unstable)" if c.unstable else "")
            outcome = f" {md_cell('; '.join(o.text() for o in c.outcomes))} |" if wire else ""
            lines.append(f"| {c.breaks} | `{md_cell(c.path)}` | {c.kind}{flags} | "
                         f"{', '.join(c.directions) or '-'} | {md_cell(c.detail)} |{outcome}")
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    def side(s: SideInfo) -> dict[str, object]:
        return {"label": s.label, "sources": [{"file": f, "sha256": d} for f, d in s.sources]}

    data = {
        "format": JSON_FORMAT,
        "old": side(report.old),
        "new": side(report.new),
        "ignore_unstable": report.ignore_unstable,
        "summary": {c: report.count(c) for c in CLASSIFICATIONS},
        "changes": [c.as_json() for c in report.changes],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
