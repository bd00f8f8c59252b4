"""REPORT.html: the reproduction report as one self-contained page (styles, a script that sorts
tables, every figure as a ``data:`` URI of its SVG; nothing fetched).

A verdict per paper at the top; then per paper its verdict, our numbers beside the published ones,
the claims, and per run what it did, what reproduces it, its tables and its figures. The page
depends only on the run folders it is built from.
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from .build import Report, headline_of, run_description, run_facts, status_lines
from .check import Grade, legend, task_matrices, task_of, totals_line
from .tables import fmt_value, setting_title, summary_blocks, sweep_block

GRADES = tuple(Grade)
#: verdict class -> (badge grade colour, short word)
VERDICTS = {"reproduced": ("OK", "reproduced"), "partly": ("GAP", "partly"), "unshown": ("VOID", "not shown"),
            "failed": ("FAIL", "not reproduced"), "none": ("PUBLISHED", "nothing to grade")}

CSS = """
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#fff; --soft:#f4f6f9; --ok:#1b7f3b; --okish:#8a6d00;
  --fail:#b3261e; --gap:#6b4fa0; --pub:#6b7280; --trend:#a34e00; --inconclusive:#33658a; --void:#3f3f46; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif; color:var(--fg);
  background:var(--bg); }
main { max-width:1240px; margin:0 auto; padding:20px 24px 60px; }
h1 { font-size:1.6rem; margin:.2em 0 .1em; } h2 { font-size:1.3rem; margin:2em 0 .4em; border-bottom:2px solid var(--line); }
h3 { font-size:1.1rem; margin:1.6em 0 .3em; } h4 { font-size:.98rem; margin:1.2em 0 .3em; color:var(--muted); }
p { margin:.4em 0; } .muted { color:var(--muted); font-size:.9em; }
nav { position:sticky; top:0; background:var(--bg); border-bottom:1px solid var(--line); padding:6px 24px; z-index:2;
  font-size:.92em; } nav a { margin-right:14px; }
a { color:#1f5fbf; text-decoration:none; } a:hover { text-decoration:underline; }
code { font:12.5px/1.4 ui-monospace,"DejaVu Sans Mono",monospace; background:var(--soft); padding:1px 4px;
  border-radius:3px; overflow-wrap:anywhere; }
.scroll { overflow-x:auto; max-width:100%; margin:.4em 0 1em; }
table { border-collapse:collapse; font-size:13.5px; }
caption { caption-side:bottom; text-align:left; padding-top:3px; font-size:12px; }
th, td { padding:4px 9px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { background:var(--soft); position:relative; white-space:nowrap; }
td.num { text-align:right; white-space:nowrap; font-variant-numeric:tabular-nums; } td.best { font-weight:700; }
td.wide { min-width:11em; max-width:30em; overflow-wrap:anywhere; } td.nw { white-space:nowrap; }
table.fit { width:100%; } table.fit th { white-space:normal; }
td.cellgrade { text-align:center; white-space:nowrap; font-variant-numeric:tabular-nums; }
td.cellgrade .grade { min-width:3.6em; } td.cellgrade small { display:block; color:var(--muted); }
h2, h3 { scroll-margin-top:44px; }
table.sortable th { cursor:pointer; user-select:none; padding-right:20px; }
table.sortable th::after { content:"\\2195"; position:absolute; right:5px; color:#a0a7b4; font-size:.85em; }
table.sortable th[aria-sort=ascending]::after { content:"\\2191"; color:var(--fg); }
table.sortable th[aria-sort=descending]::after { content:"\\2193"; color:var(--fg); }
.grade { display:inline-block; min-width:4.6em; text-align:center; border-radius:3px; padding:0 5px; font-weight:600;
  font-size:12px; color:#fff; }
.g-OK { background:var(--ok); } .g-OKISH { background:var(--okish); } .g-FAIL, .g-FAILED, .g-MISSING { background:var(--fail); }
.g-GAP { background:var(--gap); } .g-PUBLISHED { background:var(--pub); } .g-TREND { background:var(--trend); }
.g-INCONCLUSIVE { background:var(--inconclusive); } .g-VOID { background:var(--void); } .g-NOT-RUN { background:var(--pub); }
.verdict { font-weight:600; padding:8px 12px; border-left:5px solid var(--pub); background:var(--soft); margin:.6em 0; }
.v-reproduced { border-color:var(--ok); } .v-partly { border-color:var(--gap); } .v-unshown { border-color:var(--void); }
.v-failed { border-color:var(--fail); }
.prov { background:var(--soft); border:1px solid var(--line); border-radius:4px; padding:8px 12px; font-size:.9em;
  margin:.5em 0 1em; } .prov div { margin:2px 0; } .prov b { display:inline-block; min-width:7.5em; color:var(--muted);
  font-weight:600; }
.warn { color:var(--fail); font-weight:600; }
.figs { display:grid; grid-template-columns:repeat(auto-fill,minmax(520px,1fr)); gap:18px; }
figure { margin:0; border:1px solid var(--line); border-radius:4px; padding:8px; background:#fff; }
figure.wide { grid-column:1 / -1; } figure img { width:100%; height:auto; display:block; } figcaption { font-size:.86em; color:var(--muted); margin-top:4px; }
@media (max-width: 700px) { .figs { grid-template-columns:1fr; } main { padding:12px; } }
"""

SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.tabIndex = 0;
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], i = th.cellIndex;
    var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
    var key = function (row) { var c = row.cells[i]; var v = c.dataset.v !== undefined ? c.dataset.v : c.textContent.trim();
      var n = parseFloat(v); return isNaN(n) ? v : n; };
    var rows = Array.prototype.slice.call(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      var r = (typeof x === "number" && typeof y === "number") ? x - y
        : String(x).localeCompare(String(y), undefined, {numeric: true});
      return dir === "ascending" ? r : -r; });
    rows.forEach(function (row) { body.appendChild(row); });
  });
  th.addEventListener("keydown", function (e) { if (e.key === "Enter") { th.click(); } });
});
"""


def esc(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def anchor(*parts: str) -> str:
    return "-".join("".join(c if c.isalnum() else "-" for c in p).strip("-").lower() for p in parts if p)


# ----------------------------------------------------------------------------- building blocks
def cell(text: Any, sort: Any = None, cls: str = "") -> dict[str, Any]:
    """A table cell: shown text (escaped), an optional sort key, an optional CSS class."""
    return {"html": esc(text), "sort": sort, "cls": cls}


def raw_cell(markup: str, sort: Any = None, cls: str = "") -> dict[str, Any]:
    return {"html": markup, "sort": sort, "cls": cls}


def table(headers: list[str], rows: list[list[dict[str, Any]]], caption: str = "", fit: bool = False) -> str:
    """A sortable table (click a header; numbers sort as numbers) in a horizontally scrolling box;
    ``fit`` makes it as wide as the page, its ``wide`` cells wrapping, so it needs no scrolling."""
    head = "".join(f"<th scope=col>{esc(h)}</th>" for h in headers)
    body = []
    for r in rows:
        tds = []
        for c in r:
            attrs = f' class="{c["cls"]}"' if c["cls"] else ""
            if c["sort"] is not None:
                v = c["sort"]
                v = "-Infinity" if isinstance(v, float) and np.isnan(v) else v
                attrs += f' data-v="{esc(v)}"'
            tds.append(f"<td{attrs}>{c['html']}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    cap = f"<caption class=muted>{esc(caption)}</caption>" if caption else ""
    cls = "sortable fit" if fit else "sortable"
    return (f'<div class=scroll><table class="{cls}">{cap}<thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def grade_badge(grade: str) -> str:
    return f'<span class="grade g-{esc(grade.replace(" ", "-"))}">{esc(grade)}</span>'


def _num(metric: str, v: float | None, std: float | None = None, cls: str = "num") -> dict[str, Any]:
    """A number's cell, shown as the tables show it and sorted by its value (a missing one last)."""
    return cell(fmt_value(metric, v, std), float("nan") if v is None else v, cls)


def _aspect(svg_bytes: bytes) -> float:
    """Width / height of an SVG from its root element (1.5 when it does not say)."""
    m = re.search(rb'<svg[^>]*?width="([\d.]+)[a-z]*"[^>]*?height="([\d.]+)', svg_bytes[:2000])
    return float(m.group(1)) / float(m.group(2)) if m and float(m.group(2)) > 0 else 1.5


def figure_html(svg: Path, png: Path | None, caption: str, link_base: Path, pdf: Path | None = None) -> str:
    """A figure inlined as a data: URI of its SVG, with links to the PNG, SVG and PDF files; a wide
    figure (many tasks) takes a whole row."""
    raw = svg.read_bytes()
    data = base64.b64encode(raw).decode("ascii")
    wide = " class=wide" if _aspect(raw) > 2.0 else ""
    links = " · ".join(f'<a href="{esc(Path(os.path.relpath(p, link_base)).as_posix())}">{p.suffix[1:].upper()}</a>'
                       for p in (png, svg, pdf) if p is not None)
    return (f'<figure{wide}><img alt="{esc(caption)}" src="data:image/svg+xml;base64,{data}">'
            f"<figcaption>{esc(caption)} {links}</figcaption></figure>")


# ----------------------------------------------------------------------------- grades and verdicts
def verdict(grades: list[dict[str, Any]], claims: list[dict[str, Any]], unsettled: int = 0) -> tuple[str, str]:
    """(css class, one sentence) for a paper, from its grades: reproduced only when every number
    matches (OK, OKISH), every claim is OK and no run is ``unsettled`` (incomplete, failed jobs,
    unusable files: its grades are of the results it holds); not reproduced on any FAIL, FAILED or
    MISSING; otherwise partly reproduced, or not shown when nothing holds. The sentence counts what
    held and what did not, by grade."""
    numbers = [r["grade"] for r in grades if r["grade"] != "PUBLISHED"]
    said = [c["grade"] for c in claims]
    if not numbers and not said:
        return "none", "No published numbers or claims to grade."

    def part(found: list[str], held: tuple[str, ...], what: str, verb: str) -> str:
        others = Counter(g for g in found if g not in held)
        n_held = len(found) - sum(others.values())
        rest = ", ".join(f"{others[g]} {g}" for g in GRADES if others.get(g))
        return f"{n_held} of {len(found)} {what} {verb}" + (f" ({rest})" if rest else "")

    parts = ([part(numbers, ("OK", "OKISH"), "published numbers", "match")] if numbers else []) + \
        ([part(said, ("OK",), "claims", "hold")] if said else [])
    detail = "; ".join(parts) + (f"; {unsettled} run(s) incomplete or damaged, graded on the results they "
                                 "hold" if unsettled else "")
    everything = numbers + said
    held = sum(g in ("OK", "OKISH") for g in numbers) + said.count("OK")
    if any(Grade(g).fails for g in everything):
        return "failed", f"Not reproduced: {detail}."
    if held == 0:
        return "unshown", f"Not shown: {detail}."
    if held < len(everything):
        return "partly", f"Partly reproduced: {detail}."
    return ("partly", f"Not settled: {detail}.") if unsettled else ("reproduced", f"Reproduced: {detail}.")


def grades_html(rows: list[tuple[Any, dict[str, Any]]]) -> str:
    """Our numbers beside the published ones: per-task families with many tasks as a method x task
    matrix per run, setting and family, the other rows as one table."""
    matrices, plain = task_matrices(rows, row=lambda it: it[1], key=lambda it: it[0].name)
    return (grades_table(plain) if plain else "") + "".join(grades_matrix(m) for m in matrices)


def grades_matrix(rows: list[tuple[Any, dict[str, Any]]]) -> str:
    """One run's per-task grades of one family and setting: a row per method, a column per task,
    each cell our number over the published one, coloured by its grade (the reason on hover); the
    reasons of every cell that is not OK listed below."""
    run = rows[0][0]
    family = rows[0][1]["metric"].split("/", 1)[0]
    setting = setting_title(rows[0][1]["setting"], run.setting_values().get(rows[0][1]["setting"]))
    tasks = list(dict.fromkeys(task_of(r) for _, r in rows))
    methods = list(dict.fromkeys(r["method"] for _, r in rows))
    at = {(r["method"], task_of(r)): r for _, r in rows}
    body, notes = [], []
    for meth in methods:
        line = [cell(meth, cls="nw")]
        for t in tasks:
            r = at.get((meth, t))
            if r is None:
                line.append(cell("–"))
                continue
            m = r["metric"]
            ours = fmt_value(m, r["ours"])
            line.append(raw_cell(f'<span class="grade g-{esc(r["grade"])}" title="{esc(r["grade"])}: '
                                 f'{esc(r.get("reason", ""))}">{esc(ours)}</span><small>{esc(fmt_value(m, r["published"]))}'
                                 f'</small>', r["ours"] if r["ours"] is not None else float("nan"), "cellgrade"))
            if r["grade"] not in ("OK", "PUBLISHED"):
                notes.append(f"<li><b>{esc(meth)}, {esc(t)}</b>: {grade_badge(r['grade'])} {esc(r.get('reason', ''))}"
                             + (f" <span class=muted>({esc(r['note'])})</span>" if r["note"] else "") + "</li>")
        body.append(line)
    title = f"{family} per task, {run.name}" + (f", {setting}" if setting else "")
    sources = sorted({r["source"] for _, r in rows if r["source"]})
    caption = ("each cell: ours (coloured by its grade; hover for the reason) over the published number; rates in %"
               + (f"; source: {'; '.join(sources)}" if sources else ""))
    return (f"<h4>{esc(title)}</h4>" + table(["method"] + tasks, body, caption)
            + (f"<ul class=muted>{''.join(notes)}</ul>" if notes else ""))


def grades_table(rows: list[tuple[Any, dict[str, Any]]]) -> str:
    """Our numbers beside the published ones: (RunData, graded row) pairs, as wide as the page (the
    reason and the source wrap)."""
    out = []
    for run, r in rows:
        m = r["metric"]
        setting = setting_title(r["setting"], run.setting_values().get(r["setting"])) or "–"
        source = r["source"] + (f" ({r['note']})" if r["note"] else "")
        out.append([cell(run.name, cls="nw"), cell(setting), cell(r["method"], cls="nw"), cell(m, cls="nw"),
                    _num(m, r["ours"], r.get("std")),
                    cell(r["n_trials"] if r["n_trials"] is not None else "–",
                         r["n_trials"] if r["n_trials"] is not None else float("nan"), "num"),
                    _num(m, r["published"]),
                    cell("±" + fmt_value(m, r["tolerance"]), r["tolerance"], "num"),
                    raw_cell(grade_badge(r["grade"]), GRADES.index(r["grade"]) if r["grade"] in GRADES else 9),
                    cell(r.get("reason", ""), cls="wide"), cell(source, cls="wide")])
    return table(["run", "setting", "method", "metric", "ours", "trials", "published", "tolerance", "grade", "why",
                  "source and note"], out,
                 "rates in %; ours: mean ± std over the run's trials; click a header to sort", fit=True)


def claims_table(rows: list[tuple[Any, dict[str, Any]]]) -> str:
    out = [[cell(run.name, cls="nw"), cell(c["claim"], cls="wide"),
            raw_cell(grade_badge(c["grade"]), GRADES.index(c["grade"]) if c["grade"] in GRADES else 9),
            cell(c["measured"], cls="wide"), cell(c["source"] + (f" ({c['note']})" if c["note"] else ""), cls="wide")]
           for run, c in rows]
    return table(["run", "claim", "grade", "measured", "source and note"], out,
                 "measured: means, the paired difference and its 95 % interval, the pairs it rests on", fit=True)


# ----------------------------------------------------------------------------- one run
def provenance_html(prov: dict[str, Any], folder: Path, link_base: Path) -> str:
    """What reproduces a run's numbers: config, commit, command, run folder, data."""
    rel = Path(os.path.relpath(folder, link_base)).as_posix()
    if prov["commit"]:
        commit = f"<code>{esc(prov['commit'][:12])}</code>" + (
            " <span class=warn>with local changes (not committed)</span>" if prov["dirty"] else "")
    else:
        commit = "unknown (not run from a git checkout)"
    sets = " ".join("--set " + o for o in prov["overrides"])
    lines = [("config", f"<code>{esc(prov['config'] or 'unknown')}</code>"
                        + (f" with <code>{esc(sets)}</code>" if sets else "")),
             ("commit", commit),
             ("command", f"<code>{esc(prov['command'])}</code>" if prov["command"] else "not recorded"),
             ("rerun exactly", f"<code>{esc(prov['rerun'])}</code> (the resolved config kept in the run folder)"),
             ("run folder", f'<a href="{esc(rel)}/summary.md"><code>{esc(rel)}</code></a>: trials.csv, summary.csv, '
                            "curves.csv, diagnostics.csv, summary.tex"),
             ("data", (", ".join(f"{esc(k)} <code>{esc(v)}</code>" for k, v in prov["datasets"].items()) or "–")
              + (f" under <code>{esc(prov['data_root'])}</code>" if prov["data_root"] else "")),
             ("when", f"{esc(prov['start'])} to {esc(prov['end'] or 'no recorded end (still running, or killed)')}, rankbench {esc(prov['version'])}")]
    return "<div class=prov>" + "".join(f"<div><b>{k}</b> {v}</div>" for k, v in lines) + "</div>"


def summary_tables_html(built: Report, headline: str | None) -> str:
    run, summary = built.run, built.summary
    values = run.setting_values()
    out = []
    sw = sweep_block(summary, run.methods, values, headline) if headline else None
    if sw:
        keys, kv_rows, _, present, cells = sw
        rows = [[cell(v, v if isinstance(v, (int, float)) else None, "num") for v in kv]
                + [_num(headline, mean, std) for mean, std in row] for kv, row in zip(kv_rows, cells)]
        out.append(f"<h4>{esc(headline)} across the sweep</h4>" + table(keys + present, rows))
    for b in summary_blocks(summary, run.methods, values):
        rows = []
        for meth in b.methods:
            row = [cell(meth)]
            for m in b.columns:
                mean, std = b.cell(meth, m)
                row.append(_num(m, mean, std, "num best" if b.is_best(m, mean) else "num"))
            rows.append(row)
        what = f"{b.trials_said()}, mean ± std" if b.n_trials > 1 else b.trials_said()
        title = (b.heading + ": " if b.heading else "") + what
        out.append(f"<h4>{esc(title)}</h4>" + table(["method"] + b.headers, rows,
                                                     "rates in %, times in s, memory in MB; the best of each quality "
                                                     "column (in the metric's direction) in bold"))
    return "".join(out)


def run_section(built: Report, link_base: Path) -> str:
    """One run: description, provenance, status, tables, figures."""
    run = built.run
    headline = headline_of(run, built.summary)
    name = run.name
    parts = [f'<h3 id="{anchor("run", name)}">{esc(name)}</h3>']
    desc = run_description(run)
    if desc:
        parts.append(f"<p>{esc(desc)}</p>")
    parts.append(f"<p>{esc(run_facts(run))}</p>")
    parts.append(provenance_html(run.provenance(), run.folder.path, link_base))
    for line in status_lines(run):
        parts.append(f"<p class=warn>{esc(line.replace('**', ''))}</p>")
    parts.append(summary_tables_html(built, headline))
    figs = {}
    for p in built.plots:
        figs.setdefault(p.path.stem, {})[p.path.suffix] = p
    items = [figure_html(f[".svg"].path, f[".png"].path if ".png" in f else None, f[".svg"].caption, link_base,
                         f[".pdf"].path if ".pdf" in f else None)
             for f in figs.values() if ".svg" in f]
    if items:
        parts.append("<h4>Figures</h4><div class=figs>" + "".join(items) + "</div>")
    return "<section>" + "".join(parts) + "</section>"


# ----------------------------------------------------------------------------- the page
def page(papers: dict[str, list[Report]], out: Path) -> str:
    """The whole page for runs grouped by paper (``{paper: [their reports]}``)."""
    link_base = out.parent
    verdicts, sections = [], []
    for paper in sorted(papers):
        builts = papers[paper]
        grades = [(b.run, r) for b in builts for r in b.grades]
        claims = [(b.run, c) for b in builts for c in b.claims]
        cls, sentence = verdict([r for _, r in grades], [c for _, c in claims],
                                sum(not b.run.complete for b in builts))
        colour, word = VERDICTS[cls]
        verdicts.append([raw_cell(f'<a href="#{anchor("paper", paper)}">{esc(paper)}</a>', paper),
                         cell(len(builts), len(builts), "num"),
                         raw_cell(f'<span class="grade g-{colour}">{esc(word)}</span>', cls), cell(sentence, cls="wide")])
        body = [f'<h2 id="{anchor("paper", paper)}">{esc(paper)}</h2>',
                f'<p class="verdict v-{cls}">{esc(sentence)}</p>']
        if grades:
            body.append("<h4>Our numbers beside the published ones</h4>" + grades_html(grades))
        if claims:
            body.append("<h4>Claims</h4>" + claims_table(claims))
        body += [run_section(b, link_base) for b in builts]
        sections.append("<section>" + "".join(body) + "</section>")
    nav = "".join(f'<a href="#{anchor("paper", p)}">{esc(p)}</a>' for p in sorted(papers))
    every = [b for v in papers.values() for b in v]
    ends = [b.run.manifest.end for b in every if b.run.manifest and b.run.manifest.end]
    totals = totals_line([r for b in every for r in b.grades], [c for b in every for c in b.claims])
    head = (f"<h1>rankbench reproduction report</h1><p class=muted>{len(every)} run(s)"
            + (f", the newest finished {esc(max(ends))}" if ends else "") + f". Grades: {esc(legend())}</p>"
            + f"<p>{esc(totals)}</p>")
    summary = table(["paper", "runs", "verdict", "in one line"], verdicts)
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content=\"width=device-width, initial-scale=1\">"
            "<title>rankbench reproduction report</title>"
            f"<style>{CSS}</style></head><body><nav>{nav}</nav><main>{head}{summary}{''.join(sections)}</main>"
            f"<script>{SCRIPT}</script></body></html>\n")
