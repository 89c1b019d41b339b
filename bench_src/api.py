"""The calls the notebooks make: each cell is one of these, so the notebooks stay thin.

The statistics (scipy), the figures (matplotlib, seaborn) and the runner (which reads the
sequential rule) are imported by the calls that use them: the command line's `check`, `--help` and
a refused parameter load none of them (about 2 s of a command's start on a 2-core machine).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import parameters, paths
from .cluster_spec import ClusterError, ClusterSpec, host_threads, parse_cluster
from .analysis import rules
from .plan import Plan, make_plan
from .plan.dsn import resolve_dsn
from .statuses import OK
from .values import as_bool, from_papermill, read_none
from .run import build, servers
from .run.machine import default_results_dir
from .store import DiskFull, LockedError, NotAResultsDirectory, ResultsStore, check_results_dir
from .store import hosts as store_hosts
from .store.directory import require_run
from .store import load as load_results, repair as repair_results
from .store.records import REJECTED
from .store.space import start_bytes

if TYPE_CHECKING:  # the annotations' types; the calls import their modules where they use them
    from .report.hosts_report import HostsReport
    from .run.runner import RunReport


# The exit status of a run a signal ended, per signal (the command line's `run`, and `notebook` when
# the run cell of run.ipynb ended so)
SIGNAL_STATUS = {"SIGINT": 130, "SIGTERM": 143}


def _interrupted_by(ended: str) -> str:
    return f"interrupted ({ended})"


class RunInterrupted(RuntimeError):
    """A run ended by SIGINT or SIGTERM (its `report`): every sample taken is stored and the same
    plan resumes it.  Raised by `run_plan`, so that run.ipynb stops at its run cell (papermill and
    `make run` with it) instead of reporting on part of a run; the command line exits 130 or 143
    (`status`)."""

    def __init__(self, report: RunReport, results_dir: str | Path):
        self.report = report
        super().__init__(f"{_interrupted_by(report.ended)}: every sample taken so far is stored in {results_dir}; "
                         "run the same plan again to resume")

    @property
    def status(self) -> int:
        return SIGNAL_STATUS[self.report.ended]


# The errors a user can cause or fix: a bad parameter, a directory that is in use or not a run's, a
# failed build, a server or cluster that does not answer, a full disk, a corrupt file (CorruptFile is
# a ValueError), a run ended by a signal.  The command line prints each as one line (`error: ...`,
# exit 2; an interrupted run exits 130 or 143), and errors_in_one_line() makes a notebook show them
# the same way.
USER_ERRORS = (ValueError, build.BuildError, LockedError, NotAResultsDirectory, servers.ServerError, DiskFull,
               ClusterError, RunInterrupted)


def error_line(error: Any) -> str:
    """An error of USER_ERRORS as the command line and the notebooks show it: one line."""
    return f"error: {error}"


def failed_cell_status(ename: str, evalue: str, traceback: list[str]) -> int:
    """The exit status of a notebook whose cell failed (papermill's PapermillExecutionError gives
    the three), as the command line's for the same error: 130 or 143 for a run a signal ended, 2 for
    any other error a user can fix (the cell showed it as its one line: errors_in_one_line), 1 for
    any other error (its traceback shown whole)."""
    if list(traceback) != [error_line(evalue)]:
        return 1
    if ename == RunInterrupted.__name__:
        return next((s for name, s in SIGNAL_STATUS.items() if evalue.startswith(_interrupted_by(name))), 1)
    return 2


def errors_in_one_line() -> None:
    """In a notebook, show an error of USER_ERRORS as the command line does: the line `error: ...`
    instead of the stack of frames that led to it (the cell still fails, so papermill stops there
    and names it).  Any other error keeps its whole traceback.  Outside IPython it does nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return

    def one_line(shell, etype, value, tb, tb_offset=None) -> list[str]:
        lines = [error_line(value)]
        value._render_traceback_ = lambda: lines  # what IPython's showtraceback prints for it
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return lines

    shell.set_custom_exc(USER_ERRORS, one_line)


# Names IPython puts in a notebook's namespace; everything else that is not private, a module, a
# function or a class was assigned by the parameters cell or injected by papermill.
_KERNEL_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def refuse_unknown_parameters(namespace: dict[str, Any], known: list[str] | tuple[str, ...]) -> None:
    """Raise a ValueError naming every parameter papermill injected that the notebook does not
    declare (papermill itself only warns, and the run would go on without it).  Call it in the
    first code cell with `globals()` and the declared parameter names."""
    import inspect

    unknown = sorted(k for k, v in namespace.items()
                     if not k.startswith("_") and k not in _KERNEL_NAMES and k not in known
                     and not (inspect.ismodule(v) or inspect.isroutine(v) or inspect.isclass(v)))
    if unknown:
        raise ValueError(f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(known)}")


def parse_bool(name: str, value: Any) -> bool:
    """A notebook's boolean parameter, papermill strings included: "false", "no", "0" are False,
    "true", "yes", "1" True; None or the word None (papermill's `-p NAME None`) the parameter's
    default, as the first cell's check reads it (bench_src/parameters.py: `-p progress None` passed
    that check and was refused after the build); anything else is an error naming the value."""
    value = read_none(value)
    if value is None:
        given = next((p for p in parameters.RUN_PARAMETERS if p.name == name), None)
        value = given.default if given is not None else value
    return as_bool(name, value)


def plan_from_parameters(cluster: Any = None, **given: Any) -> Plan:
    """Validate the notebook's parameters (papermill strings included) into a Plan.  An unknown
    name is an error that lists the allowed ones.  With a local `cluster` and no `threads`, the
    programs run as many threads as each host has CPUs (cluster_spec.host_threads), unless `cores`
    sets them (each cell as many as its cores, which must fit in one host's CPUs)."""
    spec = parse_cluster(cluster)
    per_host = host_threads(spec)
    given = {k: from_papermill(k, v) for k, v in given.items()}  # the word None too: not given
    cores_given = given.get("cores") not in (None, [], ())
    if per_host is not None and given.get("threads") is None and not cores_given:
        given["threads"] = per_host
    plan = make_plan(**given)
    if per_host is not None and cores_given:
        most = max((c.cores or 0 for c in plan.cells()), default=0)
        if most > per_host:
            raise ValueError(f"cores: {most} is more than the {per_host} CPU{'s' if per_host != 1 else ''} each host "
                             f"of cluster {cluster!r} has; allowed: 1..{per_host}, or fewer hosts")
    return plan


def run_notebook_parameters() -> list[str]:
    """The names run.ipynb declares (bench_src/parameters.py): its first code cell refuses any other."""
    return parameters.notebook_names()


def check_run_parameters(namespace: dict[str, Any]) -> None:
    """Validate run.ipynb's parameters that are not the plan's (progress, repair, new_binaries,
    force_build, cluster; bench_src/parameters.py) in its first cell, before anything is built: read
    only where each is used, a bad `progress` was refused after the build."""
    for p in parameters.RUN_PARAMETERS:
        if p.check is not None:
            p.check(read_none(namespace.get(p.name, p.default)), None)


def plan_from_notebook(namespace: dict[str, Any]) -> Plan:
    """The Plan of run.ipynb's parameters: every plan parameter the notebook declares, read from
    its namespace (`globals()`)."""
    return plan_from_parameters(cluster=namespace.get("cluster"),
                                **{p.name: namespace[p.name] for p in parameters.PLAN_PARAMETERS if p.notebook})


def results_dir_for(plan: Plan, results_dir: str | Path | None = None, repair: Any = False) -> Path:
    """The results directory of a plan (the given one, or the default name), checked before
    anything is built: not a file, writable, on a disk with space, not in use by another run, not
    holding anything but a run of this package, and not holding a different plan.  None or the word
    None: the default name.  With `repair` an unreadable meta.json is left for the run to rebuild
    from the plan."""
    results_dir = read_none(results_dir)
    if results_dir is not None and (not isinstance(results_dir, (str, Path)) or not str(results_dir).strip()):
        # an empty string names no directory (Path("") would be the current one): refused, naming it
        raise ValueError(f"results_dir must be a path, or None for the default name, got {results_dir!r}")
    d = Path(results_dir) if results_dir is not None else default_results_dir(plan)
    check_results_dir(d, need=start_bytes(len(json.dumps(plan.to_dict()))))
    ResultsStore(d).check_plan(plan, repair=parse_bool("repair", repair))
    return d


def check_servers(plan: Plan) -> None:
    """Before anything is built: every server the plan names by `dsn` must answer with its
    credentials (a ServerError names the server, its password masked)."""
    for kind, value in plan.dsn.items():
        servers.check_external(kind, resolve_dsn(kind, value))


def build_programs(plan: Plan, force: Any = False) -> dict:
    result = build.build(plan.languages, force=parse_bool("force_build", force))
    for name, state in result["builds"].items():
        print(f"{name}: {state}")
    for tool, version in result["toolchains"].items():
        print(f"  {tool}: {version}")
    return result


def cluster_from_parameter(cluster: Any) -> ClusterSpec | None:
    """The run notebook's `cluster` parameter, checked before anything is built: None (run here),
    "local:N" or "tcp://HOST:PORT" (a ValueError names the value and what is allowed); a
    scheduler's address must take a connection (a ClusterError names it and what to do)."""
    spec = parse_cluster(cluster)
    if spec is not None and spec.kind == "scheduler":
        from .run.cluster import engine  # the default path imports nothing of Dask

        engine.check_scheduler(spec)
    return spec


def run_plan(plan: Plan, results_dir: str | Path, progress: Any = True, repair: Any = False,
             new_binaries: Any = False, expected_samples: Any = None, cluster: Any = None) -> RunReport:
    """Take the plan's missing samples (see runner.run): an estimate first, progress lines on
    stderr, the report at the end.  repair: move unreadable lines of samples.jsonl aside;
    new_binaries: continue with rebuilt programs in a new session; cluster: the hosts to run the
    blocks on (None: this process; "local:N"; "tcp://HOST:PORT"; see docs/cluster.md)."""
    from .run import runner

    spec = cluster if isinstance(cluster, ClusterSpec) else parse_cluster(cluster)
    report = runner.run(plan, results_dir, progress=parse_bool("progress", progress),
                        repair=parse_bool("repair", repair), new_binaries=parse_bool("new_binaries", new_binaries),
                        expected_samples=expected_samples, cluster=spec)
    print(report)
    if report.interrupted and report.ended in ("SIGINT", "SIGTERM"):
        raise RunInterrupted(report, results_dir)
    return report


def repair(results_dir: str | Path) -> int:
    """Move the unreadable or incomplete lines of a results directory's samples.jsonl to
    samples.rejected.jsonl (noted in meta.json); prints and returns how many."""
    moved = repair_results(results_dir)
    print(f"{moved} line(s) moved to {Path(results_dir) / REJECTED}" if moved
          else f"{Path(results_dir) / paths.SAMPLES}: nothing to repair")
    return moved


def load(results_dir: str | Path | list | tuple, factor: str | None = None) -> pd.DataFrame:
    """The tidy frame of a results directory, with the `valid` column.  A path without meta.json
    is refused (NotAResultsDirectory) before anything is read or written.  A list of directories
    of one plan (taken on several machines) gives one frame with a `host` column (load_hosts;
    `factor` names a difference between them to accept)."""
    if isinstance(results_dir, (list, tuple)):
        return load_hosts(results_dir, factor=factor)
    if factor is not None:
        raise ValueError(f"factor={factor!r} names a difference between several results directories; give a list")
    return load_results(results_dir)


def load_hosts(results_dirs, factor: str | None = None) -> pd.DataFrame:
    """Results directories of one plan taken on several machines, one frame with `host` (the
    machine's fingerprint), `host_label` and `results_dir`, and the plan's design attached.
    Different plans or programs built from different source are refused, naming both, unless
    `factor` ("plan" or "commit") names that difference: it becomes a column whose values the
    analysis keeps apart.  Plans of different looks of the sequential rule are refused even then
    (their p-values cannot share one design); each family's planned size is the largest of the
    plans'.  A path that holds no run is refused in the words of every reader of a run
    (store.directory.require_run)."""
    from .analysis import sequential

    results_dirs = list(results_dirs)
    for d in results_dirs:
        require_run(d)
    df = store_hosts.load_hosts(results_dirs, factor=factor)
    design = sequential.attach(df, df.attrs["plan"]).attrs["design"]
    if factor == "plan":
        for d in results_dirs[1:]:
            other = sequential.attach(pd.DataFrame(), ResultsStore(d).read_plan()).attrs["design"]
            if (other["looks"], other["spending"]) != (design["looks"], design["spending"]):
                raise ValueError(f"{d} was run with other looks of the sequential rule than {results_dirs[0]} "
                                 f"({other['looks']} vs {design['looks']} pairs): their p-values cannot share one "
                                 "analysis; analyse them apart")
            sizes = design["family_sizes"]
            design["family_sizes"] = {f: max(sizes.get(f, 0), m) for f, m in {**sizes, **other["family_sizes"]}.items()}
    df.attrs["design"] = design
    return df


def hosts_report(results_dirs, out_dir: str | Path | None = None, margin: float = rules.MARGIN,
                 factor: str | None = None, echo: bool = True):
    """Per-host verdicts, the combined ratios across hosts (tau, I², "holds on k of m") and the
    forest plots, written to `out_dir` (default: data/results/hosts-<plan digest>); prints the
    summary (unless `echo` is False) and returns the HostsReport.  `factor`: see load_hosts."""
    from .report import hosts_report as hosts_report_module

    df = load_hosts(results_dirs, factor=factor)
    out = Path(out_dir) if out_dir else paths.RESULTS / f"hosts-{df.attrs['meta'].get('plan_digest', 'plan')}"
    hosts_report_module.refuse_foreign(out)  # before the analysis: nothing but its own files there
    rep = hosts_report_module.analyse(df, margin=margin)
    written = hosts_report_module.save(rep, out, margin)
    if echo:
        print("\n".join(hosts_report_module.summary_lines(rep)))
    print(f"{len(written)} files written to {out}")
    return rep


def engine_check(in_process_dirs, cluster_dirs, margin: float = rules.ENGINES_MARGIN) -> pd.DataFrame:
    """The A/A check of the cluster engine: the same plan run in this process and through a host on
    the same machine (a results directory or a list of them each; analysis/engines.py); prints per
    metric how many cells are equivalent within ±margin and the largest peak-RSS difference, and
    returns the table."""
    from .analysis import engines

    def frames(dirs):
        return [load_results(d) for d in (dirs if isinstance(dirs, (list, tuple)) else [dirs])]

    table = engines.engine_check(frames(in_process_dirs), frames(cluster_dirs), margin=margin)
    _say_engine_check(table, margin)
    return table


def engine_check_paired(results_dir: str | Path, plan: Plan | None = None, cluster: Any = "local:1",
                        progress: Any = True, margin: float = rules.ENGINES_MARGIN) -> pd.DataFrame:
    """The paired A/A check of the cluster engine (analysis/engines.py): with a `plan` (aa is set on
    it), its samples are taken into `results_dir` first, arm A in this process and arm B on one local
    host, block by block (what the directory holds already is kept); then the table, as
    engine_check prints it."""
    from .analysis import engines
    from .run import runner

    if plan is not None:
        plan = dataclasses.replace(plan, aa=True)
        spec = cluster if isinstance(cluster, ClusterSpec) else parse_cluster(cluster)
        print(runner.run(plan, results_dir, progress=parse_bool("progress", progress), cluster=spec, engines=True))
    table = engines.paired_check(load_results(results_dir), margin=margin)
    _say_engine_check(table, margin)
    return table


def _say_engine_check(table: pd.DataFrame, margin: float) -> None:
    for metric, t in table.groupby("metric", sort=False):
        inside = int(t["inside_margin"].astype(bool).sum())
        line = (f"{metric}: {inside} of {len(t)} cells with their whole interval within ±{margin:.0%}; in-process / "
                f"cluster {t['ratio'].min():.4f} to {t['ratio'].max():.4f}, intervals from "
                f"{t['ratio_ci_low'].min():.4f} to {t['ratio_ci_high'].max():.4f} ({t['ci_level'].iloc[0]:.1%})")
        if metric == "peak_rss_mib":
            line += f"; median peak RSS differs by {t['rss_difference_kib'].abs().max():.0f} KiB at most"
        print(line)


def analysis_hosts(parameters, rep=None) -> "HostsReport | None":
    """analysis.ipynb's several-hosts section: with several results directories their report
    (hosts_report, written to the notebook's `hosts_dir`); with one, the Hosts section of its report
    `rep` (report/notebook.py `run_hosts`: a run on several hosts, its tables and forest plots as
    report.html shows them), None for a run on one host."""
    from .report import notebook as report_notebook

    if not parameters.several:
        return report_notebook.run_hosts(rep)
    return hosts_report(parameters.results_dirs, parameters.hosts_dir, parameters.margin, parameters.factor,
                        echo=False)


def status_table(df: pd.DataFrame) -> pd.DataFrame:
    """Samples per cell and status (warm-ups included), so no failure goes unseen."""
    t = df.groupby(["workload", "lang", "variant", "n", "params", "phase", "status"], dropna=False).size()
    return t.rename("samples").reset_index()


def failures(df: pd.DataFrame) -> pd.DataFrame:
    return df.loc[df["status"] != OK, ["sample_id", "status", "reason"]]


def summary(df: pd.DataFrame, metric: str = "elapsed_s") -> pd.DataFrame:
    from .analysis import stats

    return stats.summarize(df, metric)


def ratios(df: pd.DataFrame, metric: str = "elapsed_s") -> pd.DataFrame:
    """The Go/Rust ratio (exp of the paired estimate, the centre of the per-block log ratios) with its
    CI for every comparable pair of cells (no tests)."""
    from .analysis import compare

    return compare.compare(df, metric, tests=False)


def standard_figures(df: pd.DataFrame, results_dir: str | Path, metric: str = "elapsed_s") -> list[Path]:
    """Time vs N and the Go/Rust ratio vs N, saved as SVG and PNG in the results directory."""
    from .report import figures

    ResultsStore(results_dir).require_existing()
    out_dir = Path(results_dir) / "figures"
    saved: list[Path] = []
    s = summary(df, metric)
    if not s.empty:
        fig = figures.metric_vs_n(s, metric)
        saved += figures.save(fig, out_dir, f"{metric}_vs_n")
    r = ratios(df, metric)
    if not r.empty:
        fig = figures.ratio_vs_n(r)
        saved += figures.save(fig, out_dir, f"ratio_{metric}_vs_n")
    for p in saved:
        print(p)
    return saved


def show(figure_paths) -> None:
    """Display saved figures (their PNG) in a notebook."""
    from IPython.display import Image, display

    for p in figure_paths:
        if str(p).endswith(".png"):
            display(Image(filename=str(p)))


def report(results_dir: str | Path, margin: float = rules.MARGIN, render_html: bool = True):
    """The full analysis with every export (see bench_src.report).  A path that is not a results
    directory is refused before anything is written."""
    from .report import full as report_module

    ResultsStore(results_dir).require_existing()
    rep = report_module.full_report(results_dir, margin, render_html=render_html)
    print(f"{len(rep.files)} files and {sum(len(v) for v in rep.figures.values())} figure files written to "
          f"{rep.export_dir}")
    return rep
