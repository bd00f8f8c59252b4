"""The generated reference pages hold everything the code defines: every command and option, every
config key, every registered component and parameter, every metric and every grade. The oracle is
the code's own tables (click, pydantic, the registries), walked here independently of the page
writers; a page that drops an entry fails."""

import importlib.util
from pathlib import Path

import click
import pytest

from rankbench import app
from rankbench.cli import main
from rankbench.config import Config
from rankbench.metrics import METRICS
from rankbench.report.check import Grade

HOOK = Path(__file__).resolve().parents[2] / "docs" / "reference" / "_generate.py"


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("docs_reference_generate", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_command_and_option_is_in_the_cli_page(gen):
    page = gen.cli_page()
    for name, cmd in main.commands.items():
        assert f"## rankbench {name}\n" in page
        for p in cmd.params:
            if isinstance(p, click.Option):
                assert all(f"{o}" in page.split(f"## rankbench {name}\n")[1].split("\n## ")[0] for o in p.opts), \
                    (name, p.opts)


def test_every_config_key_is_in_the_config_page(gen):
    page = gen.config_page()
    seen, stack = set(), [Config]
    while stack:
        model = stack.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, f in model.model_fields.items():
            assert f"| `{f.alias or name}` |" in page, (model.__name__, name)
            for t in [f.annotation, *getattr(f.annotation, "__args__", ())]:
                for u in [t, *getattr(t, "__args__", ())]:
                    if isinstance(u, type) and hasattr(u, "model_fields"):
                        stack.append(u)
    assert {"ClaimCfg", "ExpectedCfg", "RankerCfg"} <= {m.__name__ for m in seen}
    assert "| `from` |" in page            # a key whose Python name differs (from_)


def test_every_component_and_parameter_is_in_the_components_page(gen):
    page = gen.components_page()
    n = 0
    for kind, rows in app.components().items():
        section = page.split(f"\n## {kind}\n")[1].split("\n## ")[0]
        for name, _, _ in rows:
            block = section.split(f"\n### {name}\n")[1].split("\n### ")[0]
            for p, _, _ in app.describe_component(kind, name)["parameters"]:
                assert f"| `{p}` |" in block, (kind, name, p)
                n += 1
    assert n > 100


def test_a_parameter_is_described_from_its_docstring(gen):
    doc = "Summary.\n\nParameters\n----------\nC : float\n    Loss weight.\na, b : int\n    Both.\n\nNotes\n-----\nx : y\n"
    assert gen._numpy_parameters(doc) == {"C": "Loss weight.", "a": "Both.", "b": "Both."}
    # the house's one-line entries: prose after the colon is the description, a type is not
    house = "S.\n\nParameters\n----------\nk : int\n    Neighbours.\ntrials, seed : override the config's.\n"
    assert gen._numpy_parameters(house) == {"k": "Neighbours.", "trials": "override the config's.",
                                            "seed": "override the config's."}


def test_every_metric_and_its_direction_is_in_the_metrics_page(gen):
    page = gen.metrics_page()
    for m in METRICS:
        row = next(line for line in page.splitlines() if line.startswith(f"| `{m.family}` |"))
        assert ("| lower |" in row) == (not m.higher_is_better), m.family


def test_every_grade_is_in_the_grades_page(gen):
    page = gen.grades_page()
    for grade in Grade:
        assert f"| **{grade.value}** | {' '.join(grade.meaning.split())} |" in page
    assert "| **FAIL** |" in page and "| **OK** |" in page
