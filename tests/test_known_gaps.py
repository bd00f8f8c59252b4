"""Configs carry configuration: every committed ``known_gap`` is one sentence pointing to its paper's page.

The rule (DEVELOPING.md, configs): a reason is one sentence of at most 200 characters, holds no
measurement (no decimal number, percentage or ratio: those live in the paper's page), and ends with
``(docs/papers/<paper>.md#<anchor>)``, a heading of the committed page of the config's own paper.
"""

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted((REPO / "configs").rglob("*.yaml"))
POINTER = re.compile(r" \(docs/papers/(\w+)\.md#([\w-]+)\)$")
MEASUREMENT = re.compile(r"\d\.\d|\d\s*%|\d(\.\d+)?x\b")


def reasons(node):
    """Every known_gap string of a config (its expected entries, its known_gaps mapping, its regress block)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "known_gap" and value is not None:
                yield value
            elif key == "known_gaps" and value:
                yield from value.values()
            else:
                yield from reasons(value)
    elif isinstance(node, list):
        for item in node:
            yield from reasons(item)


def headings(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings (lower case, punctuation dropped, spaces as hyphens)."""
    titles = re.findall(r"^#+ (.+)$", page.read_text(), re.MULTILINE)
    return {re.sub(r"[^a-z0-9_\- ]", "", t.lower()).replace(" ", "-") for t in titles}


def problems(reason, paper: str) -> list[str]:
    if not isinstance(reason, str):
        return [f"not a string: {reason!r}"]
    found = []
    if len(reason) > 200:
        found.append(f"{len(reason)} characters (at most 200)")
    pointer = POINTER.search(reason)
    if not pointer:
        found.append("does not end with (docs/papers/<paper>.md#<anchor>)")
        return found
    text = reason[:pointer.start()]
    if re.search(r"[.!?] +[A-Z]", text) or text.rstrip().endswith("."):
        found.append("more than one sentence")
    if MEASUREMENT.search(text):
        found.append(f"holds a measurement ({MEASUREMENT.search(text).group(0)!r})")
    if pointer.group(1) != paper:
        found.append(f"points to {pointer.group(1)}'s page, not {paper}'s")
    page = REPO / "docs" / "papers" / f"{pointer.group(1)}.md"
    if not page.is_file() or pointer.group(2) not in headings(page):
        found.append(f"no heading #{pointer.group(2)} in {page.relative_to(REPO).as_posix()}")
    return found


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.relative_to(REPO / "configs").as_posix())
def test_every_known_gap_is_one_sentence_pointing_to_its_papers_page(config):
    paper = config.relative_to(REPO / "configs").parts[0]
    bad = [f"{reason!r}: {', '.join(p)}" for reason in reasons(yaml.safe_load(config.read_text()))
           if (p := problems(reason, paper))]
    assert not bad, "\n".join(bad)


def test_the_configs_state_known_gaps():
    """The rule above is not checked on nothing."""
    assert sum(len(list(reasons(yaml.safe_load(c.read_text())))) for c in CONFIGS) >= 30


@pytest.mark.parametrize("reason, wrong", [
    ("A reason (docs/papers/prosser.md#elf-past-rank-1)", None),
    ("ELF reaches 35.9 at rank 10 (docs/papers/prosser.md#elf-past-rank-1)", "measurement"),
    ("IRB saves 1.5x (docs/papers/prosser.md#elf-past-rank-1)", "measurement"),
    ("Half the items, 50 % (docs/papers/prosser.md#elf-past-rank-1)", "measurement"),
    ("One. Two (docs/papers/prosser.md#elf-past-rank-1)", "one sentence"),
    ("A reason with no pointer", "does not end"),
    ("A reason (docs/papers/prosser.md#no-such-heading)", "no heading"),
    ("A reason (docs/papers/yan.md#spirals-random-pairs)", "not prosser's"),
    ("x" * 201 + " (docs/papers/prosser.md#elf-past-rank-1)", "at most 200"),
])
def test_the_rule_refuses_what_it_should(reason, wrong):
    found = problems(reason, "prosser")
    assert (not found) if wrong is None else any(wrong in p for p in found), found
