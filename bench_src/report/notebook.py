"""What the analysis notebooks call, so that each cell is one call and its result.

- `analysis_parameters`, `memory_parameters`, `reproduce_parameters`: the notebooks' papermill
  parameters checked with their types (papermill passes strings for lists: they are read as
  YAML); a bad value is a ValueError naming it and what is allowed, a missing results directory a
  NotAResultsDirectory (a FileNotFoundError), and for analysis.ipynb a directory a run still writes
  a LockedError, all before anything is written and all one line in the notebook (`api.USER_ERRORS`);
- `analysis`, `report`: the whole analysis of one directory, computed once, with every export
  (see `full`); with several directories (taken on several machines) the per-directory sections
  say so, and `hosts_section` (or its parts `hosts_summary`, `hosts_table`, `hosts_figures`) shows
  the several-hosts report, as it shows the Hosts section of one run on several hosts (`run_hosts`);
- `table`: a table formatted for reading, shown in full (never pandas' truncated view);
- `figures`: the saved figures, shown from their PNG files;
- `live_stderr`: a cell's stderr (the run's estimate and progress lines) shown as it comes and,
  once the cell has succeeded, taken out of its output and kept to be shown later, so that the
  notebook opens with the findings, not with the progress of the run.
"""
from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import compare, rules
from ..analysis import hosts as hosts_analysis
from ..catalogue import WORKLOADS
from . import export, findings as found, full, tables, units
from .export import html
from ..values import as_float, from_papermill, read_none
from ..store import latest_results_dir
from ..store.directory import refuse_in_use, require_run
from ..store.hosts import FACTORS, load_hosts
from .hosts_report import HostsReport, overview, summary_lines

ARTICLE_TABLES = ("go_channel_per_task", "go_single_channel")


def results_dir_parameter(value: Any) -> Path:
    """A results directory given as a path, or None (or the word None) for the most recent one under
    data/results/; one a run still writes is refused as `report` refuses it
    (store.directory.refuse_in_use), before anything is written: an analysis now would be of part
    of the run.  Every analysis notebook reads its directories through this."""
    value = read_none(value)
    if value is None:
        value = latest_results_dir()
    elif isinstance(value, bool) or not isinstance(value, (str, Path)):
        raise ValueError(f"results_dir={value!r}: expected the path of a results directory (a string) or None")
    checked = require_run(value)
    refuse_in_use(checked)
    return checked


def margin_parameter(value: Any) -> float:
    """The equivalence margin: a number between 0 and 0.5, or None (or the word None) for the rules'."""
    value = read_none(value)
    if value is None:
        return compare.MARGIN
    try:  # read as every number is (values.as_float: finite, never a boolean); 0 and 0.5 themselves are no margin
        m = as_float("margin", value, 0.0, 0.5)
    except ValueError:
        m = 0.0
    if not 0 < m < 0.5:
        raise ValueError(f"margin={value!r}: expected a number between 0 and 0.5 (0.02 means ±2%)")
    return m


def workloads_parameter(name: str, value: Any) -> tuple[str, ...] | None:
    value = from_papermill(name, value)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name}={value!r}: expected a list of workload names or None")
    unknown = [v for v in value if v not in WORKLOADS]
    if unknown:
        raise ValueError(f"{name}: unknown workload {', '.join(map(repr, unknown))}; allowed: {', '.join(WORKLOADS)}")
    return tuple(value)


def results_dirs_parameter(value: Any) -> tuple[Path, ...]:
    """One results directory, a list of them (a papermill string such as '["a", "b"]' is read as
    YAML), or None for the most recent one under data/results/."""
    value = from_papermill("results_dir", value)
    if not isinstance(value, (list, tuple)):
        return (results_dir_parameter(value),)
    if not value or not all(isinstance(v, (str, Path)) and not isinstance(v, bool) for v in value):
        raise ValueError(f"results_dir={value!r}: expected the path of a results directory, a non-empty list of "
                         "such paths (taken on several machines), or None")
    return tuple(results_dir_parameter(v) for v in value)


def factor_parameter(value: Any, several: bool) -> str | None:
    value = read_none(value)
    if value is None:
        return None
    if value not in FACTORS:
        raise ValueError(f"factor={value!r}: expected one of {', '.join(FACTORS)} or None")
    if not several:
        raise ValueError(f"factor={value!r} names a difference between several results directories; give "
                         "results_dir as a list of them")
    return value


@dataclass(frozen=True)
class AnalysisParameters:
    results_dirs: tuple[Path, ...]
    margin: float
    distribution_workloads: tuple[str, ...] | None
    factor: str | None = None
    hosts_dir: Path | None = None

    @property
    def several(self) -> bool:
        return len(self.results_dirs) > 1

    @property
    def results_dir(self) -> Path | None:
        """The one results directory (None with several)."""
        return None if self.several else self.results_dirs[0]


def analysis_parameters(results_dir: Any = None, margin: Any = compare.MARGIN,
                        distribution_workloads: Any = None, factor: Any = None,
                        hosts_dir: Any = None) -> AnalysisParameters:
    """The parameters of analysis.ipynb, checked (a directory a run still writes refused, as every
    analysis notebook's: results_dir_parameter).  The values that need no directory are checked
    first, so that a bad margin is named as such even where no run exists yet."""
    margin = margin_parameter(margin)
    workloads = workloads_parameter("distribution_workloads", distribution_workloads)
    hosts_dir = read_none(hosts_dir)
    if hosts_dir is not None and (isinstance(hosts_dir, bool) or not isinstance(hosts_dir, (str, Path))
                                  or not str(hosts_dir).strip()):  # Path("") would be the current directory
        raise ValueError(f"hosts_dir={hosts_dir!r}: expected a directory path or None")
    dirs = results_dirs_parameter(results_dir)
    return AnalysisParameters(dirs, margin, workloads, factor_parameter(factor, len(dirs) > 1),
                              Path(hosts_dir) if hosts_dir is not None else None)


def memory_parameters(results_dir: Any = None) -> Path:
    """The parameter of memory.ipynb, checked."""
    return results_dir_parameter(results_dir)


@dataclass(frozen=True)
class ReproduceParameters:
    results_dir: Path
    margin: float
    table: str


def reproduce_parameters(results_dir: Any = None, margin: Any = compare.MARGIN,
                         table: Any = ARTICLE_TABLES[0]) -> ReproduceParameters:
    """The parameters of reproduce_article.ipynb, checked (the directory last, as analysis_parameters)."""
    table = ARTICLE_TABLES[0] if read_none(table) is None else table
    if table not in ARTICLE_TABLES:
        raise ValueError(f"table={table!r}: expected one of the article's tables: {', '.join(ARTICLE_TABLES)}")
    margin = margin_parameter(margin)
    return ReproduceParameters(results_dir_parameter(results_dir), margin, table)


def describe_plan(plan) -> pd.DataFrame:
    cells = plan.cells()
    print(f"profile {plan.profile}: {len(cells)} cells x {plan.samples} measured + {sum(plan.warmups().values())} "
          f"warm-up (per {plan.warmup_scope}) = {len(plan.schedule())} samples; seed {plan.seed}, blocks {plan.block_order}; threads {plan.threads}; "
          f"timeout {plan.timeout_s:g} s; memory limit {plan.mem_limit_mb} MiB")
    return pd.DataFrame([{"workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
                          "threads": c.threads, "params": ",".join(f"{k}={v}" for k, v in c.params)} for c in cells])


def plan(the_plan) -> tables.Readable:
    """The plan's cells, one row per workload, language, variant and parameters with its N values
    (describe_plan prints the totals)."""
    cells = describe_plan(the_plan)
    rows = []
    for (w, lang, variant, params), g in cells.groupby(["workload", "lang", "variant", "params"], sort=False):
        rows.append({"workload": w, "lang": lang, "variant": variant,
                     "N": ", ".join(units.short_count(n) for n in sorted(g["n"].unique())),
                     "parameters": params.replace(",", ", ")})
    frame, constants = tables.split_constants(pd.DataFrame(rows))
    caption = "; ".join(f"{k}: {v}" for k, v in constants.items())
    return tables.Readable(frame, f"Every row: {caption}" if caption else "", f"{len(cells)} cells")


def report(results_dir: str | Path, margin: float = compare.MARGIN) -> full.Report:
    """The whole analysis of a results directory with every export; says where the report is."""
    rep = full.full_report(results_dir, margin)
    figures = sum(len(v) for v in rep.figures.values())
    written = figures + len(rep.files)
    held = len(export.manifest(rep.results_dir))
    print(f"{len(rep.df):,} samples, {int(rep.df['valid'].sum()) if not rep.df.empty else 0:,} valid; "
          f"{len(rep.tables)} tables and {len(rep.figures)} figures; {written} files written under "
          f"{rep.export_dir}" + (f" ({held} there in all, with the report page and the executed notebooks: the "
                                  "manifest lists them)" if held != written else ""))
    print(f"report: {rep.export_dir / html.PAGE}")
    if rep.empty:
        print(rep.method)
    return rep


SEVERAL = ("several results directories: this section is the analysis of one directory; run the notebook on "
           "each directory alone for it, the several-hosts section at the end shows them together")
ONE = ("one results directory whose samples come from one host: this section needs more than one; give results_dir "
       "a list of directories taken on several machines, or the directory of a run on several hosts (cluster)")


def analysis(parameters: AnalysisParameters) -> full.Report | None:
    """The whole analysis of the one directory (`report`), or None with several directories."""
    if parameters.several:
        print(f"{len(parameters.results_dirs)} results directories: the several-hosts section at the end shows them "
              "together")
        return None
    return report(parameters.results_dir, margin=parameters.margin)


def run_hosts(rep: full.Report | None) -> HostsReport | None:
    """The Hosts section of one run's report, where its samples come from more than one host (a
    cluster run: full.analyse computes each host's verdicts and their combination, and draws the
    forest plots): those tables and figures, as report.html shows them, with the hosts as `hosts
    DIR` describes them (store.hosts.load_hosts); None for a run on one host."""
    metrics = [m for m in hosts_analysis.METRICS if rep is not None and f"across_hosts_{m}" in rep.tables]
    if not metrics:
        return None
    df = load_hosts([rep.results_dir])
    return HostsReport(df, overview(df), per_host={m: rep.tables[f"per_host_{m}"] for m in metrics},
                       combined={m: rep.tables[f"across_hosts_{m}"] for m in metrics},
                       files=[p for m in metrics for p in rep.figures.get(f"forest_{m}", [])])


def method(rep: full.Report | None) -> "Section":
    """The Method: its subsections ('### heading' blocks of the text) as headings, paragraphs and tables."""
    if rep is None:
        return Section(SEVERAL)
    blocks = [b.strip() for b in (rep.method or "").split("\n\n") if b.strip()]
    return Section(*(Heading(b[4:]) if b.startswith("### ") else tables.from_markdown(b) if b.startswith("|") else b
                     for b in blocks))


class Heading(str):
    """A subsection's heading in a Section: <h3> in HTML, '### heading' as text."""

    def __str__(self) -> str:
        return f"### {str.__str__(self)}"


def hosts_summary(hosts: HostsReport | None) -> "Section":
    """How many machines stand behind the directories, the combined verdicts, and the hosts."""
    if hosts is None:
        return Section(ONE)
    return Section(*summary_lines(hosts), tables.generic(hosts.overview, "The hosts"))


def hosts_table(hosts: HostsReport | None, kind: str, metric: str) -> tables.Readable:
    """`combined` (the ratio across hosts, tau, I², holds on k of m) or `per_host` (each host's
    own verdicts) of a metric."""
    if hosts is None:
        return tables.Readable(pd.DataFrame(), ONE)
    source = {"combined": hosts.combined, "per_host": hosts.per_host}[kind]
    if metric not in source or source[metric].empty:
        return tables.Readable(pd.DataFrame(), f"{kind} {metric}: no Go-vs-Rust comparison with two pairs on a host")
    return (tables.hosts.combined if kind == "combined" else tables.hosts.per_host)(source[metric])


def hosts_section(hosts: HostsReport | None) -> "Section":
    """The several-hosts report in one cell: the summary and the hosts, each headline metric's
    combined and per-host tables, the forest plots (of several directories, or of one run on several
    hosts: `run_hosts`); with one directory of one host, the one line saying how to have it."""
    if hosts is None:
        return Section(ONE)
    tables_ = [hosts_table(hosts, kind, metric) for metric in rules.HEADLINE_METRICS
               for kind in ("combined", "per_host")]
    return Section(*hosts_summary(hosts).items, *tables_, *hosts_figures(hosts).items)


def hosts_figures(hosts: HostsReport | None) -> "Section":
    """The forest plots (their PNG)."""
    if hosts is None:
        return Section(ONE)
    pngs = [p for p in hosts.files if p.suffix == ".png"]
    return Section(*pngs) if pngs else Section("no forest plot: no comparison was measured on any host")


def findings(rep: full.Report | None) -> "Section":
    """The answer first: per metric, how many Go-vs-Rust differences, equivalences and open
    comparisons, the differences largest first (findings.ORDER), and the verdict maps."""
    if rep is None:
        return Section(SEVERAL)
    if rep.empty:
        return Section("No sample entered the analysis: there is nothing to report (see the failures table).")
    items: list = []
    for f in rep.findings:
        items.append(f.summary() + ".")
        items += [f"{i}. {line}" for i, line in enumerate(f.lines(), 1)]
    if not items:
        items.append(found.none_made(rep.df))
    return Section(*items, *figures(rep, *(f"verdicts_{m}" for m in found.FINDING_METRICS)).items)


def table(rep: full.Report | None, name: str) -> tables.Readable:
    """The report's table `name` formatted for reading (every row), or a note why there is none."""
    if rep is None:
        return tables.Readable(pd.DataFrame(), SEVERAL)
    if name not in rep.tables:
        why = "no sample entered the analysis" if rep.empty else next(
            (f"not computed: {w}" for prefix, w in full.ONLY_WHEN.items() if name.startswith(prefix)),
            "not computed for this run")
        return tables.Readable(pd.DataFrame(), f"{name}: {why}")
    return rep.readable(name)


def figures(rep: full.Report | None, *names: str) -> "Section":
    """The report's figures (their PNG) for display; a name ending in '_' takes every figure it starts."""
    if rep is None:
        return Section(SEVERAL)
    items: list = []
    for name in names:
        matches = [n for n in rep.figures if n == name or (name.endswith("_") and n.startswith(name))]
        if not matches:
            items.append(f"({name}: no figure for this run)")
        for n in matches:
            items += [p for p in rep.figures[n] if p.suffix == ".png"]
    return Section(*items)


def manifest(rep: full.Report | None) -> tables.Readable:
    """Every exported file with its size."""
    if rep is None:
        return tables.Readable(pd.DataFrame(), SEVERAL)
    m = export.manifest(rep.results_dir)
    m["size"] = m["bytes"].map(lambda b: units.quantity(b, "B"))
    return tables.Readable(m[["file", "size"]], f"{len(m)} files under {rep.export_dir}", "Exported files")


class Section:
    """What one notebook cell shows: text lines, tables for reading and figures (PNG), in order.
    Jupyter renders it as HTML (every table row, the figures inline); `items` keeps them for tests."""

    def __init__(self, *items):
        self.items = [i for i in items if i is not None]

    def _repr_html_(self) -> str:
        import base64
        import html

        parts = []
        for item in self.items:
            if isinstance(item, tables.Readable):
                parts.append(item.to_html())
            elif isinstance(item, Path) and item.suffix == ".png":
                data = base64.b64encode(item.read_bytes()).decode("ascii")
                parts.append(f"<img alt='{html.escape(item.stem)}' src='data:image/png;base64,{data}' "
                             "style='max-width:100%'>")
            elif isinstance(item, Path):
                continue
            elif isinstance(item, Heading):
                parts.append(f"<h3>{html.escape(str.__str__(item))}</h3>")
            else:
                parts.append(f"<p>{html.escape(str(item))}</p>")
        return "\n".join(parts)

    def __repr__(self) -> str:
        out = []
        for item in self.items:
            if isinstance(item, tables.Readable):
                out.append(item.to_markdown())
            elif isinstance(item, Path):
                if item.suffix == ".png":
                    out.append(f"[figure {item}]")
            else:
                out.append(str(item))
        return "\n".join(out)

    def readables(self) -> list[tables.Readable]:
        return [i for i in self.items if isinstance(i, tables.Readable)]

    def files(self) -> list[Path]:
        return [i for i in self.items if isinstance(i, Path)]


def show(paths) -> None:
    """Show saved figure files (their PNG)."""
    from IPython.display import Image, display

    for p in paths:
        if str(p).endswith(".png"):
            display(Image(filename=str(p)))


class KeptStream(io.TextIOBase):
    """What a cell wrote to stderr, written on to the stream it replaced as it comes and kept."""

    def __init__(self, live) -> None:
        self.live, self.kept = live, io.StringIO()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.kept.write(text)
        self.live.write(text)
        return len(text)

    def flush(self) -> None:
        self.live.flush()

    def show(self) -> None:
        """The kept lines, on stdout (a log, not an error)."""
        sys.stdout.write(self.kept.getvalue())


@contextlib.contextmanager
def live_stderr():
    """Around a long cell: its stderr shown live (papermill's `--stderr-file -` streams it to the
    terminal); when the cell succeeds its output is cleared and the lines kept for `.show()`; when it
    fails they stay where they are, beside the error."""
    from IPython.display import clear_output

    stream, before = KeptStream(sys.stderr), sys.stderr
    sys.stderr = stream
    try:
        yield stream
    finally:
        sys.stderr = before
    clear_output()
