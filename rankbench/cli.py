"""The ``rankbench`` command line: parses, calls the engine, prints. No logic of its own."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from . import __version__
from .errors import RankbenchError


def user_errors(fn):
    """Turn a user mistake into one line on stderr and exit 1 (2 for usage, 130 for Ctrl-C)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RankbenchError as exc:
            from .engine.runner import RunInterrupted

            click.echo(f"rankbench: error: {exc}", err=True)
            sys.exit(130 if isinstance(exc, RunInterrupted) else 1)
        except KeyboardInterrupt:
            click.echo("rankbench: interrupted", err=True)
            sys.exit(130)

    return wrapper


_data_root = click.option("--data-root", type=click.Path(file_okay=False), envvar="RANKBENCH_DATA",
                          help="Folder with one sub-folder per dataset (viper/, umist/, ...). "
                               "Default: $RANKBENCH_DATA, else ./datasets.")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="rankbench")
def main():
    """Reproduce classic ranking benchmarks and compare rankers under the same protocols.

    \b
    Example:
      rankbench run configs/quickstart.yaml
      rankbench run configs/prosser/viper_p316.yaml --data-root ../shared/datasets --jobs 2
      rankbench check results/viper_p316/20261122-120000
    """


@main.command()
@click.argument("config", type=click.Path(dir_okay=False))
@_data_root
@click.option("--out", type=click.Path(file_okay=False), help="Run folder (default results/<name>/<timestamp>).")
@click.option("--trials", type=click.IntRange(min=1), help="Override protocol.trials.")
@click.option("--seed", type=int, help="Override protocol.seed.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Parallel worker processes.")
@click.option("--set", "sets", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a config key, e.g. --set protocol.n_test=100 --set rankers.PRSVM.C=1.")
@click.option("--resume", is_flag=True, help="Continue an interrupted run in --out (or the latest run).")
@click.option("--regress", is_flag=True, help="Apply the config's regress: block (CI's reduced run).")
@click.option("--no-cache", is_flag=True, help="Recompute features instead of using the cache.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@user_errors
def run(config, data_root, out, trials, seed, jobs, sets, resume, regress, no_cache, quiet):
    """Run the experiment described by CONFIG and write tables and plots.

    \b
    Writes config.yaml, splits.json, trials.csv, summary.csv, summary.md, manifest.json and
    plots/ into the run folder. Results are saved per trial as they finish; an interrupted run
    continues with --resume.
    \b
    Example:
      rankbench run configs/quickstart.yaml --trials 3 --set protocol.n_test=50
    """
    from .engine.runner import RunOptions, run_experiment

    opts = RunOptions(data_root=data_root, out=out, trials=trials, seed=seed, jobs=jobs,
                      sets=list(sets), resume=resume, progress=not quiet, regress=regress,
                      use_cache=not no_cache)
    run_dir = run_experiment(config, opts)
    click.echo((run_dir / "summary.md").read_text())
    click.echo(f"results in {run_dir}")


@main.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="KEY.PATH=VALUE", help="Override a config key.")
@click.option("--regress", is_flag=True, help="Validate with the regress: block applied.")
@user_errors
def validate(config, sets, regress):
    """Check CONFIG (schema, registry names, parameters) without running it.

    \b
    Example:
      rankbench validate configs/yuli/umist_table3.yaml
    """
    from .engine.runner import RunOptions, prepare

    _, cfg, settings = prepare(config, RunOptions(sets=list(sets), regress=regress))
    n = len(settings)
    click.echo(f"{config}: OK — dataset {cfg.dataset.name}, protocol {cfg.protocol.name}, "
               f"{len(cfg.rankers)} ranker(s), {cfg.protocol.trials} trial(s)"
               + (f", {n} sweep settings" if n > 1 else ""))


@main.command(name="list")
@click.argument("kind", required=False,
                type=click.Choice(["datasets", "features", "rankers", "protocols", "preprocessors"]))
def list_(kind):
    """List registered datasets, features, rankers, protocols and preprocessors.

    \b
    Example:
      rankbench list rankers
    """
    from .registry import ALL

    for k, reg in ALL.items():
        if kind and k != kind:
            continue
        click.echo(f"{k}:")
        for name, doc in reg.describe():
            click.echo(f"  {name:22s} {doc}")


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--no-plots", is_flag=True, help="Tables only.")
@user_errors
def report(run_dir, no_plots):
    """Rebuild tables and plots of RUN_DIR from its stored per-trial results.

    \b
    Example:
      rankbench report results/quickstart/20261122-120000
    """
    from .report.build import build_report

    out = build_report(Path(run_dir), plots=not no_plots)
    click.echo(out["markdown"])


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False))
@click.option("--expected", type=click.Path(dir_okay=False),
              help="A YAML file with an 'expected:' list (default: the run's own config).")
@user_errors
def check(run_dir, expected):
    """Compare RUN_DIR with published numbers; exit 1 if any number FAILs.

    A number is OK within its tolerance, OKISH within 1.5x the tolerance, FAIL beyond;
    GAP is a miss the config documents as a known gap (with its reason); PUBLISHED rows are
    methods this run did not include.

    \b
    Example:
      rankbench check results/viper_p316/20261122-120000
    """
    from .config import read_yaml
    from .report.check import any_fail, check_markdown, grade_counts, grade_rows
    from .report.build import load_run
    from .report.tables import summary_frame, trials_frame

    cfg, records, methods = load_run(Path(run_dir))
    exp = (read_yaml(Path(expected)).get("expected") if expected else cfg.get("expected")) or []
    if not exp:
        raise RankbenchError(f"{expected or Path(run_dir) / 'config.yaml'}: expected: no published numbers to check")
    rows = grade_rows(summary_frame(trials_frame(records), methods), exp)
    click.echo(check_markdown(rows))
    counts = grade_counts(rows)
    click.echo(", ".join(f"{v} {k}" for k, v in counts.items()))
    sys.exit(1 if any_fail(rows) else 0)


@main.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Output .npz file.")
@_data_root
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True)
@user_errors
def features(config, out, data_root, jobs):
    """Extract CONFIG's feature sets for the whole dataset into an .npz (ids, labels, one array per set).

    \b
    Example:
      rankbench features configs/prosser/viper_p316.yaml --out viper_elf.npz --data-root ../shared/datasets
    """
    import io

    import numpy as np

    from .engine.cache import get_features
    from .engine.runner import RunOptions, build_dataset, prepare
    from .engine.store import atomic_write_bytes
    from .registry import features as feature_registry

    _, cfg, _ = prepare(config, RunOptions())
    ds = build_dataset(cfg, data_root)
    arrays = {"ids": ds.items["id"].astype(str).to_numpy()}
    for col in ("identity", "cam", "label", "category", "subject"):
        if col in ds.items.columns:
            arrays[col] = ds.items[col].to_numpy()
    for f in cfg.features:
        ext = feature_registry.build(f.extractor, f.params(), f"features.{f.key}")
        arrays[f"X_{f.key}"] = get_features(ds, ext, n_jobs=jobs, progress=True)
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: (v.astype(str) if v.dtype == object else v) for k, v in arrays.items()})
    try:
        atomic_write_bytes(Path(out), buf.getvalue())
    except OSError as exc:
        raise RankbenchError(f"{out}: cannot write ({exc.strerror or exc})") from None
    shapes = ", ".join(f"{k} {v.shape}" for k, v in arrays.items())
    click.echo(f"wrote {out}: {shapes}")


@main.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--out", default="results/REPORT.md", show_default=True, type=click.Path(dir_okay=False))
@user_errors
def collect(run_dirs, out):
    """Gather several runs into one REPORT.md: per paper, our numbers beside the published ones.

    \b
    Example:
      rankbench collect results/*/latest --out results/REPORT.md
    """
    from .report.collect import write_collected

    path, n_fail = write_collected([Path(d) for d in run_dirs], Path(out))
    click.echo(f"wrote {path} ({len(run_dirs)} runs, {n_fail} published numbers FAIL)")


if __name__ == "__main__":  # pragma: no cover
    main()
