"""The memory notebook's sections on a synthetic run with RSS timelines: each computes its table,
exports it with its figure, and returns what the cell shows."""
import json

import numpy as np
import pandas as pd
import pytest

import report_data
from bench_src.report import memory_view

IDLE = [  # (lang, variant, n, bytes per task)
    ("go", "goroutine", 1000, 2600), ("go", "goroutine", 10000, 2600),
    ("rust", "spawn", 1000, 400), ("rust", "spawn", 10000, 400),
]


def _idle_cells():
    base = {"go": 9.5, "rust": 5.5}
    return [("idle_tasks", lang, variant, n, {"duration_ms": "300", "linger_ms": "300", "wait": "sleep"}, 2,
             0.31, base[lang] + n * per / 2**20) for lang, variant, n, per in IDLE]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    cells = _idle_cells() + [c for c in report_data.CELLS if c[0] == "threads_vs_tasks"]
    recs = report_data.records(samples=6, warmup=0, cells=cells)
    d = tmp_path_factory.mktemp("memory") / "run"
    (d / "timelines").mkdir(parents=True)
    for i, r in enumerate(recs):
        if r["workload"] != "idle_tasks":
            continue
        peak = r["peak_rss_bytes"]
        t = np.arange(0, 700) * 1_000_000  # every ms for 0.7 s; tasks end at 0.31 s, memory given back after
        rss = np.where(t < 310_000_000, peak, peak * 0.6).astype(int)
        name = f"timelines/s{i}.csv"
        pd.DataFrame({"t_mono_ns": t, "rss_bytes": rss}).to_csv(d / name, index=False)
        # every task alive at the last spawn, except in one sample of Go at N = 10,000 (its peak is
        # then made far too low: counting it would bend the slope)
        late = r["lang"] == "go" and r["n"] == 10000 and r["block"] == 0
        if late:
            r["peak_rss_bytes"] //= 4
        r.update(timeline_file=name, t0_mono_ns=0, spawned_ns=5_000_000,
                 extra=json.dumps({"finished_ns": 310_000_000, "linger_end_ns": 610_000_000,
                                   "alive_at_spawn": r["n"] - 4000 if late else r["n"]}))
    report_data.write_results_dir(d, recs, report_data.meta(samples=6, warmup=0, cells=cells))
    return memory_view.MemoryView(d)


def test_idle_peak_and_bytes_per_task(run):
    peak = run.idle_peak()
    assert [p.name for p in peak.files()] == ["idle_tasks_peak_rss_vs_n.png"]
    assert (run.results_dir / "export" / "figures" / "idle_tasks_peak_rss_vs_n.svg").exists()
    costs = run.bytes_per_task()
    table = costs.readables()[0].frame
    per = dict(zip(table["lang"], table["per N [95% CI]"]))
    assert per["go"].endswith(" per task") and ("KiB" in per["go"] or " B " in per["go"])
    raw = pd.read_csv(run.results_dir / "export" / "tables" / "idle_tasks_bytes_per_task.csv")
    go = raw.loc[raw["lang"] == "go", "per_task"].iloc[0]
    assert go == pytest.approx(2600, rel=0.2)  # the slope recovers the bytes per task put in
    assert any("1 valid samples were left out" in str(item) and "alive_at_spawn < N" in str(item)
               for item in costs.items)


def test_timeline_and_memory_given_back(run):
    section = run.timeline()
    assert [p.name for p in section.files()] == ["idle_tasks_rss_timeline.png"]
    back = section.readables()[0].frame
    assert set(back["given back"]) == {"40%"}
    html = section._repr_html_()
    assert html.count("<img") == 1 and "data:image/png;base64," in html


def test_threads_vs_tasks_side_by_side(run):
    section = run.threads_vs_tasks()
    table = section.readables()[0]
    assert set(table.frame["variant"]) == {"goroutine", "tokio", "thread"}
    assert "N: 1,000" in table.caption and table.frame["peak RSS"].str.contains("MiB").all()
    assert table.caption.startswith("median [CI, coverage ") and "95% CI" not in table.caption
    assert (run.results_dir / "export" / "tables" / "threads_vs_tasks.csv").exists()
    md = (run.results_dir / "export" / "tables" / "threads_vs_tasks.md").read_text()
    assert md == table.to_markdown(), "the Markdown export is the table as the notebook shows it"
    given_back = run.timeline().readables()[0]
    assert (run.results_dir / "export" / "tables" / "idle_tasks_returned_memory.md").read_text() == \
        given_back.to_markdown()


def test_absent_workloads_are_said_not_to_be_there(run):
    assert run.ping_pong().items == ["no valid ping_pong samples in this run"]
    assert run.ping_pong().readables() == [] and run.ping_pong().files() == []


def test_the_notebook_headings_claim_no_coverage_the_intervals_do_not_have():
    """The median intervals' coverage depends on the number of samples (96.9% for 6, 95.0% for 395):
    the figure titles and table captions state it per run; a heading cannot, so it names none."""
    from pathlib import Path
    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "memory.ipynb").read_text())
    headings = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert any(h.startswith("## Idle tasks: peak memory vs N") for h in headings)
    assert not [h for h in headings if "95%" in h or "95 %" in h]


def test_memory_above_each_programs_baseline(tmp_path):
    # a run with each language's baseline (idle_tasks at N = 1, released) and 10,000 released tasks:
    # the section gives the amounts above the baselines and their ratio with intervals, as the full
    # report does; the fixture's run above has no baseline, and the section says what it needs
    released = {"duration_ms": "0", "linger_ms": "0", "wait": "release"}
    cells = [("idle_tasks", "go", "goroutine", 1, released, 2, 0.001, 9.5),
             ("idle_tasks", "rust", "spawn", 1, released, 2, 0.001, 5.5),
             ("idle_tasks", "go", "goroutine", 10000, released, 2, 0.02, 9.5 + 25.0),
             ("idle_tasks", "rust", "spawn", 10000, released, 2, 0.01, 5.5 + 5.0)]
    recs = report_data.records(samples=8, warmup=0, cells=cells)
    d = report_data.write_results_dir(tmp_path / "run", recs, report_data.meta(samples=8, warmup=0, cells=cells))
    section = memory_view.MemoryView(d).above_baseline()
    table = section.readables()[0]
    row = table.frame[table.frame["N"] == "10,000"].iloc[0]
    ratio = row["Go/Rust above baseline [95% CI]"]
    assert float(ratio.split(" ")[0]) == pytest.approx(5.0, rel=0.15) and "not resolved" not in ratio
    assert "Fieller" in table.caption
    assert (d / "export" / "tables" / "memory_above_baseline.csv").exists()


def test_memory_above_baseline_says_what_a_run_without_a_baseline_lacks(run):
    assert "no baseline in this run: it needs idle_tasks at N = 1 with wait=release" in str(run.above_baseline().items[0])


def test_cells_differing_in_a_parameter_are_not_pooled_and_a_linger_without_a_point_has_no_end(tmp_path):
    # one language, variant and N lingering 300 ms and 0 ms: two cells, two rows, each with its own
    # peak (before, one row pooled them); the cell that lingers 0 ms has its timeline's one point
    # past the linger's end: it has no RSS at the end (before, the section raised IndexError)
    lingers = {"duration_ms": "0", "linger_ms": "300", "wait": "release"}
    at_once = {**lingers, "linger_ms": "0"}
    cells = [("idle_tasks", "go", "goroutine", 1000, lingers, 2, 0.31, 12.0),
             ("idle_tasks", "go", "goroutine", 1000, at_once, 2, 0.01, 8.0),
             ("idle_tasks", "rust", "spawn", 1000, lingers, 2, 0.31, 6.0),
             ("idle_tasks", "rust", "spawn", 1000, at_once, 2, 0.01, 5.0)]
    recs = report_data.records(samples=4, warmup=0, cells=cells)
    d = tmp_path / "run"
    (d / "timelines").mkdir(parents=True)
    for i, r in enumerate(recs):
        released = r["params"]["linger_ms"] == "0"
        peak = r["peak_rss_bytes"]
        if released:  # finished at 0.5 ms, linger over at 0.8 ms, the one point read at 1.0 ms
            frame = pd.DataFrame({"t_mono_ns": [1_000_000], "rss_bytes": [peak]})
            extra = {"finished_ns": 500_000, "linger_end_ns": 800_000, "alive_at_spawn": r["n"]}
        else:
            t = np.arange(0, 700) * 1_000_000
            frame = pd.DataFrame({"t_mono_ns": t, "rss_bytes": np.where(t < 310_000_000, peak, peak // 2)})
            extra = {"finished_ns": 310_000_000, "linger_end_ns": 610_000_000, "alive_at_spawn": r["n"]}
        name = f"timelines/s{i}.csv"
        frame.to_csv(d / name, index=False)
        r.update(timeline_file=name, t0_mono_ns=0, spawned_ns=100_000, extra=json.dumps(extra))
    report_data.write_results_dir(d, recs, report_data.meta(samples=4, warmup=0, cells=cells))
    section = memory_view.MemoryView(d).timeline()
    table = section.readables()[0].frame
    assert len(table) == 4
    table = table[table["lang"] == "go"]
    assert len(table) == 2 and set(table["settings"].str.contains("linger_ms=0")) == {True, False}
    rows = {("at once" if "linger_ms=0" in s else "lingers"): row for s, row in zip(table["settings"],
                                                                                    table.to_dict("records"))}
    assert rows["lingers"]["given back"] == "50%"
    assert rows["at once"]["RSS at the end"] == "no point in the linger" and rows["at once"]["given back"] == ""
    raw = pd.read_csv(d / "export" / "tables" / "idle_tasks_returned_memory.csv")
    peaks = raw[raw["lang"] == "go"].groupby("params")["peak_rss_mib"].median()
    assert sorted(peaks.round(0)) == [8, 12] and raw["params"].nunique() == 2
