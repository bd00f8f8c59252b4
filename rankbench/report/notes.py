"""A paper's page (``docs/papers/<paper>.md``): verdict first, written from its run folders.

Configs hold a configuration (parameters, published numbers, claims, one-sentence reasons); what
the runs of a paper measured lives here instead, regenerated from the run folders by ``rankbench
notes PAPER``. The page reads top down, so that its first screen says what was reproduced:

1. the verdict over every run (from the grades), then a short hand-written summary
   (``<paper>.opening.md`` beside the page);
2. the graded tables: per run, the published numbers and claims graded on its stored trials,
   each with its reason; they are the committed config's (so a reason edited after the run is the
   one shown) when the run was made with what the committed config computes, else the run's own;
3. what differs and why (``<paper>.differs.md``, hand-written: the measured reasons a config's
   ``known_gap`` points to, one heading each);
4. what the runs measured: per run its facts (folder, commit, trials, seed: from the run, never the
   config's prose), the summary tables and what the rankers chose;
5. the hand-written history (``<paper>.history.md``: how the configs came to be, dated).

The hand-written parts are kept verbatim (their headings moved down to their place). The page
depends only on the run folders, the configs and those files: written twice, it is the same file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .build import RunData, graded_sections, run_description, run_facts, status_lines, summary_of
from .check import totals_line
from .html import verdict
from .tables import headline_metric, summary_markdown

#: a run's sections that grade it (the rest says what it measured)
GRADED = ("Published numbers", "Claims", "Failed jobs")


@dataclass
class NoteEntry:
    """One run of a paper and what grades it."""

    run: RunData
    #: the committed config file the run belongs to ("" when none has its name)
    config_file: str
    #: published numbers and claims that grade the run (validated dicts; claims with ``from_``)
    expected: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    #: one sentence: whose published numbers and claims these are, and why
    graded_with: str


@dataclass
class RunPart:
    """One run's two parts of the page, in Markdown with ``##`` sections: what grades it and what it measured."""

    name: str
    graded: str
    measured: str


def demoted(md: str, levels: int) -> str:
    """Markdown with every heading ``levels`` deeper (``## x`` -> ``#### x`` for 2)."""
    return re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + levels) + " ", md, flags=re.MULTILINE)


def split_run(name: str, md: str) -> RunPart:
    """A run's Markdown (its facts, then ``## `` sections) cut into the graded sections and the rest."""
    preamble, *rest = re.split(r"^## ", md, flags=re.MULTILINE)
    sections = [s.split("\n", 1) for s in rest]
    text = {True: [], False: [preamble.strip() + "\n"] if preamble.strip() else []}
    for title, body in sections:
        text[title.strip() in GRADED].append(f"## {title.strip()}\n\n{body.strip()}\n")
    return RunPart(name, "\n".join(text[True]), "\n".join(text[False]))


def _provenance(entry: NoteEntry) -> list[str]:
    run, prov = entry.run, entry.run.provenance()
    commit = prov["commit"]
    commit_text = (f"`{commit[:12]}`" + (" with local changes" if prov["dirty"] else "")) if commit else "unknown"
    lines = [f"- config: `{entry.config_file}`" if entry.config_file else "- config: none committed under this name",
             f"- run folder `{run.folder.concrete.path.name}`, commit {commit_text}, started {prov['start'] or 'unknown'}"
             + f", rankbench {prov['version'] or 'unknown'}",
             f"- graded: {entry.graded_with}"]
    return lines + [f"- {run_facts(run)}"] + [f"- {s}" for s in status_lines(run)]


def run_part(entry: NoteEntry) -> tuple[RunPart, list[dict[str, Any]], list[dict[str, Any]]]:
    """One run's parts of the page and its graded numbers and claims."""
    run = entry.run
    summary = summary_of(run)
    tables = summary_markdown(summary, run.name, run.methods, run.setting_order, values=run.setting_values(),
                              headline=headline_metric(run.protocol_name, set(summary["metric"])))
    tables = tables.split("\n", 2)[2]  # the title line and the blank line after it
    graded, grades, claims = graded_sections(run, summary, entry.expected, entry.claims)
    description = run_description(run)
    lines = ([description, ""] if description else []) + _provenance(entry)
    lines += ["", "## Results", "", demoted(tables, 1).strip(), ""] + ([graded.strip(), ""] if graded else [])
    return split_run(run.name, "\n".join(lines)), grades, claims


def paper_page(paper: str, parts: list[RunPart], verdict_line: str, command: str = "",
               opening: str | None = None, differs: str | None = None, history: str | None = None,
               kept: tuple[str, ...] = ()) -> str:
    """The page of ``paper``: verdict, graded tables, what differs and why, what each run measured, history.

    Parameters
    ----------
    paper : the paper's name (its config folder).
    parts : its runs' parts, in the order to show them.
    verdict_line : the verdict over every run and the totals (one line).
    command : the command that regenerates the page, as the page names it.
    opening, differs, history : the hand-written summary, gaps and history, kept verbatim (None: absent);
        the history's own ``# title`` becomes the page's last section.
    kept : the hand-written files, as the page names them.
    """
    n = len(parts)
    head = [f"# {paper}", "",
            f"Generated by `{command or f'rankbench notes {paper}'}` from {n} run folder(s); do not edit by hand"
            + (": the hand-written parts are kept verbatim from " + ", ".join(f"`{k}`" for k in kept) if kept else "")
            + ".", "", "## Verdict", "", verdict_line, ""]
    if opening:
        head += [opening.strip(), ""]
    graded = [f"### {p.name}: graded\n\n{demoted(p.graded, 2).strip()}\n" for p in parts if p.graded.strip()]
    head += ["## Graded", "", "\n".join(graded).strip() if graded else "Nothing to grade: no published numbers or claims.",
             "", "## What differs and why", "",
             demoted(differs.strip(), 1) if differs else "Nothing documented.", "",
             "## What the runs measured", "",
             "Runs: " + ", ".join(f"[{p.name}](#{_anchor(p.name)})" for p in parts) + ".", ""]
    body = "\n".join(head) + "\n" + "\n".join(f"### {p.name}\n\n{demoted(p.measured, 2).strip()}\n" for p in parts)
    if history is not None:  # its own title becomes the page's last section; without one: "History"
        titled = history.lstrip().startswith("# ")
        body += "\n" + ("" if titled else "## History\n\n") + demoted(history.strip(), int(titled)) + "\n"
    return body.rstrip() + "\n"


def paper_note(paper: str, entries: list[NoteEntry], command: str = "", opening: str | None = None,
               differs: str | None = None, history: str | None = None, kept: tuple[str, ...] = ()) -> str:
    """The page of ``paper`` from its runs (see :func:`paper_page` for the hand-written parts)."""
    parts, grades, claims = [], [], []
    for e in entries:
        p, g, c = run_part(e)
        parts.append(p)
        grades += g
        claims += c
    _, sentence = verdict(grades, claims)
    return paper_page(paper, parts, f"**{sentence}** {totals_line(grades, claims)}", command, opening, differs,
                      history, kept)


def _anchor(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
