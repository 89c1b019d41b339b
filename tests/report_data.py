"""A small synthetic run for the report's tests: deterministic samples of a few cells chosen to
exercise what the exports and figures must handle (several N and a single N, per-language knobs
such as a driver, a non-default variant, Go on 2 threads where Rust runs on 1 or on one thread per
task, clear wins and a tie), written as a results directory like the runner writes it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bench_src.plan import Cell, Plan
from bench_src.store import equivalence, mark_valid, samples_frame

# (workload, lang, variant, n, params, threads used, median workload seconds, peak RSS MiB)
CELLS = [
    ("sleep", "go", "waitgroup", 10, {"kernel": "xorshift", "work": "0"}, 2, 0.300, 9.5),
    ("sleep", "rust", "join-handles", 10, {"kernel": "xorshift", "work": "0"}, 2, 0.300, 5.5),
    ("sleep", "go", "waitgroup", 1000, {"kernel": "xorshift", "work": "0"}, 2, 0.310, 12.0),
    ("sleep", "rust", "join-handles", 1000, {"kernel": "xorshift", "work": "0"}, 2, 0.305, 6.0),
    ("sleep", "go", "waitgroup", 100000, {"kernel": "xorshift", "work": "0"}, 2, 0.600, 250.0),
    ("sleep", "rust", "join-handles", 100000, {"kernel": "xorshift", "work": "0"}, 2, 0.400, 60.0),
    ("cpu_loops", "go", "plain", 1000, {"inner": "100000", "u": "10"}, 2, 0.190, 9.6),
    ("cpu_loops", "rust", "plain", 1000, {"inner": "100000", "u": "10"}, 1, 0.200, 4.6),
    ("cpu_loops", "go", "plain", 3000, {"inner": "100000", "u": "10"}, 2, 0.570, 9.7),
    ("cpu_loops", "rust", "plain", 3000, {"inner": "100000", "u": "10"}, 1, 0.600, 4.6),
    ("sqlite", "go", "pool", 100, {"driver": "mattn", "journal": "wal", "pool": "8"}, 2, 0.050, 15.0),
    ("sqlite", "rust", "pool", 100, {"driver": "sqlx", "journal": "wal", "pool": "8"}, 2, 0.055, 12.0),
    ("files_read", "go", "readfile", 1000, {"retain": "digest"}, 2, 0.040, 14.5),
    ("files_read", "rust", "spawn-blocking", 1000, {"retain": "digest"}, 2, 0.075, 13.0),
    ("files_read", "rust", "tokio-fs", 1000, {"retain": "digest"}, 2, 0.090, 13.5),
    ("threads_vs_tasks", "go", "goroutine", 1000, {"iterations": "10"}, 2, 0.316, 12.2),
    ("threads_vs_tasks", "rust", "tokio", 1000, {"iterations": "10"}, 2, 0.322, 5.9),
    ("threads_vs_tasks", "rust", "thread", 1000, {"iterations": "10"}, 1000, 0.414, 14.0),
]


# relative noise (log-normal sigma) per workload; sqlite's is wide enough to leave it inconclusive
NOISE = {"sqlite": 0.4}


def cell_of(workload, lang, variant, n, params) -> Cell:
    return Cell(workload, lang, variant, n, None, tuple(sorted(params.items())))


def records(samples: int = 10, warmup: int = 1, seed: int = 7, cells=CELLS, failing: tuple = ()) -> list[dict]:
    """Samples of every cell, one measured block after the warm-ups, each block in a shuffled order.
    A cell listed in `failing` (as (workload, lang, variant, n)) exits with an error every time."""
    rng = np.random.default_rng(seed)
    out, seq = [], 0
    phases = [("warmup", b) for b in range(warmup)] + [("measured", b) for b in range(samples)]
    for phase, block in phases:
        order = rng.permutation(len(cells))
        for pos, i in enumerate(order):
            w, lang, variant, n, params, threads, median, rss = cells[i]
            cell = cell_of(w, lang, variant, n, params)
            elapsed = median * float(np.exp(rng.normal(0, NOISE.get(w, 0.01))))
            bad = (w, lang, variant, n) in failing
            rec = {
                "run_id": "synthetic", "sample_id": f"{phase}:{block}:{cell.id}", "seq": seq, "phase": phase,
                "block": block, "pos": pos, "cell_id": cell.id, "workload": w, "lang": lang, "variant": variant,
                "n": n, "threads_requested": None, "threads": threads, "arm": "", "params": dict(params),
                "started_at": "2026-01-01T00:00:00.000+00:00",
                "status": "failed" if bad else "ok",
                "reason": "exit 2: unknown param | see usage" if bad else "",
                "checksum": None if bad else f"sum-{w}-{n}", "expected_checksum": None,
                "tasks_ok": 0 if bad else n,
                "elapsed_ns": None if bad else int(elapsed * 1e9),
                "setup_ns": 1_000_000, "wall_ns": None if bad else int((elapsed + 0.01) * 1e9),
                "user_ns": None if bad else int(elapsed * 0.2e9), "sys_ns": None if bad else int(elapsed * 0.05e9),
                "maxrss_kb": int(rss * 1024 * float(np.exp(rng.normal(0, 0.01)))),
                "nvcsw": 100, "nivcsw": 10, "minflt": 1000, "majflt": 0, "exit_code": 2 if bad else 0,
                "signal": None, "t0_mono_ns": 0, "spawned_ns": 1000, "start_mono_ns": 0,
                "runtime": "{}", "command": f"{lang}bench {w} --n {n}",
                # idle_tasks and sleep count their tasks alive when the last was spawned, as both
                # programs do (all of them here)
                "extra": json.dumps({"alive_at_spawn": n}) if w in ("idle_tasks", "sleep") else "{}",
                "equiv_key": equivalence.key_string(cell), "timeline_file": None,
            }
            rec["peak_rss_bytes"] = rec["maxrss_kb"] * 1024
            out.append(rec)
            seq += 1
    return out


def alive_extra(cell) -> str:
    """The `extra` of a fake sample of `cell` as both programs print it for sleep and idle_tasks:
    every task alive at the last spawn (bench_src/analysis/validity.py reads it for memory)."""
    return json.dumps({"alive_at_spawn": cell.n}) if cell.workload in ("sleep", "idle_tasks") else None


def frame(**kwargs):
    """The samples frame of `records(**kwargs)`, with `valid`."""
    return mark_valid(samples_frame(records(**kwargs)))


def plan(samples: int = 10, warmup: int = 1, cells=CELLS) -> Plan:
    """The plan whose grid holds exactly `cells` (threads None: the cells' ids say t=cpus)."""
    workloads = list(dict.fromkeys(c[0] for c in cells))
    langs = ("go", "rust")

    def mine(w, lang):
        return [c for c in cells if c[0] == w and c[1] == lang]

    return Plan(
        profile="quick", workloads=tuple(workloads), languages=langs,
        ns={w: tuple(sorted({c[3] for c in cells if c[0] == w})) for w in workloads},
        variants={w: {lang: tuple(sorted({c[2] for c in mine(w, lang)})) for lang in langs} for w in workloads},
        params={w: {lang: {k: tuple(sorted({c[4][k] for c in mine(w, lang)})) for c0 in mine(w, lang)[:1]
                           for k in c0[4]} for lang in langs} for w in workloads},
        samples=samples, warmup=warmup, seed=1, threads=None, timeout_s=60.0, mem_limit_mb=1024, cooldown_s=0.0)


def meta(samples: int = 10, warmup: int = 1, cells=CELLS) -> dict:
    the_plan = plan(samples, warmup, cells)
    assert {c.id for c in the_plan.cells()} == {cell_of(*c[:5]).id for c in cells}, "a grid of exactly these cells"
    return {
        "run_id": "synthetic", "plan_digest": the_plan.digest, "created_at": "2026-01-01T00:00:00+00:00",
        "plan": the_plan.to_dict(),
        "sessions": [{"started_at": "2026-01-01T00:00:00+00:00", "taken": 0,
                      "machine": {"cpu_model": "Test CPU", "logical_cpus": 2, "ram_bytes": 8 * 2**30,
                                  "kernel": "6.1", "git_commit": "abcdef1234567890"},
                      "toolchains": {"go": "go version go1.26.0 linux/amd64", "rustc": "rustc 1.95.0"},
                      "context": {}}],
    }


def write_results_dir(directory: Path, recs: list[dict] | None = None, meta_doc: dict | None = None) -> Path:
    """A results directory as the runner leaves it: meta.json and samples.jsonl."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "meta.json").write_text(json.dumps(meta_doc or meta(), indent=2))
    if recs is not None:
        (directory / "samples.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
    return directory


def idle_tasks_run(directory: Path, ns, warmup: int = 0, samples: int = 6, short_n: int = 10000,
                   alive: int = 9990) -> Path:
    """A results directory of sleeping idle tasks, Go (goroutine) and Rust (spawn) at each N of
    `ns`, in which every Go sample at `short_n` had only `alive` tasks alive when the last was
    spawned: its time counts, its memory does not (validity.counted)."""
    cells = [("idle_tasks", lang, variant, n, {"wait": "sleep"}, 2, 1e-3 + 1e-6 * n, 2 + n / 512)
             for lang, variant in (("go", "goroutine"), ("rust", "spawn")) for n in ns]
    recs = records(samples=samples, warmup=warmup, cells=cells)
    for r in recs:
        if r["lang"] == "go" and r["n"] == short_n:
            r["extra"] = json.dumps({"alive_at_spawn": alive})
    return write_results_dir(directory, recs, meta(samples=samples, warmup=warmup, cells=cells))
