"""The benchstat export: golden files from a synthetic run, and the real benchstat (pinned as a Go
tool dependency of gobench: `go tool benchstat`) showing a "vs base" comparison for every pair."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import report_data
from bench_src import paths
from bench_src.analysis import compare
from bench_src.report.export import benchstat

GOLDEN = Path(__file__).parent / "golden" / "benchstat"


@pytest.fixture(scope="module")
def frame():
    return report_data.frame()


@pytest.fixture(scope="module")
def pairs(frame):
    return compare.compare(frame, "elapsed_s")


@pytest.fixture(scope="module")
def written(frame, pairs, tmp_path_factory):
    d = tmp_path_factory.mktemp("benchstat")
    benchstat.save(frame, pairs, d, report_data.meta())
    return d


def test_golden_files(written):
    for name in ("go.txt", "rust.txt", "all.txt"):
        text = (written / name).read_text()
        if os.environ.get("UPDATE_GOLDEN"):
            GOLDEN.mkdir(parents=True, exist_ok=True)
            (GOLDEN / name).write_text(text)
        assert text == (GOLDEN / name).read_text(), f"{name} changed: review, then UPDATE_GOLDEN=1 to accept it"


def test_names_carry_only_what_makes_the_work_the_same(written):
    lines = [ln for ln in (written / "all.txt").read_text().splitlines() if ln.startswith("Benchmark")]
    names = {ln.split()[0] for ln in lines}
    assert "BenchmarkSqlite/n=100/journal=wal/pool=8/lang=go" in names  # no driver in the name
    assert "BenchmarkCpuLoops/n=1000/inner=100000/u=10/lang=rust" in names  # no -N threads suffix
    assert not any(re.search(r"-\d+$", n) or "variant=" in n or "driver=" in n for n in names)
    text = (written / "all.txt").read_text()
    assert "pair: go pool (driver=mattn) vs rust pool (driver=sqlx)\n" in text
    assert "pair: go goroutine vs rust tokio\nthreads: go 2, rust 2\n" in text
    assert "rust thread" not in text, "goroutines meet tokio tasks only (like for like)"
    assert "pair: go plain vs rust plain\nthreads: go 2, rust 1\n" in text
    # go.txt and rust.txt hold the default variants only, under identical configuration lines
    go, rust = (written / "go.txt").read_text(), (written / "rust.txt").read_text()
    def config(text):
        return [ln for ln in text.splitlines() if ln.startswith(("pair:", "threads:"))]

    assert config(go) == config(rust) and "pair: go readfile vs rust tokio-fs" not in go
    assert "pair: go readfile vs rust tokio-fs" in text


def _rows_with_comparison(output: str) -> dict[str, list[str]]:
    """benchstat's output split at each `pair:` line: the rows (first column) whose line holds a
    comparison, a +x% / -x% delta or '~', with its p-value."""
    found: dict[str, list[str]] = {}
    pair = None
    for line in output.splitlines():
        if line.startswith("pair: "):
            pair = line[len("pair: "):]
            found.setdefault(pair, [])
        elif pair and re.search(r"(?:[+-]\d+\.\d+%|~) \(p=\d\.\d+ n=\d+\)", line):
            found[pair].append(line.split()[0])
    return found


def _expected(pairs, defaults_only: bool) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for b in benchstat.blocks(report_data.frame(), pairs):
        if defaults_only and not benchstat._is_default(b):
            continue
        names = {benchstat.bench_name(b["workload"], r["n"], r["shared"])[len("Benchmark"):] for r in b["rows"]}
        out.setdefault(b["pair"], set()).update(names)
    return out


def _benchstat(*args) -> str:
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH (needed for go tool benchstat)")
    proc = subprocess.run(["go", "tool", "benchstat", *args], cwd=paths.ROOT / "gobench", capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_benchstat_compares_go_with_rust_for_every_default_pair(written, pairs):
    out = _benchstat(str(written / "go.txt"), str(written / "rust.txt"))
    assert "vs base" in out
    found = _rows_with_comparison(out)
    expected = _expected(pairs, defaults_only=True)
    assert set(expected) == set(found) and len(expected) == 5
    for pair, names in expected.items():
        # each row once per unit: workload time, wall time, CPU time, peak RSS
        assert all(found[pair].count(n) == 4 for n in names), (pair, names, found[pair])


@pytest.mark.slow
def test_benchstat_col_lang_compares_every_pair(written, pairs):
    out = _benchstat("-col", "/lang", str(written / "all.txt"))
    found = _rows_with_comparison(out)
    expected = _expected(pairs, defaults_only=False)
    assert set(expected) == set(found) and len(expected) == 6
    assert sum(len(names) for names in expected.values()) == len(pairs)  # one row per comparison
    for pair, names in expected.items():
        assert all(found[pair].count(n) == 4 for n in names), (pair, names, found[pair])
    assert re.search(r"│\s+go\s+│\s+rust\s+│", out)  # Go is the base column


def _idle_run(short_alive: int = 9990):
    """idle_tasks at N = 1,000 and 10,000 in both languages, every Go sample at N = 10,000 with
    `short_alive` of its tasks alive at the last spawn (the rest alive at once)."""
    import json

    cells = [("idle_tasks", lang, variant, n, {"wait": "sleep"}, 2, 1e-3 + 1e-6 * n, 2 + n / 512)
             for lang, variant in (("go", "goroutine"), ("rust", "spawn")) for n in (1000, 10000)]
    recs = report_data.records(samples=6, warmup=0, cells=cells)
    for r in recs:
        if r["lang"] == "go" and r["n"] == 10000:
            r["extra"] = json.dumps({"alive_at_spawn": short_alive})
    from bench_src.store import mark_valid, samples_frame
    return mark_valid(samples_frame(recs))


def test_a_sample_whose_peak_does_not_count_for_memory_has_no_peak_rss_in_benchstat():
    """The memory tables leave out the peak of a sample whose tasks were not all alive at once
    (analysis/validity.py); benchstat's files gave it as if valid, so benchstat compared memory the
    report had ruled out.  Such a line keeps its times and drops its peak-RSS unit."""
    frame = _idle_run()
    files = benchstat.render(frame, compare.compare(frame, "elapsed_s"))
    lines = [ln for ln in files["all.txt"].splitlines() if ln.startswith("BenchmarkIdleTasks")]
    short = [ln for ln in lines if ln.startswith("BenchmarkIdleTasks/n=10000/") and "/lang=go " in ln]
    assert len(short) == 6 and len(lines) == 24
    assert all("ns/op" in ln and "cpu-ns/op" in ln and "peak-RSS-B/op" not in ln for ln in short)
    assert all("peak-RSS-B/op" in ln for ln in lines if ln not in short)
    assert files["go.txt"].count("peak-RSS-B/op") == 6 + 1  # the Go samples at N = 1,000, and the Unit line


def test_threads_line_reads_the_comparison_tables_threads():
    """The threads a block's programs used are the comparison table's (`go_threads`, `rust_threads`:
    stats.threads_used), never a reading of their own: where a cell's samples disagree on their
    threads the table knows no one number, and neither does the threads line."""
    import numpy as np
    from bench_src.store import mark_valid, samples_frame

    recs = report_data.records()
    for r in recs:
        if (r["workload"], r["lang"], r["n"]) == ("cpu_loops", "rust", 1000) and r["block"] % 2:
            r["threads"] = 2  # half the cell's samples report 2 threads, the others 1
    df = mark_valid(samples_frame(recs))
    pairs = compare.compare(df, "elapsed_s")
    loops = pairs[pairs["workload"] == "cpu_loops"].set_index("n")
    assert np.isnan(loops.loc[1000, "rust_threads"]) and loops.loc[3000, "rust_threads"] == 1
    text = benchstat.render(df, pairs)["all.txt"]
    assert "pair: go plain vs rust plain\nthreads: go 2, rust N=1000: unknown, N=3000: 1\n" in text
