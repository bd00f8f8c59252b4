"""make reproduce-all's schedule names every paper config once, so that none runs alone at the end."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_variable(text: str, name: str) -> list[str]:
    """The words of a ``NAME := ...`` assignment in the Makefile, its continuation lines joined and
    the i-LIDS wildcard expanded as make expands it."""
    joined = text.replace("\\\n", " ")
    value = re.search(rf"^{name} := (.*)$", joined, flags=re.M).group(1)
    ilids = sorted(f"prosser/{p.stem}" for p in (ROOT / "configs" / "prosser").glob("ilids_*.yaml"))
    value = value.replace("$(patsubst configs/%.yaml,%,$(wildcard configs/prosser/ilids_*.yaml))", " ".join(ilids))
    assert "$(" not in value, f"{name} holds a make function this test does not expand: {value}"
    return value.split()


def test_every_paper_config_is_scheduled_once_and_every_scheduled_name_exists():
    text = (ROOT / "Makefile").read_text()
    papers = make_variable(text, "REPRODUCE_PAPERS")
    names = make_variable(text, "REPRODUCE_FIRST") + make_variable(text, "REPRODUCE_THEN")
    configs = [n for n in names if not n.startswith("report-")]
    reports = [n.removeprefix("report-") for n in names if n.startswith("report-")]
    assert len(configs) == len(set(configs)), "a config is scheduled twice"
    on_disk = {f"{p}/{c.stem}" for p in papers for c in (ROOT / "configs" / p).glob("*.yaml")}
    assert set(configs) == on_disk, (f"not scheduled: {sorted(on_disk - set(configs))}; "
                                     f"no such config: {sorted(set(configs) - on_disk)}")
    assert set(reports) <= set(papers)
