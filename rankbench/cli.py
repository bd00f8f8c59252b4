"""The ``rankbench`` command line: parses arguments, calls :mod:`rankbench.app`, prints the result.

Every user mistake is one line on stderr, ``rankbench: error: ...`` (one line per mistake when
``validate`` finds several), and exit status 1 (2 for a command-line usage error, 130 after
Ctrl-C, 143 after SIGTERM, 141 without a word when standard output's reader stops reading, as
in ``rankbench check RUN | head``); so is every error of the file system (permissions, a full disk, a
read-only mount, a symbolic-link loop: the path and what the system says). A traceback means a
bug in rankbench. Progress and warnings go to
stderr through :mod:`logging`: ``-q`` keeps warnings and errors only, ``-v`` adds debug events.
"""

from __future__ import annotations

import math
import os
import select
import signal
import sys
from pathlib import Path

import click

from . import __version__
from .errors import RankbenchError, Terminated, os_error_line


def _fail(message: str, status: int = 1) -> None:
    click.echo(f"rankbench: error: {message}", err=True)
    sys.exit(status)


def _reader_gone(exc: BrokenPipeError) -> None:
    """Standard output's reader stopped reading (``rankbench check RUN | head``): stop without a
    word, as ``cat`` does, with the shell's status for it (128 + SIGPIPE); any other broken pipe is
    an error like any other."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        gone = any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):   # no poll (Windows), no file descriptor
        gone = False
    if not gone:
        _fail(os_error_line(exc))
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # for the interpreter's last flush
    sys.exit(141)


def _terminate(signum, frame) -> None:
    raise Terminated()


class _Command(click.Command):
    """A command that turns a user mistake into one line on stderr and a non-zero exit, sets up
    logging from its ``-q`` / ``-v``, and handles SIGTERM as Ctrl-C (what was kept, how to resume)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.params += [click.Option(["--verbose", "-v"], is_flag=True,
                                     help="Also debug events (each job started, each fit's progress)."),
                        click.Option(["--quiet", "-q"], is_flag=True, help="Warnings and errors only: no progress.")]

    def invoke(self, ctx):
        from .app import RunInterrupted, configure_logging

        configure_logging(-1 if ctx.params["quiet"] else 1 if ctx.params["verbose"] else 0)
        try:
            signal.signal(signal.SIGTERM, _terminate)
        except ValueError:  # not the main thread (an embedding program): leave SIGTERM alone
            pass
        try:
            return ctx.invoke(self.callback, **{k: v for k, v in ctx.params.items() if k not in ("quiet", "verbose")})
        except RunInterrupted as exc:
            _fail(f"{exc}; continue with: rankbench run --resume {exc.folder.path}", exc.status)
        except RankbenchError as exc:  # several independent mistakes (validate): one line each
            for message in getattr(exc, "messages", None) or [str(exc).replace("\n", " ")]:
                click.echo(f"rankbench: error: {message}", err=True)
            sys.exit(1)
        except Terminated:
            _fail("terminated (SIGTERM)", 143)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except BrokenPipeError as exc:
            _reader_gone(exc)
        except OSError as exc:  # the file system: a full disk, a read-only mount, a symlink loop ...
            _fail(os_error_line(exc))


class _Group(click.Group):
    """Usage errors (an unknown option, a bad option value) as one line, like every other error."""

    command_class = _Command

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        kwargs.setdefault("prog_name", "rankbench")
        try:
            rv = super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort:
            _fail("interrupted", 130)
        except click.UsageError as exc:
            hint = f" (see: {exc.ctx.command_path} --help)" if exc.ctx else ""
            _fail(f"{exc.format_message()}{hint}", 2)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code or 1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _command_line() -> list[str]:
    """The command as a user would retype it (from click's parsed values, not the process argv)."""
    ctx = click.get_current_context()
    words = ["rankbench", ctx.info_name]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if value in (None, False, ()) or value == param.default:
            continue
        if isinstance(param, click.Argument):
            words.append(str(value))
            continue
        flag = max(param.opts, key=len)
        if value is True:
            words.append(flag)
        else:
            for v in value if isinstance(value, tuple) else (value,):
                words += [flag, str(v)]
    return words


def _overrides(sets, trials=None, seed=None, regress=False, methods=(), max_settings=None):
    from .app import Overrides, parse_set

    # --methods A B, --methods A,B, --methods A --methods B: the words as typed (the config's ranker
    # names decide what a comma means); --methods "" selects nothing and is refused
    over = Overrides([parse_set(s) for s in sets], trials, seed, regress, list(methods) or None)
    if max_settings is not None:
        over.max_settings = max_settings
    return over


def _finite(ctx, param, value):
    """A number option must be finite (``--dask-timeout nan`` passes a range check)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"expected a finite number, got {value}")
    return value


_max_settings = click.option("--max-settings", type=click.IntRange(min=1), metavar="N",
                             help="Accept a sweep of up to N settings (default 10,000; counted before anything "
                                  "else).")


class _MethodsCommand(_Command):
    """A command whose ``--methods`` takes the words up to the next option or a .yaml file."""

    def parse_args(self, ctx, args):
        out, i = [], 0
        while i < len(args):
            out.append(args[i])
            i += 1
            if out[-1] != "--methods":
                continue
            names = []
            while i < len(args) and not args[i].startswith("-") and not args[i].endswith((".yaml", ".yml")):
                names.append(args[i])
                i += 1
            if names:
                out[-1:] = [w for n in names for w in ("--methods", n)]
            elif i < len(args) and args[i].startswith("-"):   # not a name: the next option
                raise click.UsageError(f"--methods: expected a ranker name, got the option {args[i]!r} (a name "
                                       "that starts with '-': --methods=NAME)", ctx)
        return super().parse_args(ctx, out)


_methods = click.option("--methods", multiple=True, metavar="NAME...",
                        help="Run only these rankers of the config (display names: --methods PRSVM L1-norm, "
                             "--methods PRSVM,L1-norm or --methods PRSVM --methods L1-norm; quote a name that holds "
                             "a comma or a space: --methods 'A, B'); published numbers and claims of the others "
                             "are graded NOT RUN.")


def _data_root(default: str = "./datasets"):
    """The ``--data-root`` option; ``default``: where the data are without it or $RANKBENCH_DATA."""
    return click.option("--data-root", type=click.Path(file_okay=False), envvar="RANKBENCH_DATA",
                        help="Folder with one sub-folder per dataset (viper/, umist/, ...). Default: $RANKBENCH_DATA, "
                             f"else {default}.")


def _jobs(what: str):
    """The ``--jobs`` option: worker processes ``what`` for."""
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
                        help=f"Parallel worker processes {what}.")


_style = click.option("--style", type=click.Path(dir_okay=False), metavar="FILE.mplstyle",
                      help="A matplotlib style file for the figures, applied on top of rankbench's own "
                           "(e.g. font.size: 11, font.family: serif).")

_sets = click.option("--set", "sets", multiple=True, metavar="KEY.PATH=VALUE",
                     help="Override a config key, e.g. --set protocol.n_test=100 --set rankers.PRSVM.C=1.")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="rankbench")
def main():
    """Reproduce classic ranking benchmarks and compare rankers under the same protocols.

    \b
    Examples:
      rankbench run configs/quickstart.yaml
      rankbench run configs/yuli/umist_table3_K.yaml --trials 3 --data-root ../shared/datasets --jobs 2
      rankbench check results/umist_table3_K/latest
      rankbench compare results/quickstart/latest --methods Bhattacharyya L1-norm
    """


@main.command(cls=_MethodsCommand)
@click.argument("config", type=click.Path(dir_okay=False), required=False)
@_data_root("(with --resume) the run's own, else ./datasets")
@click.option("--out", type=click.Path(file_okay=False),
              help="New run folder (default results/<name>/<timestamp>, linked as results/<name>/latest); "
                   "never overwritten.")
@click.option("--resume", type=click.Path(file_okay=False), metavar="RUN_DIR",
              help="Continue the interrupted run in RUN_DIR with its own config (CONFIG optional).")
@click.option("--trials", type=click.IntRange(min=1), help="Override the config's trials.")
@click.option("--seed", type=click.IntRange(min=0), help="Override the config's seed.")
@_jobs("on this machine (at most its cores, and the jobs to run); with --executor dask, for the feature "
       "extraction only (the cluster's workers run the jobs)")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where jobs run: this machine, or a Dask cluster (needs Dask: pip install -e '.[dask]' in "
                   "the rankbench checkout).")
@click.option("--scheduler", metavar="tcp://HOST:PORT",
              help="With --executor dask: the cluster's scheduler (default: a LocalCluster, one worker per core).")
@click.option("--dask-timeout", type=click.FloatRange(min=0, min_open=True), default=20.0, show_default=True,
              callback=_finite,
              metavar="SECONDS", help="With --executor dask: wait this long for the scheduler, and for a worker.")
@_sets
@_methods
@click.option("--regress", is_flag=True, help="Apply the config's regress: block (CI's reduced run).")
@_max_settings
@click.option("--no-cache", is_flag=True, help="Compute everything afresh: features, and results that identical jobs "
              "computed before (by default taken from the cache, with their times as measured then).")
@click.option("--no-plots", is_flag=True, help="Tables only.")
@_style
@click.option("--mlflow", "mlflow_store", type=click.Path(file_okay=False), metavar="DIR",
              help="Also log the run to the local MLflow store DIR (as export --format mlflow; the extra "
                   "rankbench[mlflow]).")
def run(config, data_root, out, resume, trials, seed, jobs, executor, scheduler, dask_timeout, sets, methods, regress,
        max_settings, no_cache, no_plots, style, mlflow_store):
    """Run the experiment described by CONFIG and write tables and plots.

    \b
    Writes config.yaml, splits.json, trials/, trials.csv, summary.csv, summary.md,
    manifest.json and plots/ into a new run folder. Results are saved per trial as they
    finish; an interrupted run continues with --resume RUN_DIR.
    \b
    Examples:
      rankbench run configs/quickstart.yaml --trials 3 --set features.colour.bins=8 --out results/bins8
      rankbench run --resume results/bins8
      rankbench run configs/quickstart.yaml --executor dask --trials 2
      rankbench run configs/quickstart.yaml --methods L1-norm Bhattacharyya --out results/two
      rankbench run configs/quickstart.yaml --trials 2 --mlflow mlruns
    """
    from . import app

    if resume and out:
        raise click.UsageError("--out: a resumed run stays in its own folder (RUN_DIR); drop --out, or start a new "
                               "run with --out")
    if mlflow_store:
        app.mlflow_ready()       # before the run, not after it
    overrides = _overrides(sets, trials, seed, regress, methods, max_settings)
    options = app.EngineOptions(data_root=data_root, jobs=jobs, executor=executor, scheduler=scheduler,
                                dask_timeout=dask_timeout, use_cache=not no_cache, progress=app.progress_shown(),
                                invocation={"argv": _command_line(), "overrides": list(sets),
                                            "trials": trials, "seed": seed, "regress": regress,
                                            "methods": overrides.methods})
    result = app.run(config, overrides=overrides, out=out, resume=resume, options=options,
                     plots=False if no_plots else None, style=style)
    click.echo(result.report.markdown)
    click.echo(f"results in {result.folder.path}")
    if mlflow_store:
        parent = app.export(result.folder.path, "mlflow", mlflow_store).run_id
        click.echo(f"logged to the MLflow store {mlflow_store} (parent run {parent})")
    if result.outcome.failed:  # each was named as it failed; the exit status says the run is not whole
        _fail(app.failed_line(result.outcome))


@main.command(cls=_MethodsCommand)
@click.argument("config", type=click.Path(dir_okay=False))
@_data_root()
@_sets
@_methods
@click.option("--trials", type=click.IntRange(min=1), help="Override the config's trials, as run --trials.")
@click.option("--seed", type=click.IntRange(min=0), help="Override the config's seed, as run --seed.")
@click.option("--regress", is_flag=True, help="Validate with the regress: block applied.")
@_max_settings
def validate(config, data_root, sets, methods, trials, seed, regress, max_settings):
    """Check CONFIG without running it: exactly the checks `run` makes before any work.

    \b
    The config's keys and values, every component's parameters, the dataset (it is loaded)
    and whether each ranker can run under the protocol. Every mistake found is reported,
    one line each.
    \b
    Example:
      rankbench validate configs/yuli/umist_table3_K.yaml --data-root ../shared/datasets
    """
    from . import app

    p = app.validate(config, _overrides(sets, trials, seed, regress, methods, max_settings), data_root)
    cfg = p.experiment.config
    n = len(p.settings)
    trials = sorted({st.config.trials for st in p.settings})   # a sweep may set them
    click.echo(f"{config}: OK - dataset {cfg.dataset.name} ({len(p.settings[0].dataset)} items), protocol "
               f"{cfg.protocol.name}, {len(cfg.run_rankers())} ranker(s), "
               f"{trials[0]}{f'-{trials[-1]}' if len(trials) > 1 else ''} trial(s)"
               + (f", {n} sweep settings" if n > 1 else "") + f", {p.n_jobs} jobs")


@main.command(name="list")
@click.argument("kind", required=False,
                type=click.Choice(["datasets", "features", "rankers", "protocols", "preprocessors"]))
@click.argument("name", required=False)
def list_(kind, name):
    """List components, or describe one: its parameters, their constraints and defaults.

    \b
    Examples:
      rankbench list rankers
      rankbench list rankers prsvm
    """
    from . import app

    if name:
        if not kind:
            raise click.UsageError("give the kind before the name, e.g. rankbench list rankers prsvm")
        d = app.describe_component(kind, name)
        click.echo(f"{d['name']}  ({d['class']}, from {d['origin']})\n")
        click.echo(d["doc"] + "\n")
        click.echo("parameters:")
        for pname, want, default in d["parameters"]:
            click.echo(f"  {pname:18s} {want}  [default: {default}]")
        return
    for k, rows in app.components(kind).items():
        click.echo(f"{k}:")
        for cname, doc, origin in rows:
            where = "" if origin == "rankbench" else f"  [{origin}]"
            click.echo(f"  {cname:22s} {doc}{where}")
    for line in app.plugin_errors():
        click.echo(f"warning: plug-in not loaded: {line}", err=True)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--no-plots", is_flag=True, help="Tables only.")
@click.option("--latex", is_flag=True, help="Print the tables as LaTeX (booktabs) instead of Markdown.")
@click.option("--max-rank", type=click.IntRange(min=1), metavar="K",
              help="Last rank of the CMC figures (default: the largest rank the run tabulates).")
@_style
def report(run_dir, no_plots, latex, max_rank, style):
    """Rebuild tables and plots of RUN_DIR from its stored per-trial results.

    \b
    Writes trials.csv, summary.csv, curves.csv, diagnostics.csv, summary.md, summary.tex,
    results.json and plots/ (PNG at 300 dpi, SVG and PDF) into RUN_DIR.
    \b
    Examples:
      rankbench report results/quickstart/latest
      rankbench report results/quickstart/latest --latex --max-rank 20
      rankbench report results/quickstart/latest --style configs/styles/paper.mplstyle
    """
    from . import app

    built = app.report(run_dir, plots=not no_plots, max_rank=max_rank, style=style)
    click.echo(built.latex if latex else built.markdown)


class _GradedCommand(_Command):
    """A command whose help lists the grades and the exit status from their one definition
    (:class:`rankbench.app.Grade`), read when the help is shown."""

    def format_help_text(self, ctx, formatter):
        from .app import Grade

        super().format_help_text(ctx, formatter)
        with formatter.section("Grades"):
            formatter.write_dl([(g.value, g.meaning) for g in Grade])
        failing = [g.value for g in Grade if g.fails]
        with formatter.section("Exit status"):
            formatter.write_dl([
                ("0", f"nothing failed ({', '.join(g for g in Grade if not g.fails)}), or nothing to grade"),
                ("1", f"a {', '.join(failing[:-1])} or {failing[-1]} grade, or an incomplete run (failed jobs, "
                      "missing results)"),
                ("2", "a usage error: a wrong argument, a folder that is not a run, a bad --expected file")])


@main.command(cls=_GradedCommand)
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--expected", type=click.Path(dir_okay=False),
              help="A YAML file with 'expected:' and / or 'claims:' lists (default: the run's own config).")
def check(run_dir, expected):
    """Grade RUN_DIR against its config's published numbers and claims.

    A grade line says when the run has fewer trials than the paper.

    \b
    Example:
      rankbench check results/umist_table3_K/latest
    """
    from . import app

    try:
        res = app.check(run_dir, expected)
    except RankbenchError as exc:
        _fail(str(exc).replace("\n", " "), 2)
    for line in res.status:
        click.echo(line.replace("**", ""))
    if res.note:
        click.echo(res.note)
    if res.rows:
        click.echo(app.check_markdown(res.rows))
    if res.claims:
        click.echo("\n" + app.claims_markdown(res.claims))
    for line in (app.counts_line(res.rows, "published number"), app.counts_line(res.claims, "claim")):
        if line:
            click.echo(line)
    sys.exit(1 if res.failed else 0)


@main.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Output .npz file.")
@click.option("--force", is_flag=True, help="Replace --out if it exists (default: refuse).")
@_data_root()
@_jobs("for the extraction")
def features(config, out, force, data_root, jobs):
    """Extract CONFIG's feature sets for the whole dataset into an .npz file.

    The file holds ids (one per item), the item columns the dataset has among identity, cam,
    label, category, subject and group, and one array X_<set> (items x dimensions) per feature set.

    \b
    Example:
      rankbench features configs/quickstart.yaml --out quickstart_features.npz
    """
    from . import app

    shapes = app.export_features(config, out, data_root, jobs, progress=app.progress_shown(), overwrite=force)
    click.echo(f"wrote {out}: " + ", ".join(f"{k} {v}" for k, v in shapes.items()))


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--format", "fmt", required=True, type=click.Choice(["trec", "svmlight", "json", "mlflow"]),
              help="trec: qrels and run files of a retrieval run; svmlight: the trials' training and test rows "
                   "for RankLib / LightGBM; json: the results document (schema_version 1); mlflow: the run "
                   "logged to a local MLflow store.")
@click.option("--out", type=click.Path(), help="A folder (trec, svmlight; default RUN_DIR/export/<format>; mlflow: "
                                               "the store, default ./mlruns) or a file (json; default: print it).")
@click.option("--force", is_flag=True, help="Replace an existing --out file (json).")
@_data_root("the one the run recorded, else ./datasets")
@_jobs("for features not in the cache (svmlight)")
def export(run_dir, fmt, out, data_root, jobs, force):
    """Take RUN_DIR's results or data to other tools: TREC, svmlight / RankLib, JSON, MLflow.

    \b
    trec      trial<k>.qrels and trial<k>.<method>.run per setting: trec_eval / pytrec_eval
              give the run's AP (needs a run with protocol.keep_scores: true), e.g.
              trec_eval -m map -m map_cut trec/trial0.qrels trec/trial0.Logistic.run
    svmlight  trial<k>.train.svm / .test.svm per feature set, one qid per concept or attribute,
              with .ids files; relative attributes also trial<k>.pairs.csv (the exact pairs)
    json      the machine-readable results (results.json: schema_version, summary, trials, grades)
    mlflow    a run in the local MLflow store --out (default ./mlruns; pip install 'rankbench[mlflow]'):
              the config's parameters and the run's files, a child run per setting and method
              with its metrics (mean, .std, and each trial as the .trial history); see it with
              mlflow ui --backend-store-uri mlruns
    \b
    Examples:
      rankbench run configs/examples/scene_retrieval.yaml --set protocol.keep_scores=true --data-root ../shared/datasets
      rankbench export results/scene_retrieval/latest --format trec --out trec/
      rankbench export results/scene_retrieval/latest --format svmlight
      rankbench export results/quickstart/latest --format json --out quickstart.json
      rankbench export results/quickstart/latest --format mlflow --out mlruns
    """
    import json

    from . import app

    got = app.export(run_dir, fmt, out, data_root, jobs, progress=app.progress_shown(), overwrite=force)
    if fmt == "json":
        click.echo(json.dumps(got.document, indent=1, ensure_ascii=False) if out is None else f"wrote {out}")
    elif fmt == "mlflow":
        click.echo(f"logged to the MLflow store {out or 'mlruns'} (parent run {got.run_id})")
    else:
        click.echo(f"wrote {len(got.files)} files into {out or f'{run_dir}/export/{fmt}'}")


@main.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--out", default="results/REPORT.md", show_default=True, type=click.Path(dir_okay=False),
              help="The Markdown report; the self-contained HTML page is written beside it (.html).")
def collect(run_dirs, out):
    """Gather several runs into REPORT.md and REPORT.html: per paper, our numbers beside the published ones.

    \b
    The HTML page is self-contained (figures inline, no network): a verdict per paper,
    graded numbers with their reasons, claims, and per run the config, commit and command
    that reproduce it, its tables (click a header to sort) and its figures.
    \b
    Example:
      rankbench collect results/quickstart/* --out results/REPORT.md
    """
    from . import app

    res = app.collect(list(run_dirs), out)
    counts = ", ".join(f"{v} {k}" for k, v in res.counts.items()) or "nothing graded"
    click.echo(f"wrote {res.markdown} and {res.html} ({res.n_runs} runs; {counts})")


@main.command()
@click.argument("paper")
@click.argument("run_dirs", nargs=-1, type=click.Path(file_okay=False), metavar="[RUN_DIR]...")
@click.option("--out", type=click.Path(dir_okay=False), help="The page (default docs/papers/PAPER.md).")
@click.option("--configs", default="configs", show_default=True, type=click.Path(file_okay=False),
              help="The folder of the papers' configs (a run is graded with its committed config's numbers).")
def notes(paper, run_dirs, out, configs):
    """Write PAPER's page from its run folders (default: every run folder in results/PAPER/).

    \b
    The verdict first, then the published numbers and claims graded with their reasons, what
    differs and why, each run's facts, tables and the rankers' choices, then the history (the
    hand-written parts: the page's name with .opening.md, .differs.md, .history.md). Configs
    hold the configuration; what was measured lives in these pages (make reproduce-PAPER).
    \b
    Example:
      rankbench notes yuli results/umist_table3_K/latest --out docs/papers/yuli.md
    """
    from . import app

    res = app.notes(paper, list(run_dirs) or None, out, configs)
    click.echo(f"wrote {res.path} ({res.n_runs} runs; {res.n_committed} graded with their committed config)")


@main.command()
@click.argument("args", nargs=-1, required=True, metavar="[PAPER] RUN_DIR...")
@click.option("--out", type=click.Path(file_okay=False), help="Folder of the figures (default results/PAPER/figures).")
@_data_root("the one each run recorded, else ./datasets")
@click.option("--fig7-time", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="merler: Figure 7 at this ranking time (default: where the two MAP curves differ most).")
def figures(args, out, data_root, fig7_time):
    """Draw a paper's own figures from its run folders (merler: Figs. 6, 7, 9 and the lambda
    trade-off; yan: Figs. 3 and 6; yuli: Figs. 2-4 and 6).

    \b
    PAPER (merler, yan or yuli) is optional: by default each run's own paper (the folder of its
    config, else its protocol). Runs are recognised by their config's name (merler's Figure 9
    from synthetic_fig9_regularizers, RankBoost beside it from synthetic_trecvid; yan's Figure 6
    from the four towncentre panels). A figure of a fitted model (yan's Fig. 3, yuli's) refits the
    method on the trial's recorded split, as the run did, reading the data from the run's own
    data root unless --data-root is given.
    \b
    Example:
      rankbench figures yuli results/umist_table3_K/latest --out figures/yuli
    """
    from . import app

    # the first argument is a paper when it is a bare name: one of the papers, or not a folder here
    first = args[0]
    paper = first if "/" not in first and (first in app.PAPERS or not Path(first).exists()) else None
    run_dirs = list(args[1:] if paper else args)
    if not run_dirs:
        raise click.UsageError("give at least one run folder after the paper")
    res = app.figures(run_dirs, paper, out, data_root, fig7_time)
    for paths in res.written.values():
        for p in paths:
            click.echo(p)
    for d in res.skipped:
        click.echo(f"warning: {d}: no paper here draws figures of this run", err=True)


@main.command()
@click.option("--clear", is_flag=True, help="Delete the entries (all kinds, or those named by --kind).")
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only this kind, e.g. base_models (repeatable): what is shown, or with --clear what is deleted.")
def cache(clear, kinds):
    """Show (or clear) the on-disk cache: extracted features, trained base models.

    The cache is $RANKBENCH_CACHE or ~/.cache/rankbench. Entries are only ever recomputed,
    so clearing costs time on the next run, never results.

    \b
    Examples:
      rankbench cache
      rankbench cache --kind features
      rankbench cache --clear --kind features
    """
    from . import app

    if clear:
        done = app.clear_cache(list(kinds) or None)
        click.echo(f"freed {done.freed / 2**20:,.1f} MB")
        if done.errors:
            _fail(f"could not free {done.kept / 2**20:,.1f} MB in {len(done.errors)} place(s), e.g. {done.errors[0]}")
    rows = app.cache_usage(None if clear else list(kinds) or None)
    if not rows:
        click.echo(f"the cache at {app.cache_dir()} is empty")
    for u in rows:
        click.echo(f"{u.kind:<14} {u.entries:>7,} entries {u.bytes / 2**20:>10,.1f} MB   {u.path}")


@main.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(file_okay=False), metavar="RUN_A [RUN_B]")
@click.option("--methods", nargs=2, metavar="X Y", help="Within one run: method X against method Y.")
@click.option("--metric", "metrics", multiple=True, metavar="METRIC",
              help="Compare only this metric (repeatable; default every quality metric both sides measure).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Also write the table as CSV (rates as fractions, as in the run folders).")
@click.option("--correction", type=click.Choice(["holm", "none"]), default="holm", show_default=True,
              help="Multiple-comparison correction of the table's p-values (Holm's step-down, or none).")
def compare(runs, methods, metrics, csv_path, correction):
    """Paired comparison over shared trials: RUN_A against RUN_B, or two methods of one run.

    For each setting, method and metric: the mean difference A - B over the trials both ran
    (same seeds, same splits; a warning where the recorded splits differ), its 95 % interval,
    the paired t-test and Wilcoxon signed-rank p-values, and which side is better. Several
    rows are several tests: their p-values are adjusted together (Holm, unless --correction
    none), and the table says which correction was applied. Where every trial gives the same
    difference, or only one trial is shared, no test applies and the table says so.

    \b
    Examples:
      rankbench compare results/quickstart/latest --methods Bhattacharyya L1-norm
      rankbench compare results/quickstart/latest results/bins8 --metric cmc@1 --csv compare.csv
    """
    from . import app

    if len(runs) > 2:
        raise click.UsageError(f"expected one or two run folders, got {len(runs)}")
    res = app.compare(runs[0], runs[1] if len(runs) == 2 else None, methods=methods or None,
                      metrics=list(metrics) or None, csv=csv_path, correction=correction)
    click.echo(res.to_markdown())
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
