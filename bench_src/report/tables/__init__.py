"""Tables for reading (one module per family of tables, `formatting` and `markup` shared): the analysis tables made compact and unit-formatted.

The analysis tables (per-cell summaries, Go vs Rust and variant comparisons, per-task costs, drift,
checksums) hold raw numbers at full precision; they are exported as CSV unchanged.  A reader wants
less: values with their unit (12.3 ms, 45.6 MiB), a median with its interval in one cell, the ratio
with its interval and verdict in one cell (as benchstat and pyperf print them), p-values with two
significant digits, and no column that is empty or holds one value in every row: those values go
into a caption line above the table.

`readable(table, kind)` returns a `Readable`: the formatted frame (strings), its caption, and
Markdown and HTML renderings that always show every row.  The formatting works on column names and
tolerates extra or missing columns, so tables that gain columns (pairing, models, minimum detectable
effect, verdict kinds) format without change.
"""
from __future__ import annotations

import pandas as pd

from .. import units
from .cells import drift, idle_wait_modes, noise_model, per_task, per_unit, summary
from .comparisons import aa, comparison, memory_above_baseline, models, robustness, samples_needed, variants
from . import cores, hosts, posts
from .formatting import (VERDICT_KINDS, blank, ci_name, finish, param_columns, params_dict, params_text,
                         shared_text, split_constants, threads_cells, threads_exceptions, threads_text,
                         verdict_kinds)
from .markup import Readable, from_markdown
from .status import CELL, checksums, failure_groups, failures, status, status_counts

__all__ = ["CELL", "FORMATTERS", "Readable", "VERDICT_KINDS", "aa", "blank", "checksums", "ci_name", "comparison", "cores",
           "drift", "failure_groups", "failures", "finish", "generic", "hosts", "idle_wait_modes", "memory_above_baseline", "models",
           "noise_model", "param_columns", "params_dict", "params_text", "per_task", "per_unit", "readable", "robustness",
           "samples_needed", "shared_text", "split_constants", "status", "status_counts", "summary", "threads_cells",
           "threads_exceptions", "threads_text",
           "variants", "verdict_kinds"]


def generic(table: pd.DataFrame, title: str = "") -> Readable:
    """Any other table: floats with 4 significant digits, p-values with 2, empty and constant columns
    into the caption."""
    out = table.copy()
    for c in out.columns:
        if c in ("p_value", "p_adjusted"):
            out[c] = out[c].map(units.p_value)
        elif pd.api.types.is_float_dtype(out[c]):
            out[c] = out[c].map(lambda v: units.significant(v, 4))
    return finish(out, title)


FORMATTERS = {
    "go_vs_rust_": comparison, "article_": comparison, "variants_": variants, "summary_": summary, "per_task_": per_task,
    "drift_": drift, "aa_": aa, "samples_needed_": samples_needed, "checksums": checksums, "status": status, "failures": failures,
    "models_": models, "robustness_": robustness, "memory_above_baseline": memory_above_baseline,
    "idle_wait_modes": idle_wait_modes, "per_host_": hosts.per_host, "across_hosts_": hosts.combined,
    "host_values_": hosts.values,
    "reproduce_other_posts": posts.other_posts, "ratio_vs_cores_": cores.ratio_vs_cores, "speedup_": cores.speedup,
}


def readable(table: pd.DataFrame, name: str = "") -> Readable:
    """The reading form of an analysis table, chosen by its name (as exported: `go_vs_rust_elapsed_s`,
    `summary_peak_rss_mib`, `status`, ...); other tables get the generic formatting."""
    for prefix, fn in FORMATTERS.items():
        if name == prefix or (prefix.endswith("_") and name.startswith(prefix)):
            return fn(table)
    return generic(table, name.replace("_", " "))
