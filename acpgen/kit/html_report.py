"""A session as one self-contained HTML page: a sequence diagram (client | agent lanes, one arrow
per message, the time it crossed), each message expandable to its JSON, violations marked, and
filters by session and method (`?session=ID&method=NAME` in the address applies them at load).

Standard library only; no external resource. Every message is untrusted input: everything taken
from it reaches the page through `html.escape` (text and attribute values), never inside the
script, which reads only the rows' `data-` attributes."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acpgen.kit.observe import TO_AGENT, TO_CLIENT

MAX_SHOWN = 64 * 1024
"""Characters of one message shown expanded (the trace keeps the whole line)."""

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f}
h1{font-size:1.2em}.summary{margin:.5em 0 1em}
table{border-collapse:collapse;width:100%}td,th{padding:2px 6px;vertical-align:top}
th{text-align:left;border-bottom:1px solid #999}
.lane{width:38%}.arrow{width:16%;text-align:center;white-space:nowrap;font-weight:600}
.c2a .arrow{color:#0a5}.a2c .arrow{color:#05a}.stderr .arrow{color:#888}
tr.msg{border-bottom:1px solid #eee}tr.violation{background:#fde8e8}
.mark{color:#b00;font-weight:700}.time{color:#666;font-variant-numeric:tabular-nums;width:6em}
pre{white-space:pre-wrap;word-break:break-all;margin:.3em 0;font-size:12px}
summary{cursor:pointer}ul.violations{margin:.2em 0;color:#b00}
.filters label{margin-right:1em}
"""

SCRIPT = """
(function(){
  var rows=[].slice.call(document.querySelectorAll('tr.msg'));
  var s=document.getElementById('f-session'),m=document.getElementById('f-method');
  function apply(){
    var shown=0;
    rows.forEach(function(r){
      var ok=(!s.value||r.dataset.session===s.value)&&(!m.value||r.dataset.method===m.value);
      r.hidden=!ok; if(ok){shown++;}
    });
    document.getElementById('shown').textContent=String(shown);
  }
  var q=new URLSearchParams(location.search);
  function pick(sel,val){if(val===null){return;}
    for(var i=0;i<sel.options.length;i++){if(sel.options[i].value===val){sel.value=val;}}}
  pick(s,q.get('session'));pick(m,q.get('method'));
  s.addEventListener('change',apply);m.addEventListener('change',apply);apply();
})();
"""


def session_of(message: object) -> str:
    if not isinstance(message, dict):
        return ""
    for key in ("params", "result"):
        part = message.get(key)
        if isinstance(part, dict) and isinstance(part.get("sessionId"), str):
            return str(part["sessionId"])
    return ""


def pretty(line: str) -> tuple[str, object]:
    try:
        message = json.loads(line)
    except ValueError:
        return line[:MAX_SHOWN], None
    text = json.dumps(message, indent=2, ensure_ascii=False)
    if len(text) > MAX_SHOWN:
        text = text[:MAX_SHOWN] + f"\n... ({len(text) - MAX_SHOWN} more characters in the trace)"
    return text, message


def row(record: dict[str, Any], number: int) -> str:
    e = html.escape
    direction = record.get("dir", "")
    text, message = pretty(str(record.get("line", "")))
    method = record.get("method") or ""
    kind = record.get("kind") or ("stderr" if direction == "agent-stderr" else "")
    ident = record.get("id")
    violations = record.get("violations") or []
    css = {TO_AGENT: "c2a", TO_CLIENT: "a2c"}.get(direction, "stderr")
    arrow = {TO_AGENT: "\u2192", TO_CLIENT: "\u2190"}.get(direction, "\u00b7")
    label = str(method) or kind or "?"
    if ident is not None:
        label += f" ({json.dumps(ident)})"
    cell = (f'<details><summary>{e(label)} <small>{e(str(kind))}</small></summary>'
            f"<pre>{e(text)}</pre></details>")
    if violations:
        items = "".join(f"<li>{e(str(v.get('path') or ''))}: {e(str(v.get('message') or ''))}</li>"
                        for v in violations if isinstance(v, dict))
        cell += f'<ul class="violations">{items}</ul>'
    mark = f'<span class="mark" title="violations">\u26a0 {len(violations)}</span> ' if violations else ""
    client_cell, agent_cell = (cell, "") if direction == TO_AGENT else ("", cell)
    classes = f"msg {css}" + (" violation" if violations else "")
    return (f'<tr class="{classes}" id="m{number}" data-session="{e(session_of(message), quote=True)}" '
            f'data-method="{e(str(method), quote=True)}" data-violations="{len(violations)}">'
            f'<td class="time">{float(record.get("t") or 0):.3f}</td><td class="lane">{client_cell}</td>'
            f'<td class="arrow">{mark}{e(arrow)} {e(label[:60])}</td><td class="lane">{agent_cell}</td></tr>')


def options(values: Iterable[str], what: str) -> str:
    e = html.escape
    out = [f'<option value="">every {what}</option>']
    out += [f'<option value="{e(v, quote=True)}">{e(v)}</option>' for v in sorted(set(values)) if v]
    return "".join(out)


def render(records: list[dict[str, Any]], title: str, notes: list[str] | None = None) -> str:
    """The page for a trace's records (as `acpgen inspect --trace` writes them); `notes` (replay's
    differences) are listed above the diagram."""
    e = html.escape
    title = title if len(title) <= 160 else title[:157] + "..."
    rows = [row(r, n) for n, r in enumerate(records, 1)]
    sessions = [session_of(pretty(str(r.get("line", "")))[1]) for r in records]
    methods = [str(r.get("method") or "") for r in records]
    violations = sum(len(r.get("violations") or []) for r in records)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'\">",
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        ('<ul id="notes">' + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>") if notes else "",
        f'<p class="summary"><span id="count">{len(records)}</span> lines, '
        f'<span id="violation-count">{violations}</span> violations; <span id="shown">{len(records)}</span> shown</p>',
        '<p class="filters"><label>session <select id="f-session">' + options(sessions, "session") + "</select></label>"
        '<label>method <select id="f-method">' + options(methods, "method") + "</select></label></p>",
        '<table id="diagram"><thead><tr><th>t (s)</th><th>client</th><th></th><th>agent</th></tr></thead><tbody>',
        *rows,
        "</tbody></table>",
        f"<script>{SCRIPT}</script></body></html>",
    ]) + "\n"


def read_trace(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def write_html(path: Path, records: list[dict[str, Any]], title: str, notes: list[str] | None = None) -> None:
    path.write_text(render(records, title, notes), encoding="utf-8")


def records_of(lines: list[tuple[float, str, bytes]], observer: Any) -> list[dict[str, Any]]:
    """Trace records for raw lines (time, direction, bytes), decoded in order by `observer`."""
    out: list[dict[str, Any]] = []
    for at, direction, raw in lines:
        text = raw.decode("utf-8", errors="surrogateescape")
        record: dict[str, Any] = {"t": round(at, 6), "dir": direction, "line": text[:128 * 1024]}
        if text.strip():
            try:
                observations = observer.feed(direction, raw.decode("utf-8"))
            except UnicodeDecodeError:
                observations = []
            if observations:
                first = observations[0]
                record.update(kind=first.kind, method=first.method, id=first.id)
                found = [v.to_json() for o in observations for v in o.violations]
                if found:
                    record["violations"] = found
        out.append(record)
    return out
