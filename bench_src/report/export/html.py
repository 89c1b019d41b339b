"""One self-contained HTML report per results directory (`export/report.html`): the generated Method
text, the status and failure tables in full, every comparison table formatted for reading, and every
figure embedded as an SVG data URI.  It references nothing outside itself (no fonts, scripts,
stylesheets or images), so it can be mailed, archived or opened offline.

Check it in a browser from the command line (writes a PNG of the page, builds the report first when
the directory has none):

    python -m bench_src report data/results/<run id> --screenshot /tmp/report.png
"""
from __future__ import annotations

import base64
import datetime as dt
import html
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .. import findings, tables, units
from ...store.ledger import sampling_sessions
from ...statuses import OK
from .base import export_dir, written

PAGE = "report.html"  # the report's page in the export directory


def page_path(results_dir: str | Path) -> Path:
    """Where a results directory's report page is."""
    return export_dir(results_dir) / PAGE


STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #1d1d1f; margin: 0; background: #fff; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 21px; margin: 40px 0 8px; padding-top: 8px; border-top: 2px solid #e5e5e5; }
h3 { font-size: 17px; margin: 28px 0 6px; }
p.meta { color: #555; margin: 0 0 12px; }
nav ul { columns: 3; margin: 8px 0 0; padding-left: 18px; }
.facts { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.fact { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 130px; }
.fact b { display: block; font-size: 20px; }
.fact.bad b { color: #b3261e; }
.method { max-width: 75em; }
figure { margin: 18px 0 28px; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 13px; }
.table-wrap { overflow-x: auto; margin: 6px 0 18px; }
table.data { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
table.data th, table.data td { border-bottom: 1px solid #e3e3e3; padding: 3px 10px; text-align: left;
                               vertical-align: top; }
table.data th { background: #f5f5f7; position: sticky; top: 0; }
table.data tr:hover td { background: #fafafa; }
p.table-title { font-weight: 600; margin: 14px 0 2px; }
p.caption { color: #555; font-size: 13px; margin: 0 0 4px; }
p.empty { color: #555; font-style: italic; }
.note { color: #555; }
section#findings ol { margin: 4px 0 14px; }
section#findings p.summary { font-weight: 600; margin: 16px 0 4px; }
"""

SECTIONS = (  # (id, heading, table prefixes, figure prefixes, note)
    ("samples", "Failures, samples and checksums", ("failures", "status", "checksums"), (),
     "Every sample that is not ok with its reason, every cell by status (warm-ups included), and the checksums "
     "Go and Rust printed for the same work."),
    # each metric's section holds its verdicts' robustness across variants, and memory's the peaks above
    # each program's baseline: tables of that metric, not "other" ones
    ("time", "Workload time: Go vs Rust", ("go_vs_rust_elapsed_s", "summary_elapsed_s", "robustness_elapsed_s"),
     ("ratio_elapsed_s_vs_n", "elapsed_s_vs_n"), ""),
    ("memory", "Peak memory: Go vs Rust", ("go_vs_rust_peak_rss_mib", "summary_peak_rss_mib", "robustness_peak_rss_mib",
                                           "memory_above_baseline", "idle_wait_modes"),
     ("ratio_peak_rss_mib_vs_n", "peak_rss_mib_vs_n"), ""),
    ("cpu", "CPU time: Go vs Rust", ("go_vs_rust_cpu_s", "summary_cpu_s", "robustness_cpu_s"), (), ""),
    ("models", "Other concurrency models against tasks", ("models_",), (),
     "OS threads, unspawned futures and one-thread runtimes against the tasks (goroutines, tokio tasks) of the "
     "same work, in either language: kept out of the Go-vs-Rust tables, which compare tasks with tasks; a family "
     "per metric of their own."),
    ("article", "The article's settings: Go vs Rust", ("article_",), (),
     "The article's own programs and parameters, Go against Rust at each N: a family of its own, decided by the "
     "same rule (the sequential rule's too). Its work is not always the same in both languages (kernel=article: "
     "a loop whose result is never used, which Rust's compiler removes), so these rows stay out of the "
     "like-for-like table above; the reproduction notebook sets them beside the article's claims."),
    ("hosts", "Hosts: each on its own, and combined", ("across_hosts_", "per_host_", "host_values_"), ("forest_",),
     "A run on several hosts: the Go/Rust ratio combined across hosts (random effects: tau, I², holds on k of m) "
     "and each host's own verdicts; pairs form only within a host."),
    ("variants", "Variants within a language", ("variants_",), (),
     "Each variant (or parameter set) against its language's default for the same work."),
    ("per-task", "Cost of one more task", ("per_task_",), ("per_task_",), ""),
    ("distributions", "Distributions of the samples", (), ("distribution_",), ""),
    ("quality", "Quality checks", ("drift_", "samples_needed_", "aa_"), (),
     "Drift of each cell with the run order; samples needed for an interval on the ratio within the equivalence margin; the A/A check when "
     "the run was one."),
)


def _data_uri(path: Path) -> str:
    kind = {"svg": "image/svg+xml", "png": "image/png"}[path.suffix[1:]]
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _figure(name: str, paths: list[Path], title: str = "") -> str:
    """A figure with its own title as the caption and alt text (the file name where it has none),
    and where its files are."""
    by_ext = {p.suffix[1:]: p for p in paths}
    src = by_ext.get("svg") or by_ext.get("png")
    if src is None or not src.exists():
        return ""
    said = html.escape(title or name)
    return (f"<figure id='fig-{html.escape(name)}'><img alt='{said}' src='{_data_uri(src)}'>"
            f"<figcaption>{said} (export/figures/{html.escape(name)}.svg, .png, .pdf)</figcaption>"
            f"</figure>")


def _table(name: str, table) -> str:
    readable = tables.readable(table, name)
    return (f"<div class='table-wrap' id='table-{html.escape(name)}'>{readable.to_html()}"
            f"<p class='caption'>export/tables/{html.escape(name)}.csv (raw) and .md</p></div>")


def _matches(name: str, prefixes) -> bool:
    return any(name == p or (p.endswith("_") and name.startswith(p)) or name.startswith(p + "_") or name == p
               for p in prefixes)


def _facts(rep) -> str:
    df = rep.df
    total = len(df)
    measured = int((df["phase"] == "measured").sum()) if total else 0
    valid = int(df["valid"].sum()) if total else 0
    not_ok = int((df["status"] != OK).sum()) if total else 0
    cells = int(df["cell_id"].nunique()) if total else 0
    items = [("samples", units.count(total)), ("measured", units.count(measured)), ("valid", units.count(valid)),
             ("not ok", units.count(not_ok)), ("cells", units.count(cells))]
    return "<div class='facts'>" + "".join(
        f"<div class='fact{' bad' if label == 'not ok' and not_ok else ''}'><b>{value}</b>{label}</div>"
        for label, value in items) + "</div>"


FINDINGS_FIGURES = ("verdicts_elapsed_s", "verdicts_peak_rss_mib")


def _findings(rep, used_figures: set) -> str:
    """The answer first: per metric the summary, the differences largest first (findings.ORDER), the verdict map."""
    found = rep.findings  # in the words of the report's margin
    parts = ["<section id='findings'><h2>Findings</h2>"]
    if not found:
        parts.append(f"<p class='note'>{html.escape(findings.none_made(rep.df))}</p>")
    for f in found:
        parts.append(f"<p class='summary'>{html.escape(f.summary())}.</p>")
        lines = f.lines()
        if lines:
            parts.append("<ol>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ol>")
    for name in FINDINGS_FIGURES:
        if name in rep.figures:
            parts.append(_figure(name, rep.figures[name], rep.figure_titles.get(name, "")))
            used_figures.add(name)
    return "".join(parts) + "</section>"


def _method(text: str) -> str:
    """The Method's subsections ('### heading' blocks) as HTML, its tables ('|' blocks) as tables."""
    out = ["<section id='method'><h2>Method</h2>"]
    for block in (b for b in text.split("\n\n") if b.strip()):
        if block.startswith("### "):
            out.append(f"<h3>{html.escape(block[4:].strip())}</h3>")
        elif block.startswith("|"):
            out.append(tables.from_markdown(block).to_html())
        else:
            out.append(f"<p class='method'>{html.escape(block)}</p>")
    return "".join(out) + "</section>"


def render(rep) -> str:
    """The report's HTML text (see the module docstring)."""
    meta = rep.meta or {}
    run_id = meta.get("run_id") or rep.results_dir.name
    plan = meta.get("plan", {})
    session = (sampling_sessions(meta) or [{}])[-1]
    machine = session.get("machine", {}) or {}
    sub = " · ".join(x for x in (
        f"profile {plan.get('profile')}" if plan.get("profile") else "",
        f"plan {meta.get('plan_digest', '')}" if meta.get("plan_digest") else "",
        f"commit {str(machine.get('git_commit', ''))[:12]}" if machine.get("git_commit") else "",
        f"report generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC") if x)
    body = [f"<h1>Go goroutines vs Rust tokio tasks: {html.escape(run_id)}</h1>",
            f"<p class='meta'>{html.escape(sub)}</p>", _facts(rep)]
    used_tables, used_figures = set(), set()
    findings_html = "" if rep.empty else _findings(rep, used_figures)
    sections = []
    for sid, heading, table_prefixes, figure_prefixes, note in SECTIONS:
        parts = []
        for prefix in figure_prefixes:
            for name, paths in rep.figures.items():
                if name not in used_figures and _matches(name, (prefix,)):
                    parts.append(_figure(name, paths, rep.figure_titles.get(name, "")))
                    used_figures.add(name)
        for prefix in table_prefixes:
            for name, table in rep.tables.items():
                if name not in used_tables and _matches(name, (prefix,)):
                    parts.append(_table(name, table))
                    used_tables.add(name)
        if parts and sid == "hosts":  # hosts of one machine: what a verdict across them can say
            machines = getattr(rep, "host_machines", None) or {}
            caveat = tables.hosts.machines_caveat(len(machines), len(set(machines.values()))) if machines else ""
            note = f"{note} {caveat}" if caveat else note
        if parts:
            sections.append((sid, heading, note, parts))
    other_tables = [n for n in rep.tables if n not in used_tables]
    other_figures = [n for n in rep.figures if n not in used_figures]
    if other_tables or other_figures:
        sections.append(("other", "Other tables and figures", "",
                         [_figure(n, rep.figures[n], rep.figure_titles.get(n, "")) for n in other_figures]
                         + [_table(n, rep.tables[n]) for n in other_tables]))
    toc = ((["<li><a href='#findings'>Findings</a></li>"] if findings_html else [])
           + ["<li><a href='#method'>Method</a></li>"]
           + [f"<li><a href='#{sid}'>{html.escape(h)}</a></li>" for sid, h, _, _ in sections])
    body.append("<nav><b>Contents</b><ul>" + "".join(toc) + "</ul></nav>")
    body.append(findings_html)
    body.append(_method(rep.method or ""))
    if rep.empty:
        body.append("<p class='note'>No sample entered the analysis, so there are no statistics and no figures; "
                    "the tables below say what happened to every sample.</p>")
    for sid, heading, note, parts in sections:
        body.append(f"<section id='{sid}'><h2>{html.escape(heading)}</h2>"
                    + (f"<p class='note'>{html.escape(note)}</p>" if note else "") + "".join(parts) + "</section>")
    title = f"Go vs Rust: {run_id}"
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
            f"<body><main>{''.join(body)}</main></body></html>\n")


def save(rep, path: str | Path) -> Path:
    page = render(rep)
    with written(path) as path:
        path.write_text(page, encoding="utf-8")
    return path


class HtmlExporter:
    """The self-contained `report.html`."""

    name = "html"

    def save(self, report, directory: Path) -> list[Path]:
        return [save(report, directory / PAGE)]


# --- checks --------------------------------------------------------------------------------------------

_URL_ATTR = re.compile(r"""\b(?:src|href|srcset|action|poster|data)\s*=\s*["']?([^"'\s>]+)""", re.I)


def external_references(text: str) -> list[str]:
    """Every reference of the page (or of an SVG embedded in it) to something outside itself: a
    src/href that is not a data: URI or an in-page anchor, a stylesheet link, a script with a
    source, a CSS @import or url() that is not data: or in-page.  Empty for a self-contained page."""
    found = []
    for m in _URL_ATTR.finditer(text):
        value = m.group(1)
        if not (value.startswith("data:") or value.startswith("#")):
            found.append(m.group(0))
    for pattern in (r"<link\b[^>]*>", r"<script\b[^>]*\bsrc\b[^>]*>", r"@import\b[^;]*",
                    r"url\(\s*['\"]?(?!data:|#)[^)]*\)"):
        found += re.findall(pattern, text, flags=re.I)
    for uri in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", text):
        svg = base64.b64decode(uri).decode("utf-8", "replace")
        svg = re.sub(r"\sxmlns(:\w+)?=\"[^\"]*\"", "", svg)  # namespace names are identifiers, not fetched
        found += [f"(in an SVG) {r}" for r in external_references(svg)]
    return found


# --- command line: build if needed, and take a screenshot in headless Chromium --------------------------

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(RuntimeError):
    """No Chromium to take a screenshot with, or Chromium failed: the page is written, its picture not."""


def find_browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise BrowserError(f"no Chromium found (looked for {', '.join(BROWSERS)}); on Debian/Ubuntu: "
                            "apt-get install -y chromium")


SCREEN_PIXELS = (100, 20_000)  # the window sizes a screenshot may take (Chromium draws nothing at 0)


def screenshot_problem(png: str | Path, width: Any, height: Any) -> str | None:
    """What makes a screenshot's arguments unusable, naming the value and what is allowed, before
    Chromium starts: a size outside SCREEN_PIXELS, a path that is a directory or whose directory
    does not exist (it is not created)."""
    low, high = SCREEN_PIXELS
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
            return f"--{name} {v!r}: the window's {name} in pixels, from {low} to {high}"
    png = Path(png)
    if png.is_dir():
        return f"--screenshot {str(png)!r} is a directory; give the path of a PNG file to write"
    if not png.resolve().parent.is_dir():
        return f"--screenshot {str(png)!r}: its directory {str(png.resolve().parent)!r} does not exist; create it first"
    return None


def screenshot(page: Path, png: Path, width: int = 1400, height: int = 3000, timeout_s: float = 120) -> Path:
    """A PNG of the page as headless Chromium renders it (no network, a throw-away profile)."""
    problem = screenshot_problem(png, width, height)
    if problem:
        raise ValueError(problem)
    browser = find_browser()
    png = Path(png).resolve()
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               "--hide-scrollbars", f"--screenshot={png}", f"--window-size={width},{height}",
               Path(page).resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              env={**os.environ, "HOME": profile})
    if proc.returncode != 0 or not png.exists():
        raise BrowserError(f"{browser} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return png
