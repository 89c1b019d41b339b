"""The Method of a run, written from what was actually run and analysed, in short subsections:
design, measurement, tests, multiplicity, stopping, and what was excluded.  The rules it describes
live in bench_src/analysis (their constants in rules.py, each assumption beside the code relying
on it); only the words are here.  A run in which no sample entered the analysis gets a statement
saying so instead.
"""
from __future__ import annotations

import json
from typing import Mapping

import numpy as np
import pandas as pd

from ..analysis import compare, paired, ranktests, rules, validity
from ..digits import significant
from ..plan.comparisons import FAMILY_TITLES
from ..plan import plan_from_dict
from ..plan.model import STORED_BEFORE_BLOCK_ORDER
from ..plan.estimate import format_duration
from ..profiles import PROFILES
from ..run import other_load
from ..run.measure import RUNTIME_PREFIXES, RUNTIME_VARIABLES
from ..store.ledger import sampling_sessions
from . import findings, units
from .tables.markup import Readable

SECTIONS = ("Design", "Measurement", "Tests", "Multiplicity", "Stopping", "Several hosts", "What was excluded")


def _count_text(counts: dict) -> str:
    return ", ".join(f"{k}: {v:,}" for k, v in counts.items())


def _fmt_range(values) -> str:
    v = sorted(int(x) for x in values if pd.notna(x))
    if not v:
        return "none"
    return f"{v[0]}" if v[0] == v[-1] else f"{v[0]}-{v[-1]} (median {np.median(v):g})"


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"


def empty_text(meta: dict, df: pd.DataFrame) -> str | None:
    """The statement for a run with no valid sample, or None when there is something to analyse."""
    valid = int(df["valid"].sum()) if "valid" in df and not df.empty else 0
    if valid:
        return None
    plan = meta.get("plan", {})
    if df.empty:
        return (f"No sample has been taken in this run yet (plan: {', '.join(plan.get('workloads', [])) or 'none'}; "
                f"{plan.get('samples', '?')} measured samples per cell). There is nothing to analyse: run the plan, "
                "then analyse the directory again.")
    measured = df[df["phase"] == "measured"] if "phase" in df else df
    return (f"No sample of this run entered the analysis: {len(df):,} samples were taken "
            f"({len(measured):,} measured), and none was a successful measured sample with agreeing checksums "
            f"(statuses: {_count_text(df['status'].value_counts().to_dict())}). The failures table says why; "
            "no statistic is reported.")


def run_cells(df: pd.DataFrame) -> int:
    """The cells the run measured (a cell none of whose samples entered the analysis too): the
    Design's count, beside which Tests gives each metric's table's own."""
    return int(df["cell_id"].nunique()) if "cell_id" in df else 0


def design_text(meta: dict, df: pd.DataFrame) -> str:
    plan = meta["plan"]
    # every cell with a measured sample counts, those none of whose samples entered the analysis too
    measured = df[df["phase"] == "measured"] if "phase" in df else df
    taken = measured.groupby("cell_id").size()
    entered = df[df["valid"]].groupby("cell_id").size().reindex(taken.index, fill_value=0)

    def between(counts: pd.Series) -> str:
        return (f"{counts.min()}" if counts.min() == counts.max() else
                f"between {counts.min()} and {counts.max()}")

    samples = f"{between(taken)} measured samples" if not taken.empty else f"{plan['samples']} measured samples"
    if not taken.empty and not entered.equals(taken):
        samples += f" ({between(entered)} entered the analysis per cell"
        none = int((entered == 0).sum())
        samples += (f"; none in {none} cell{'' if none == 1 else 's'}, every sample of which failed or was "
                    "excluded)" if none else ")")
    sequential = ""
    if plan.get("max_samples"):
        sequential = (f" The first {plan['samples']} blocks were the pilot of a sequential rule fixed before the run "
                      f"(see Stopping), up to {plan['max_samples']} samples per cell.")
    warm = f"{plan['warmup']} warm-up sample{'' if plan['warmup'] == 1 else 's'}"
    warmups = (f"Each cell received {warm}, discarded" if plan.get("warmup_scope", "cell")
               == "cell" else f"Each program configuration (workload, language, variant, parameters) received "
               f"{warm} at its smallest N, discarded (a sample is a fresh process, so a "
               f"warm-up warms only the page cache, fixtures, servers and the CPU's clock, which the other N share)")
    if any(str(s.get("engine", "")).startswith("cluster") for s in meta.get("sessions", []) if isinstance(s, dict)):
        warmups += " on each host (every host of the cluster takes the plan's warm-ups itself before its first block)"
    sessions = sampling_sessions(meta)
    if len(sessions) > 1:
        warmups += (f"; the run took {len(sessions)} sessions, and each resumed session took the warm-ups again "
                    "before its first measured sample and took a block an interruption had cut again whole, so "
                    "that its pairs come from one session (a sample skipped for want of a server, taken later, "
                    "joins its block alone)")
    return (f"The run covered {run_cells(df)} cells (workload x language x variant x N x threads x "
            f"parameters, and the core count and A/A arm where the plan sets them) of the "
            f"workloads {', '.join(plan['workloads'])}. {warmups}; each cell received {samples}. Samples were taken in blocks holding every cell once, each block in a random "
            f"order (seed {plan['seed']}){block_order_text(plan)}; two cells of one block form a pair."
            f"{sequential}{unused_text(plan)}")


def block_order_text(plan: dict) -> str:
    """How a block ordered its cells (plan/model.py, Plan.ordered), as the Method's clause."""
    if plan.get("block_order", STORED_BEFORE_BLOCK_ORDER) == STORED_BEFORE_BLOCK_ORDER:
        return ", so that the languages were interleaved and slow drift spread over all cells"
    return (": the cells compared with each other (one workload and N, at every core count) next to each other, the "
            "groups and the cells within each in random order, so that the two samples of a pair were seconds "
            "apart while the languages stayed interleaved and which of a pair ran first was left to chance")


def unused_values(plan: dict) -> list[str]:
    """The parameter values the plan lists that none of its cells of that workload and language runs
    with (a value the cell's other parameters make unused is replaced by a fixed one: plan/model.py),
    each as "workload key=value (lang, ...; its cells run with ...)"; read off the plan's own cells,
    so that a cell not sampled yet is no unused value.  None for a plan that does not rebuild."""
    try:
        cells = plan_from_dict(plan).cells()
    except (KeyError, TypeError, ValueError):
        return []
    ran: dict[tuple[str, str, str], set[str]] = {}
    for cell in cells:
        for key, value in cell.params:
            ran.setdefault((cell.workload, cell.lang, key), set()).add(str(value))
    out = []
    for workload, per_lang in sorted((plan.get("params") or {}).items()):
        found: dict[tuple[str, str], list[str]] = {}
        for lang, keys in sorted((per_lang or {}).items()):
            for key, values in sorted((keys or {}).items()):
                used = ran.get((workload, lang, key))
                if not used:
                    continue
                for value in values:
                    if str(value) not in used:
                        found.setdefault((f"{workload} {key}={value}", ", ".join(sorted(used))), []).append(lang)
        out += [f"{what} ({', '.join(langs)}; its cells run with {used})" for (what, used), langs in found.items()]
    return out


def unused_text(plan: dict) -> str:
    unused = unused_values(plan)
    if not unused:
        return ""
    why = " (idle tasks released at once never sleep)" if any(u.startswith("idle_tasks ") for u in unused) else ""
    return (" The plan lists parameter values no cell ran with, because the cell's other parameters make them "
            f"unused{why}: {'; '.join(unused)}.")


def _gib(n_bytes: float) -> str:
    """A machine's memory as its owner would read it: 24 GiB, 23.5 GiB."""
    gib = n_bytes / 2**30
    return f"{gib:.0f} GiB" if abs(gib - round(gib)) < 0.05 else f"{gib:.1f} GiB"


def _utc(stamp: object) -> pd.Timestamp | None:
    try:
        t = pd.Timestamp(str(stamp))
    except (ValueError, TypeError):
        return None
    if pd.isna(t):
        return None
    return t.tz_convert("UTC") if t.tzinfo else t.tz_localize("UTC")


def when_text(meta: dict) -> str:
    """When the samples were taken: the sessions that took them, their span in UTC and the time
    they took, and the 1-minute load average each found at its start (which also counts the minute
    before it: a build just finished shows there)."""
    sessions = sampling_sessions(meta)
    starts = [t for t in (_utc(s.get("started_at")) for s in sessions) if t is not None]
    ends = [t for t in (_utc(s.get("finished_at")) for s in sessions) if t is not None]
    if not starts:
        return ""
    first, last = min(starts), max(ends) if ends else None
    day = first.strftime("%Y-%m-%d")
    span = (f"on {day} from {first:%H:%M} to {last:%H:%M} UTC" if last is not None and last.date() == first.date()
            else f"from {day} {first:%H:%M} to {last:%Y-%m-%d %H:%M} UTC" if last is not None
            else f"from {day} {first:%H:%M} UTC (no session recorded its end)")
    spent = sum(float(s["duration_s"]) for s in sessions if isinstance(s.get("duration_s"), (int, float)))
    count = "one session" if len(sessions) == 1 else f"{len(sessions)} sessions"
    loads = [(s.get("machine") or {}).get("load_avg_at_start") for s in sessions]
    loads = [float(v[0]) for v in loads if isinstance(v, (list, tuple)) and v and isinstance(v[0], (int, float))]
    cpus = (sessions[-1].get("machine") or {}).get("logical_cpus")
    load = ""
    if loads:
        load = (f"; the 1-minute load average {'was' if len(loads) == 1 else 'was at most'} "
                f"{significant(max(loads), 3)} when "
                f"{'the session' if len(loads) == 1 else 'a session'} started"
                + (f", on {cpus} logical CPUs" if cpus else "")
                + " (it counts the minute before, a build included)")
    return (f"The samples were taken {span}, in {count} of {format_duration(spent)} in all{load}. "
            + estimate_text(sessions) + other_text(sessions))


def estimate_text(sessions: list[dict]) -> str:
    """What each session's duration estimate said beside what it took: the one printed before its
    first measured sample (`estimate_s`) and, under the sequential rule, the one after its pilot's
    look (`estimate_after_pilot_s`); empty where no session recorded one."""
    parts = []
    for i, s in enumerate(sessions, 1):
        start, after, took = s.get("estimate_s"), s.get("estimate_after_pilot_s"), s.get("duration_s")
        if not isinstance(start, (int, float)) or not isinstance(took, (int, float)) or took <= 0:
            continue
        text = (f"{'the session' if len(sessions) == 1 else f'session {i}'}'s duration estimate at its start said "
                f"{format_duration(start)} ({(start - took) / took:+.0%} against the {format_duration(took)} it took)")
        if isinstance(after, (int, float)):
            text += f", the one after the pilot's look {format_duration(after)} ({(after - took) / took:+.0%})"
        parts.append(text)
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + ". "


def other_text(sessions: list[dict]) -> str:
    """What other processes took of the CPUs while the sessions measured, summed over those that
    recorded it (`other_cpu`, run/other_load.py)."""
    uses = [s["other_cpu"] for s in sessions if isinstance(s.get("other_cpu"), dict)]
    if not uses:
        return ""
    total = {k: sum(float(u.get(k, 0.0)) for u in uses) for k in ("other_s", "steal_s", "capacity_s", "span_s")}
    if total["capacity_s"] <= 0:
        return ""
    use = {**total, "cpus": uses[-1].get("cpus", 0), "share": total["other_s"] / total["capacity_s"],
           "steal_share": total["steal_s"] / total["capacity_s"]}
    text = other_load.words(use)
    text = text[0].upper() + text[1:]
    if len(uses) < len(sessions):
        text += f" (in the {len(uses)} of {len(sessions)} sessions that recorded it)"
    if other_load.competed(use):
        text += ("; they competed with the samples for the CPUs, which widens the intervals, and a cell measured "
                 "while they ran is slower than it would be alone (the pairs cancel only what the two cells of a "
                 "block share)")
    return text + ". "


def runtime_versions(df: pd.DataFrame | None) -> str:
    """The tokio versions the Rust samples recorded (their `runtime` field), or "" where none did."""
    if df is None or "runtime" not in df:
        return ""
    found = set()
    for value in df.loc[df.get("lang", pd.Series(dtype=str)) == "rust", "runtime"].dropna().unique():
        try:
            version = json.loads(value).get("tokio") if isinstance(value, str) else None
        except (ValueError, AttributeError):
            version = None
        if version:
            found.add(str(version))
    return ", ".join(f"tokio {v}" for v in sorted(found))


# The server each database workload speaks to, as its version names it: the mysql workload's server is
# whichever speaks the MySQL protocol (MariaDB by default, docs/workloads.md)
_SERVER_PRODUCTS = {"mysql": ("MariaDB", "MySQL"), "postgres": ("PostgreSQL",)}


def server_name(kind: str, version: str) -> str:
    """A database server as a reader should know it: the product its version names, then the version
    and the workload it served ("MariaDB 10.11.19-MariaDB-0+deb12u1, the mysql workload's server"),
    never the workload's name alone (a mysql row was measured against MariaDB)."""
    version = str(version)
    products = _SERVER_PRODUCTS.get(kind, ())
    named = next((p for p in products if p.lower() in version.lower()), products[-1] if products else kind)
    return f"{named} {version}, the {kind} workload's server"


def measurement(meta: dict, df: pd.DataFrame | None = None) -> str:
    plan = meta["plan"]
    sessions = sampling_sessions(meta) or [{}]
    session = sessions[-1]
    m, tc = session.get("machine", {}) or {}, session.get("toolchains", {}) or {}
    server_text = "; ".join(dict.fromkeys(server_name(v["kind"], v["version"]) for s in sessions
                                          for v in (s.get("context", {}) or {}).values()
                                          if isinstance(v, dict) and "version" in v))
    threads = plan.get("threads")
    threads_text = f"with --threads {threads}" if threads else "with every logical CPU available to each runtime"
    cores = plan.get("cores")
    if cores:
        counts = (", ".join(f"{w} at {', '.join(map(str, ks))}" for w, ks in sorted(cores.items()))
                  if isinstance(cores, Mapping) else ", ".join(map(str, cores)))
        threads_text += (f"; cells with a core count ({counts}) ran pinned to that many CPUs, with as many "
                         "threads")
    tokio = runtime_versions(df) or "the tokio version recorded per sample"
    # when and under what load (its own paragraph), then the machine, the programs' threads before the
    # servers (after them, ", with --threads 2" read as the last server's setting), then how a sample is taken
    when = when_text(meta).strip()
    return ((when + "\n\n" if when else "") + f"All measurements were taken on {m.get('cpu_model', 'an unknown CPU')} with "
            f"{m.get('logical_cpus')} logical CPUs and {_gib(m.get('ram_bytes', 0))} of RAM, Linux {m.get('kernel')}, "
            f"using {tc.get('go')}, {tc.get('rustc')} and {tokio}, {threads_text}"
            + (f"; database servers: {server_text}" if server_text else "") + ".\n\n"
            "Each sample is a fresh process started by a small launcher; wall time comes from the monotonic clock "
            "around the process, the workload time from the program's own monotonic timer, and CPU time and peak "
            "resident memory from the kernel's accounting of the finished process (wait4), never from polling"
            + split_text(m) + ". " + env_text(m)
            + cluster_text(meta))


def env_text(machine: dict) -> str:
    """The programs' environment: what the harness took out of it."""
    if "runtime_variables_removed" not in machine:  # a run of an older harness: not recorded
        return ""
    removed = machine["runtime_variables_removed"]
    names = [*RUNTIME_VARIABLES, *(f"{prefix}*" for prefix in RUNTIME_PREFIXES)]
    text = f"Both programs ran without the variables that change a runtime or the C library ({', '.join(names)})"
    return text + (f"; of those, {', '.join(removed)} {'was' if len(removed) == 1 else 'were'} set and taken out."
                   if removed else ".")


def split_text(machine: dict) -> str:
    """How far the split of CPU time into user and system time can be read (its sum is exact)."""
    how = machine.get("cpu_accounting")
    if how == "virtual":
        return "; CPU time's split into user and system time is counted at every switch between the two"
    where = "this kernel" if how else "most kernels (this one's configuration was not readable)"
    return (f"; {where} split{'s' if how else ''} CPU time into user and system time by what the timer tick "
            "finds, so that split is a sample (coarse for a run of a few ticks) while its sum is exact")


def cluster_text(meta: dict) -> str:
    """How the samples were spread over hosts, when a session ran on a cluster."""
    hosts = {h: d for s in meta.get("sessions", []) for h, d in (s.get("hosts") or {}).items()}
    if not hosts:
        return ""
    engines = sorted({s.get("engine") for s in meta.get("sessions", []) if s.get("hosts")})
    labels = "; ".join(d.get("label", h) for h, d in sorted(hosts.items()))
    return (f" The blocks ran on {len(hosts)} hosts of a Dask cluster ({', '.join(engines)}: {labels}), one block "
            "at a time per host and each block whole on one host, so every Go/Rust pair was taken on one host; each "
            "host took the warm-ups itself and ran programs of the session's sha256." + lost_hosts_text(meta))


def lost_hosts_text(meta: dict) -> str:
    """The hosts lost during the run (meta.json's `hosts_lost`), when any was: how many, how many
    mid-block and the samples of those blocks that had arrived."""
    losses = [e for s in meta.get("sessions", []) if isinstance(s, dict) for e in (s.get("hosts_lost") or [])
              if isinstance(e, dict)]
    if not losses:
        return ""
    mid = [e for e in losses if e.get("block") is not None]
    delivered = sum(int(e.get("samples_delivered") or 0) for e in mid)
    text = f" A host was lost {len(losses)} time{'s' if len(losses) != 1 else ''} during the run"
    if not mid:
        return text + ", each time between blocks."
    one = len(mid) == 1
    return (text + f", {len(mid)} of them mid-block ({delivered} sample{'s' if delivered != 1 else ''} of "
            f"{'that block' if one else 'those blocks'} had arrived); a block cut by a lost host was taken again "
            "whole, and only complete runs of a block are analysed.")


# Tables whose comparisons form families of their own, beside the run's: named in the Method's
# Multiplicity, not counted among the run's families (the change with cores repeats the Go-vs-Rust
# rows it starts from).
OWN_FAMILIES = {
    "ratio_vs_cores_": "the change of each Go/Rust ratio from the fewest cores",
    "speedup_": "each program's speed-up with more cores",
    "per_host_": "each host's Go-vs-Rust comparisons",
    "across_hosts_": "the Go-vs-Rust comparisons combined across hosts",
}


def _comparison_tables(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, pd.DataFrame]]:
    return [(name, t) for name, t in tables.items()
            if "family" in t.columns and not t.empty and not name.startswith(tuple(OWN_FAMILIES))]


def _own_families(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """What the tables of OWN_FAMILIES present (and not empty) hold, once per kind of table."""
    return [what for prefix, what in OWN_FAMILIES.items()
            if any(name.startswith(prefix) and not t.empty for name, t in tables.items())]


def _metric_word(t: pd.DataFrame) -> str:
    """The name of a summary's metric as the Method writes it ('workload time', 'peak RSS')."""
    metric = t["metric"].iloc[0] if "metric" in t and len(t) else ""
    return units.metric_name(metric).split(" (")[0] if metric else ""


def _tied_text(summaries: list[pd.DataFrame]) -> str:
    """Where the median intervals' coverage is a lower bound: the cells whose values tie, counted
    per metric, each out of the cells of that metric's own table (each metric's summary describes
    the cells with a value that counts for it; summed, they would read as more cells than the run
    had, and one metric's count of cells is not another's)."""
    counts = []
    for t in summaries:
        tied = int((t.get("ci_coverage_kind", pd.Series(dtype=str)) == "at least").sum())
        if tied:
            counts.append((tied, _metric_word(t), len(t)))
    if not counts:
        return ""
    first, *rest = counts
    words = [f"{first[0]} of the {first[2]} cells" + (f" in {first[1]}" if first[1] else "")]
    same = len({len(t) for t in summaries}) == 1  # every table holds the same cells: one count says it
    words += [(f"{tied}" if same else f"{tied} of the {cells}") + (f" in {name}" if name else "")
              for tied, name, cells in rest]
    return "; at least that where values tie: " + ", ".join(words)


def _cells_text(summaries: list[pd.DataFrame], run_cells: int | None) -> str:
    """The samples per cell and the cells each metric's table holds, read off the tables themselves
    (stats.summarize: a cell with no value that counts for a metric has no row in its table); where
    the tables hold different numbers of cells, or fewer than the run's `run_cells`, why."""
    names = [_metric_word(t) or "the metric" for t in summaries]
    memory = any(t["metric"].iloc[0] in rules.MEMORY_METRICS for t in summaries if "metric" in t and len(t))
    counting = "samples that count for its metric (valid; for memory, with every task alive at once)" if memory \
        else "valid samples"
    ranges: dict[str, list[str]] = {}
    for name, t in zip(names, summaries):
        ranges.setdefault(_fmt_range(t["samples"]), []).append(name)
    if len(ranges) == 1:
        text = f"each cell had {next(iter(ranges))} {counting}"
    else:
        text = f"the cells had {counting}: " + ", ".join(f"{r} in {' and '.join(n)}" for r, n in ranges.items())
    cells: dict[int, list[str]] = {}
    for name, t in zip(names, summaries):
        cells.setdefault(len(t), []).append(name)
    most = max(cells)
    run = run_cells if run_cells and run_cells > most else None
    if len(cells) == 1 and run is None:
        return text
    why = []
    if run is not None:
        k = run - most
        why.append(f"{k} ha{'s' if k == 1 else 've'} no valid sample: every sample failed or was excluded")
    for k, metric_names in cells.items():
        if k < most:
            why.append(f"{most - k} more, in {' and '.join(metric_names)}, ha{'s' if most - k == 1 else 've'} none that "
                       f"counts for {'memory' if memory else 'it'}: What was excluded says which")
    held = (f"{most} cells" if len(cells) == 1 else
            " and ".join(f"{k} cells of {' and '.join(n)}" if i == 0 else f"{k} of {' and '.join(n)}"
                         for i, (k, n) in enumerate(sorted(cells.items(), reverse=True))))
    return (text + f"; the tables hold {held}" + (f", of the {run} cells run" if run is not None else "")
            + (f" ({'; '.join(why)})" if why else ""))


def tests(tables: Mapping[str, pd.DataFrame], run_cells: int | None = None) -> str:
    """The Tests subsection; `run_cells`: the cells the run measured (the Design's count), beside
    which each metric's table's own count is given where it differs."""
    parts = []
    summaries = [t for t in tables.values() if {"samples", "ci_coverage"} <= set(t.columns) and not t.empty]
    if summaries:
        s = pd.concat(summaries)
        cov = s["ci_coverage"].dropna()
        parts.append(
            f"Each cell's median is given with a distribution-free interval between two order statistics for a "
            f"nominal {_pct(rules.CONFIDENCE)} (exact coverage "
            + (f"{_pct(cov.min())}" if cov.nunique() == 1 else f"{_pct(cov.min())} to {_pct(cov.max())}")
            + " by the number of samples" + _tied_text(summaries)
            + f"); {_cells_text(summaries, run_cells)}." if not cov.empty else
            "Cells had too few samples for a median interval.")
    comps = _comparison_tables(tables)
    if comps:
        # the rows that could not be tested have no test: counted under that name, not as ""
        used = pd.concat([t["test"].where(~compare.untested(t), "none (not tested)") for _, t in comps
                          if "test" in t]).value_counts().to_dict() if any("test" in t for _, t in comps) else {}
        parts.append(
            "Two cells measured in the same blocks are compared through their per-block ratio (the difference of "
            f"log values): the {paired.TEST_NAMES[paired.SIGNED_RANK]} test with the Hodges-Lehmann estimate and the "
            "Tukey-Moses interval at every level it can reach (with n pairs, none below 2 / 2^n; above "
            f"{ranktests.EXACT_MAX} pairs, its normal approximation); below that floor, "
            f"where few pairs meet a large family, {paired.TEST_NAMES[paired.T_TEST]} on those differences (with "
            f"{paired.T_DOF_LOST} degrees of freedom fewer than pairs, which keeps it at or below its level on bimodal "
            "noise), its interval never narrower than the signed-rank one at the floor; where values tie (a grid "
            "coarse against the noise), Student's t alone, since tied differences carry no sign. The choice is made "
            "by the number of pairs, the family's size and the ties, never by the signs of the differences."
            "\n\nThe reported ratio is exp of the estimate: the centre of the per-block ratios (Hodges-Lehmann; their "
            "geometric mean where Student's t alone decides), not the ratio of the two cells' medians (the two part "
            "where the programs' noise differs in shape: a slow mode, spikes). The test and the interval are about "
            "this one quantity; \"no difference\" means per-block log ratios symmetric about 0, which equal medians "
            "alone do not make."
            "\n\nValues on a grid (memory in pages) widen the interval by their rounding's error: up to half a step "
            f"for a cell whose noise (sd) is below {paired.DITHER_SD_STEPS:g} of a step, a negligible amount where "
            "the noise spans several steps (it dithers the grid). Where pairs are missing the two samples of log "
            "values are compared instead (Welch's t, or the exact Mann-Whitney test where it reaches the level)."
            + (f" Tests used: {_count_text(used)}." if used else ""))
    return "\n\n".join(parts)  # one paragraph per part: the cells, then the comparisons


def _measured_power() -> str:
    """'59-86% at 6 to 20 pairs': what the mde's power came to averaged over the spread's uncertainty
    (rules.MDE_POWER_MEASURED), over every number of pairs simulated."""
    low, high, counts = rules.mde_power_measured(rules.MDE_POWER_MEASURED)
    return f"{low * 100:.0f}-{high:.0%} at {counts[0]} to {counts[-1]} pairs"


def multiplicity(tables: Mapping[str, pd.DataFrame], margin: float, alpha: float) -> str:
    comps = _comparison_tables(tables)
    if not comps:
        return ""
    parts = [
        f"Each table and metric is one family. Within it the Benjamini-Hochberg procedure keeps the expected share "
        f"of false differences among those called (no difference, or the other direction) at most {alpha:g}, and "
        f"every interval of the table is shown at the level 1 - max(R, 1) x {alpha:g} / m (R differences called "
        f"among m comparisons; Benjamini and Yekutieli's false coverage-statement rate), so that an interval excludes 1 "
        f"exactly when its comparison is called a difference (\"by less than {margin * 100:g}%\" where it also lies "
        f"inside ±{margin * 100:g}%). Equivalence within ±{margin * 100:g}% is called when that same interval holds 1 "
        f"and lies inside the margin; anything else is inconclusive, with the smallest difference "
        f"it leaves open no longer (the MDE: the smaller of the difference it would call with {rules.POWER:.0%} "
        f"power at the spread measured and the farther end of its interval, beyond which a difference is excluded "
        f"already; at least the interval's half-width; the spread is itself uncertain, and the power averaged over "
        f"it is lower: {_measured_power()} in the package's simulation, docs/statistics.md)."]
    rows, notes = [], []
    for name, t in comps:
        fam = t["family_title"].iloc[0] if "family_title" in t.columns else t["family"].iloc[0]
        metric = t["metric"].iloc[0] if "metric" in t.columns else "the metric"
        not_tested = compare.untested(t)  # no pairs that count: apart from the tested rows' pairs and verdicts
        paired_rows = t[(t["pairing"] == "paired") & ~not_tested]
        kinds = t.loc[~not_tested, "verdict_kind"].value_counts() if "verdict_kind" in t else pd.Series(dtype=int)
        level = t["ci_level"].dropna().iloc[0] if "ci_level" in t and t["ci_level"].notna().any() else np.nan
        unpaired = t[t["pairing"] != "paired"]
        if len(unpaired):
            reasons = sorted(set(unpaired["warning"].dropna()) - {""}) if "warning" in t.columns else []
            notes.append(f"{fam} ({metric}): {len(unpaired)} unpaired" + (f" ({'; '.join(reasons)})" if reasons else ""))
        row = {"family": fam, "metric": metric, "comparisons": str(len(t)),
               "pairs each": _fmt_range(paired_rows["pairs"]) + (f" ({len(unpaired)} unpaired)" if len(unpaired) else "")}
        if "verdict_kind" in t:
            inside = int(t["within_margin"].sum()) if "within_margin" in t.columns else 0
            called = int(kinds.get('a', 0) + kinds.get('b', 0))
            row["differences"] = f"{called}" + (f" ({inside} within ±{margin * 100:g}%)" if inside else "")
            row["equivalent"] = str(int(kinds.get("equivalent", 0)))
            row["inconclusive"] = str(int(kinds.get("inconclusive", 0)))
            row[compare.NOT_TESTED] = str(int(not_tested.sum()))
        # as the table's caption and column and the ratio figure name it (tables.ci_name): "97.0%", not "97%"
        row["intervals at"] = units.percent(level, digits=3) if np.isfinite(level) else ""
        mde = (t.loc[(t["verdict_kind"] == "inconclusive") & ~not_tested, "mde"].dropna()
               if "mde" in t.columns and "verdict_kind" in t else pd.Series(dtype=float))
        low, high = (units.detectable(mde.min()), units.detectable(mde.max())) if not mde.empty else ("", "")
        row["inconclusive rows' MDE"] = low if low == high else f"{low} to {high}"
        rows.append(row)
    parts.append("Per family (a difference \"within\" the margin is called and smaller than it; the MDE, the "
                 "smallest difference an inconclusive row leaves open no longer):")
    families = pd.DataFrame(rows).fillna("")
    if compare.NOT_TESTED in families.columns and (families[compare.NOT_TESTED].isin(["0", ""])).all():
        families = families.drop(columns=compare.NOT_TESTED)  # a column of noughts says nothing
    parts.append("\n\n" + Readable(families).to_markdown().strip() + "\n\n")
    if notes:
        parts.append(f"Unpaired: {'; '.join(notes)}.")
    parts.append("Tables of different metrics are separate families: reading time and memory together, the "
                 f"error rates add up (at most {2 * alpha:g}).")
    own = _own_families(tables)
    if own:
        cores_tables = any(name.startswith(("ratio_vs_cores_", "speedup_")) and not t.empty
                           for name, t in tables.items())
        parts.append(f"Families of their own (per metric, and each host's per host), decided by the same rule at "
                     f"their own levels (each table's ci_level): {'; '.join(own)}."
                     + (" The change and the speed-up with cores are tested as a fixed design: in a sequential run "
                        "they spend no alpha over the looks, and their rows say so in their warning."
                        if cores_tables else ""))
    return " ".join(parts).replace(" \n\n", "\n\n").replace("\n\n ", "\n\n")


def stopping(meta: dict, design: Mapping | None) -> str:
    plan = meta["plan"]
    if not design or len(design.get("looks", ())) < 2:
        return (f"Fixed design: every cell got {plan['samples']} measured samples whatever the data; every "
                "comparison is tested once on all its pairs.")
    looks, spend = design["looks"], design.get("spending", rules.look_spending(len(design["looks"])))
    sizes = {FAMILY_TITLES.get(f, f): m for f, m in (design.get("family_sizes") or {}).items() if m}
    budget = plan.get("time_budget_s")
    late_from = design.get("late_from") or len(looks)
    late = (f" (past {looks[late_from - 1]}, at {', '.join(map(str, looks[late_from:]))} for the cells whose blocks "
            f"to the next look cost at most {rules.LATE_STEP_S:g} s)" if late_from < len(looks) else "")
    return (f"Sequential: after {looks[0]} blocks and again at {', '.join(map(str, looks[1:late_from]))} pairs{late}, "
            f"each family "
            f"and metric ({', '.join(rules.SEQUENTIAL_METRICS)}) was decided by the rule above with the looks so far; "
            f"a cell stopped once every comparison it took part in was decided for every metric (a difference or "
            f"equivalence) or, still inconclusive, could already have shown a difference of "
            f"{rules.PRECISION_TARGET:.0%} (its minimum detectable effect at most that: \"precise\"), and the further "
            f"blocks went to the open cells, first where a second of machine time narrowed the widest interval most. "
            f"Alpha was split over the looks as "
            f"{', '.join(f'{s:.3g}' for s in spend)} (Bonferroni): a comparison's p-value is the smallest over its "
            f"looks of p / that share, and its interval the intersection of each look's interval at level "
            f"1 - share x the family's level (where they have no point in common, the shortest interval meeting "
            f"each, and the row says so); its minimum detectable effect is read off its last look's own "
            f"interval, since a difference must pass that look's test to be called (below the signed-rank test's "
            f"floor, off that interval's longer side about the estimate, since a difference either way must clear "
            f"it; never beyond the width of the interval shown)."
            + (f" Planned family sizes: {_count_text(sizes)}." if sizes else "")
            + (f" A time budget of {budget:g} s started no block after it{_budget_against_profile(plan)}."
               if budget else ""))


def hosts_text(tables: Mapping[str, pd.DataFrame], design: Mapping | None = None) -> str:
    """A run on several hosts: its Go-vs-Rust tables, its findings and its sequential rule pool the
    hosts' blocks (a reading of these hosts), and per metric the rows the combination across hosts
    reads otherwise (findings.hosts_reading, in its words); '' for a run on one host."""
    readings = [(m, findings.hosts_reading(dict(tables), m)) for m in findings.FINDING_METRICS]
    readings = [(m, r) for m, r in readings if r is not None]
    if not readings:
        return ""
    sequential = bool(design) and len(design.get("looks", ())) >= 2
    subject = ("The Go-vs-Rust tables and the findings" + (", and the sequential rule that decided when each cell "
                                                            "stopped," if sequential else ""))
    lead = readings[0][1].pooled_text(subject)
    return " ".join([f"{lead}; for a claim about machines beyond these, read the Hosts section (tau², I², Cochran's "
                     "Q and Welch's test of equal host means say how far the hosts differ).",
                     *(f"{units.metric_name(m)[:1].upper()}{units.metric_name(m)[1:]}: {r.differ_text()}."
                       for m, r in readings)])


def _budget_against_profile(plan: Mapping) -> str:
    """' (the article profile's own budget is 3600 s: this run changed it)' when a run's budget is
    not its profile's; '' otherwise."""
    profile = PROFILES.get(str(plan.get("profile")))
    own = profile.settings.get("time_budget_s") if profile is not None else None
    if not isinstance(own, (int, float)) or own == plan.get("time_budget_s"):
        return ""
    return f" (the {profile.name} profile's own budget is {own:g} s: this run changed it)"


def access_text(meta: dict) -> str:
    """What the sessions noted about who else could read the results directory (an existing
    directory the run did not create keeps its mode); empty when it was private."""
    notes = list(dict.fromkeys(s["results_dir_access"] for s in meta.get("sessions", [])
                               if s.get("results_dir_access")))
    if not notes:
        return ""
    return ("The results directory was not private when the run wrote into it: " + "; ".join(notes)
            + ". The samples and meta.json are 0600 either way; an existing directory's mode is never changed.")


def excluded(df: pd.DataFrame) -> str:
    measured = df[df["phase"] == "measured"]
    valid = df[df["valid"]]
    out = measured[~measured["valid"]]
    reasons = out["status"].value_counts().to_dict()
    return ("Both programs print a checksum of their work; samples of a workload, N and parameter set whose "
            f"checksums disagreed across languages or samples were excluded, as were failed samples. "
            f"{len(valid):,} samples entered the analysis"
            + (f"; {len(out):,} measured samples were excluded ({_count_text(reasons)})." if len(out)
               else "; none was excluded.") + _memory_left_out(valid))


def _memory_left_out(valid: pd.DataFrame) -> str:
    """The valid samples that count for time but not for memory (validity.counted): idle or sleep
    tasks whose early tasks had finished before the last was spawned, or, from a program older than
    its count of tasks alive, whose spawning outlasted their shortest wait.  Each reason is said once,
    then the cells it holds with their counts and figures."""
    if valid.empty or "workload" not in valid.columns:
        return ""
    left = valid.drop(index=validity.counted(valid, "peak_rss_mib").index)
    if left.empty:
        return ""
    one = len(left) == 1
    alive = pd.to_numeric(left.get("alive_at_spawn", pd.Series(np.nan, index=left.index)), errors="coerce")

    def span(values, fmt) -> str:
        lo, hi = values.min(), values.max()
        return fmt(lo) if lo == hi else f"{fmt(lo)} to {fmt(hi)}"

    def seconds(ns) -> str:
        return units.quantity(ns / 1e9, "s")

    # a workload, language and N run with several parameter sets (sleep with work=0 and work=50000)
    # names each cell's parameters: "sleep go N = 10,000: 20" would read as one cell of 20 samples
    params = valid["params"].fillna("") if "params" in valid.columns else pd.Series("", index=valid.index)
    several = params.groupby([valid["workload"], valid["lang"], valid["n"]]).nunique() > 1

    def cells(rows: pd.DataFrame, figure) -> str:
        keyed = rows.assign(_params=params.reindex(rows.index).fillna(""))
        return "; ".join(f"{w} {lang} N = {units.count(n)}"
                         + (f" ({str(p).replace(',', ', ')})" if several.get((w, lang, n), False) and p else "")
                         + f": {len(g)}{figure(g)}"
                         for (w, lang, n, p), g in keyed.groupby(["workload", "lang", "n", "_params"], sort=True))

    parts = []
    short = left[alive.notna()]
    if not short.empty:
        parts.append("some of their tasks had finished before the last was spawned, so their peak held fewer than N "
                     "tasks (" + cells(short, lambda g: ", " + span(pd.to_numeric(g["alive_at_spawn"]),
                                                                     lambda v: f"{int(v):,}") + " alive") + ")")
    unknown = left[alive.isna()]
    if not unknown.empty:
        floor = validity.shortest_wait(unknown)
        spawned = pd.to_numeric(unknown.get("spawned_ns", pd.Series(np.nan, index=unknown.index)), errors="coerce")
        floors = f" ({span(floor, seconds)})" if floor.notna().all() else ""
        parts.append("their programs did not count the tasks alive at the last spawn (programs older than the count), "
                     f"and their spawning lasted longer than a task's shortest wait{floors}, so no peak can be shown "
                     "to hold N tasks (" + cells(unknown, lambda g: (", last spawn after " + span(
                         spawned[g.index].dropna(), seconds)) if spawned[g.index].notna().any() else "") + ")")
    return (f" Of the samples that entered, {len(left):,} count{'s' if one else ''} for time but not for memory: "
            + "; and ".join(parts) + ".")


def sections(meta: dict, df: pd.DataFrame, tables: Mapping[str, pd.DataFrame] | None = None,
             design: Mapping | None = None, margin: float = rules.MARGIN,
             alpha: float = rules.ALPHA) -> list[tuple[str, str]]:
    """The Method as (heading, paragraph) pairs; one ("Method", statement) for an empty run."""
    empty = empty_text(meta, df)
    if empty:
        return [("Method", empty)]
    tables = tables or {}
    out = [("Design", design_text(meta, df)), ("Measurement", measurement(meta, df)), ("Tests", tests(tables, run_cells(df))),
            ("Multiplicity", multiplicity(tables, margin, alpha)), ("Stopping", stopping(meta, design)),
            ("Several hosts", hosts_text(tables, design)), ("What was excluded", excluded(df)),
            ("Results directory", access_text(meta))]
    return [(h, t) for h, t in out if t]



def text(meta: dict, df: pd.DataFrame, tables: Mapping[str, pd.DataFrame] | None = None,
         design: Mapping | None = None, margin: float = rules.MARGIN) -> str:
    """The Method as Markdown: one '### heading' per subsection."""
    parts = sections(meta, df, tables, design, margin)
    if len(parts) == 1 and parts[0][0] == "Method":
        return parts[0][1]
    return "\n\n".join(f"### {h}\n\n{t}" for h, t in parts)
