"""The generated reference pages: an MkDocs hook (``hooks:`` in mkdocs.yml).

Each page is written at build time from the one place the code defines it, so it cannot drift:
the commands from click (``rankbench.cli.main``), the config keys from the pydantic schema
(``rankbench.config.Config``), the components from the registries (what ``rankbench list`` shows),
the metrics from their declarations (``rankbench.metrics.METRICS``) and the grades from
:func:`grade_legend` (from ``rankbench.report.check.Grade``). ``tests/docs/test_reference.py`` checks the pages hold every one.
"""

from __future__ import annotations

import inspect
import re
import typing

import click

#: the generated pages, by path under docs/, and what writes each
PAGES = {
    "reference/cli.md": "cli_page",
    "reference/config.md": "config_page",
    "reference/components.md": "components_page",
    "reference/metrics.md": "metrics_page",
    "reference/grades.md": "grades_page",
}


# ----------------------------------------------------------------------------------- mkdocs hook
def on_files(files, config):
    """Add the generated pages to the site's files (before the nav is built)."""
    from mkdocs.structure.files import File

    for path, fn in PAGES.items():
        files.append(File.generated(config, path, content=globals()[fn]()))
    return files


def on_page_content(html, page, config, files):
    """Sphinx roles and literal-block markers left in rendered docstrings, as plain code and text."""
    html = re.sub(r":(?:mod|class|func|meth|attr|data|exc|obj):<code>~?", "<code>", html)
    return re.sub(r"::</p>", ":</p>", html)


# ------------------------------------------------------------------------- griffe (mkdocstrings)
_SECTION = re.compile(r"^(\s*)(Parameters|Other Parameters|Returns|Yields|Raises|Attributes)\n\1-+\n", re.M)
_TYPE = re.compile(r"[\w\[\]., |*-]+")
_ENTRY = r"(?:\w+(?:\s*,\s*\w+)*|\([\w, ]+\))"   # a name, names, or a returned tuple


def house_docstring(text: str) -> str:
    """The house's ``name : what it is, in prose`` entries as numpy's ``name`` + description.

    numpy style reads the text after `` : `` as a type; the house writes a description there
    (``trials, seed : override the config's.``), which would render as code in the type column.
    An entry whose text is not a plain type (prose: a period at its end, brackets, quotes, more
    than six words) gets it on the next line, as its description."""
    out, in_section, indent = [], False, ""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and _SECTION.match(line + "\n" + lines[i + 1] + "\n"):
            in_section, indent = True, re.match(r"\s*", line).group(0)
        elif line.strip() and not line.startswith(indent + " ") and not re.fullmatch(r"\s*-+", line) \
                and not re.fullmatch(rf"{indent}{_ENTRY}( : .+)?", line):
            in_section = False
        m = re.fullmatch(rf"({indent})({_ENTRY}) : (.+)", line) if in_section else None
        if m and not (_TYPE.fullmatch(m[3]) and not m[3].endswith(".") and len(m[3].split()) <= 6):
            out += [f"{m[1]}{m[2]}", f"{m[1]}    {m[3]}"]
        else:
            out.append(line)
    return "\n".join(out)


try:
    import griffe

    class HouseDocstrings(griffe.Extension):
        """mkdocstrings' docstrings read as the house writes them (:func:`house_docstring`)."""

        def on_instance(self, *, obj, **kwargs):
            if obj.docstring is not None:
                obj.docstring.value = house_docstring(obj.docstring.value)
except ImportError:  # the page writers and their tests need no griffe
    pass


# ------------------------------------------------------------------------------------- helpers
def _cell(text: str) -> str:
    """Text for one Markdown table cell: one line, pipes escaped, < and > outside code spans too."""
    parts = " ".join(str(text).split()).split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _rst(text: str) -> str:
    """Docstring text as Markdown: ``x`` to `x`, :func:`x` to `x`."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def _paragraphs(doc: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", doc or "") if p.strip()]


def _numpy_parameters(doc: str) -> dict[str, str]:
    """``{name: description}`` from a numpy-style docstring's Parameters section."""
    m = re.search(r"^Parameters\n-+\n(.*?)(?:^\S[^\n]*\n-+\n|\Z)", house_docstring(doc or ""), re.S | re.M)
    out: dict[str, str] = {}
    if not m:
        return out
    name = None
    for line in m.group(1).splitlines():
        head = re.match(r"^(\w+(?:\s*,\s*\w+)*)\s*(?::.*)?$", line)
        if head and not line.startswith(" "):
            names = [n.strip() for n in head.group(1).split(",")]
            for n in names:
                out[n] = ""
            name = names
        elif name and line.strip():
            for n in name:
                out[n] = (out[n] + " " + line.strip()).strip()
    return out


# ----------------------------------------------------------------------------------------- CLI
def _help_blocks(text: str) -> list[str]:
    """A click help text as Markdown: ``\\b`` paragraphs (kept as typed) become code blocks."""
    out = []
    for para in re.split(r"\n\s*\n", inspect.cleandoc(text or "")):
        if para.startswith("\b"):
            lines = para.split("\n")[1:]
            title = lines[0] if lines and lines[0].rstrip().endswith(":") else ""
            body = lines[1:] if title else lines
            if title:
                out.append(f"**{title.rstrip(':')}**")
            out.append("```text\n" + inspect.cleandoc("\n".join(body)) + "\n```")
        else:
            out.append(" ".join(para.split()))
    return out


def cli_page() -> str:
    from rankbench.cli import main

    lines = ["# Command line", "",
             "Every command and option of `rankbench`, generated from the command line itself (what "
             "`rankbench COMMAND --help` prints).", ""]
    root = click.Context(main, info_name="rankbench")
    lines += _help_blocks(main.help) + [""]
    for name in sorted(main.commands):
        cmd = main.commands[name]
        ctx = click.Context(cmd, info_name=name, parent=root)
        lines += [f"## rankbench {name}", "", "```text", cmd.get_usage(ctx).replace("Usage: ", ""), "```", ""]
        for block in _help_blocks(cmd.help):
            lines += [block, ""]
        rows = [p.get_help_record(ctx) for p in cmd.get_params(ctx) if isinstance(p, click.Option)]
        lines += ["| option | meaning |", "|---|---|"]
        lines += [f"| `{_cell(opts)}` | {_cell(help_)} |" for opts, help_ in filter(None, rows)]
        lines.append("")
    return "\n".join(lines)


# -------------------------------------------------------------------------------------- config
def _type_name(annotation) -> str:
    text = getattr(annotation, "__name__", None) if not typing.get_args(annotation) else None
    text = text or str(annotation)
    text = re.sub(r"typing\.|rankbench\.config\.|annotated_types\.|pydantic\.\w+\.", "", text)
    # FieldInfo(... metadata=[AllowInfNan(...)]): one level of brackets inside (a finite float)
    text = re.sub(r"Annotated\[(\w+), FieldInfo\((?:[^()]|\([^()]*\))*\)\]", r"\1", text)
    return text.replace("NoneType", "None").replace(" | ", " or ")


def _constraints(field) -> str:
    words = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "min_length": "at least", "max_length": "at most"}
    out = []
    for meta in field.metadata:
        for attr, word in words.items():
            value = getattr(meta, attr, None)
            if value is not None:
                out.append(f"{word} {value}" + (" item(s)" if "length" in attr else ""))
        if getattr(meta, "allow_inf_nan", None) is False:
            out.append("finite")
    return ", ".join(out)


def _comments(cls) -> dict[str, str]:
    """``{field: text}`` of the ``#:`` comments written above each field of a schema class."""
    out, pending = {}, []
    for line in inspect.getsource(cls).splitlines():
        s = line.strip()
        if s.startswith("#:"):
            pending.append(s[2:].strip())
            continue
        m = re.match(r"(\w+)\s*:", s)
        if m and pending:
            out[m.group(1)] = " ".join(pending)
        pending = [] if not s.startswith("#") else pending
    return out


def _models(model) -> list:
    """``model`` and every schema class reached from its fields, in order of first use."""
    from pydantic import BaseModel

    seen, order = set(), []

    def walk(m):
        if m in seen:
            return
        seen.add(m)
        order.append(m)
        for f in m.model_fields.values():
            stack = [f.annotation]
            while stack:
                t = stack.pop()
                if inspect.isclass(t) and issubclass(t, BaseModel):
                    walk(t)
                stack.extend(typing.get_args(t))

    walk(model)
    return order


def config_page() -> str:
    from pydantic_core import PydanticUndefined

    from rankbench.config import Config

    lines = ["# Config keys", "",
             "Every key of an experiment config (YAML), generated from the schema "
             "(`rankbench.config.Config`) that checks it. A key not listed is an error, except in "
             "`dataset`, `features[]`, `rankers[]` and `protocol`, whose other keys are the named "
             "component's parameters ([Components](components.md)).", ""]
    models = _models(Config)
    for model in models:
        title = "Config (the top level)" if model is Config else model.__name__
        lines += [f"## {title}", ""]
        if model.__doc__ and model is not Config and "Usage docs" not in model.__doc__:
            lines += [_rst(" ".join(inspect.cleandoc(model.__doc__).split())), ""]
        if model.model_config.get("extra") == "allow":
            lines += ["Other keys: the component's parameters.", ""]
        comments = _comments(model)
        lines += ["| key | type | default | constraint | meaning |", "|---|---|---|---|---|"]
        for name, f in model.model_fields.items():
            key = f.alias or name
            if model is Config and name == "name":   # set from the file's name when a file omits it
                default = "(the config file's name)"
            elif f.default is PydanticUndefined and f.default_factory is None:
                default = "(required)"
            else:
                default = repr(f.default_factory() if f.default_factory else f.default)
            kind = re.sub(rf"\b({'|'.join(m.__name__ for m in models)})\b",
                          lambda m: f"[{m[1]}](#{m[1].lower()})", _type_name(f.annotation))
            lines.append(f"| `{key}` | {_cell(kind)} | {_cell(_code(default))} | "
                         f"{_cell(_constraints(f))} | {_cell(_rst(comments.get(name, '')))} |")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- components
def components_page() -> str:
    from rankbench import app

    kinds = app.components()
    lines = ["# Components", "",
             "Every registered component, by kind, with its parameters: what `rankbench list KIND NAME` "
             "shows, generated from the registries. A config names a component by its registry name "
             "(or an import path `module:Class`, or `path/to/file.py:Class`); each parameter is checked "
             "against its constraint before any work.", ""]
    lines += [f"- [{kind}](#{kind}): {len(rows)}" for kind, rows in kinds.items()] + [""]
    for kind, rows in kinds.items():
        lines += [f"## {kind}", ""]
        for name, _summary, _origin in rows:
            d = app.describe_component(kind, name)
            doc = d["doc"]
            described = _numpy_parameters(doc)
            first = _paragraphs(doc)[:1]
            lines += [f"### {name}", "", f"`{d['class']}`", ""]
            lines += [_rst(" ".join(first[0].split())), ""] if first else []
            if d["parameters"]:
                lines += ["| parameter | constraint | default | meaning |", "|---|---|---|---|"]
                lines += [f"| `{p}` | {_cell(want)} | {_cell(_code(default))} | {_cell(_rst(described.get(p, '')))} |"
                          for p, want, default in d["parameters"]]
            else:
                lines.append("No parameters.")
            lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------- metrics
def metrics_page() -> str:
    import rankbench.metrics as metrics

    lines = ["# Metrics", "",
             "Every metric a run can record, from its one declaration (`rankbench.metrics.METRICS`). "
             "`K` and `D` stand for the number in a metric's name (`cmc@10`, `map@100`); a per-task "
             "value is `metric/<task>` (an attribute, a concept), and the plain name is the mean over "
             "tasks. Rates are fractions in the files and percentages in tables and plots.", "",
             "| metric | what it is | better | unit | kind |", "|---|---|---|---|---|"]
    for m in metrics.METRICS:
        unit = "% (a fraction in files)" if m.rate else m.unit
        kind = "cost" if m.cost else "quality"
        lines.append(f"| `{m.family}` | {_cell(m.label)} | {'higher' if m.higher_is_better else 'lower'} | "
                     f"{_cell(unit)} | {kind} |")
    lines += ["", "## Conventions", "", _rst(inspect.getdoc(metrics).split("\n\n", 1)[1]), "",
              "## Definitions", "",
              "The functions that compute them (the protocols call these on checked scores):", "",
              "::: rankbench.metrics",
              "    options:",
              "      show_root_heading: false",
              "      show_root_toc_entry: false",
              "      show_source: false",
              "      heading_level: 3",
              "      members_order: source",
              "      filters: [\"!^_\", \"!^MetricInfo$\", \"!^METRICS$\", \"!^finite$\", \"!^labels$\", \"!^metric_\", \"!^is_rate$\"]",
              ""]
    return "\n".join(lines)


# -------------------------------------------------------------------------------------- grades
def grade_legend() -> list[tuple[str, str, bool]]:
    """(grade, meaning, fails ``rankbench check``) for every grade, in the order reports count them,
    from the one definition: the ``Grade`` enum of ``rankbench.report.check``."""
    from rankbench.report.check import Grade

    return [(g.value, g.meaning, g.fails) for g in Grade]


def grades_page() -> str:
    lines = ["# Grades", "",
             "What `rankbench check`, `summary.md` and the reports call each published number and claim, "
             "from the grades' one definition. `check` exits 1 when any grade fails it.", "",
             "| grade | meaning | fails `check` |", "|---|---|---|"]
    lines += [f"| **{g}** | {_cell(meaning)} | {'yes' if fails else 'no'} |" for g, meaning, fails in grade_legend()]
    return "\n".join(lines) + "\n"
