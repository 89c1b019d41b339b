"""Several results directories of one plan in one analysis: hosts are fingerprints, pairs stay
within a host, the combined ratio and "holds on k of m", refusals of what cannot be combined."""
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from bench_src.analysis import hosts
from bench_src.plan import make_plan
from bench_src.run import runner
from bench_src.store import hosts as store_hosts
from report_data import alive_extra


def plan():
    return make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=6, warmup=0, params={"sleep": {"work": 10}})


def measure_with(go: float, rust: float, seed: int, spread: float = 0.02):
    """Fake samples: Go and Rust times around the given centres (seconds), 8 MiB peak RSS."""
    rng = np.random.default_rng(seed)

    def measure(cell, *args, **kwargs):
        centre = go if cell.lang == "go" else rust
        return {"status": "ok", "reason": "", "checksum": "00000000000000aa",
                "elapsed_ns": int(1e9 * centre * (1 + spread * rng.standard_normal())), "wall_ns": 2000,
                "user_ns": 1, "sys_ns": 1, "maxrss_kb": 8192, "peak_rss_bytes": 8 << 20, "tasks_ok": cell.n,
                "extra": alive_extra(cell)}

    return measure


def take(directory, go, rust, seed, cpu_model=None, commit=None, the_plan=None, sources=None):
    runner.run(the_plan or plan(), directory, progress=False, measure_fn=measure_with(go, rust, seed),
               log=lambda *_: None)
    if cpu_model or commit or sources is not None:
        meta_path = directory / "meta.json"
        meta = json.loads(meta_path.read_text())
        for s in meta["sessions"]:
            if cpu_model:
                s["machine"]["cpu_model"] = cpu_model
            if commit:
                s["machine"]["git_commit"] = commit
            if sources is not None:  # {} : a session of before the sources were recorded
                s["sources"] = {**s["sources"], **sources} if sources else {}
        meta_path.write_text(json.dumps(meta))
    return directory


def test_two_machines_combine_and_a_verdict_that_holds_on_both(tmp_path):
    a = take(tmp_path / "a", 1.0, 2.0, seed=1)
    # close ratios (0.5 and 0.51): with two hosts the interval is Student's t on one degree of freedom,
    # so only hosts that agree closely give a combined verdict
    b = take(tmp_path / "b", 1.0, 1.96, seed=2, cpu_model="Other CPU")
    df = store_hosts.load_hosts([a, b])
    assert df["host"].nunique() == 2 and len(df.attrs["hosts"]) == 2
    assert set(df["run_id"]) == {str(a), str(b)}, "each sample's run is its directory"
    logs = hosts.host_log_ratios(df)
    assert set(logs["pairs"]) == {6}, "pairs form within a host and a block, never across"
    table = hosts.across_hosts(df)
    assert len(table) == 2 and (table["hosts"] == 2).all()
    for _, row in table.iterrows():
        assert row["verdict_kind"] == "a" and row["holds_on_text"] == "2 of 2", row.to_dict()
        # the combined ratio is the geometric mean of the hosts' ratios (0.5 and 0.51), within noise
        assert 0.49 < row["ratio"] < 0.52 and row["ratio_ci_low"] < row["ratio"] < row["ratio_ci_high"] < 1
        assert row["tau"] >= 0 and 0 <= row["i2"] <= 1
    per = hosts.per_host(df)
    assert set(per["host"]) == set(df["host"]) and (per["verdict_kind"] == "a").all()


def test_the_interval_shown_decides_the_verdict(tmp_path):
    # hosts that disagree (Go faster on one, slower on the other): the combined interval spans 1
    a = take(tmp_path / "a", 1.0, 2.0, seed=3)
    b = take(tmp_path / "b", 2.0, 1.0, seed=4, cpu_model="Other CPU")
    table = hosts.across_hosts(store_hosts.load_hosts([a, b]))
    for _, row in table.iterrows():
        assert row["ratio_ci_low"] < 1 < row["ratio_ci_high"] and row["verdict_kind"] == "inconclusive"
        assert sorted(row["host_verdicts"].split(",")) == ["a", "b"]
        # an inconclusive row claims nothing that could hold: no count, the hosts' own verdicts counted
        assert np.isnan(row["holds_on"]) and row["holds_on_text"] == ""
        assert row["host_verdict_counts"] == "1 Go faster; 1 Rust faster"
        assert row["i2"] > 0.9, "the hosts' spread is not sampling noise"


def test_a_host_whose_log_ratios_never_vary_leaves_tau_and_i2_unestimated(tmp_path):
    """A host's own variance of 0 (its per-block log ratios all equal) says nothing about how much
    of the hosts' spread is noise: tau² and I² are NaN with a note, not tau² = 0 beside I² = 100%
    (as before, from the variance clipped to 1e-300), which contradict each other."""
    c = hosts.combine([0.01, 0.05, 0.10], [0.0, 0.0, 0.0])
    assert c.hosts == 3 and c.estimate == pytest.approx(0.05333333) and c.low < c.estimate < c.high
    assert np.isnan(c.tau2) and np.isnan(c.i2) and np.isnan(c.tau) and "not estimable" in c.note
    for variances in ([0.0, 1e-4, 1e-4], [1e-4, np.nan, 1e-4], [1e-4, np.inf, 1e-4]):
        c = hosts.combine([0.01, 0.05, 0.10], variances)
        assert c.hosts == 3 and np.isnan(c.tau2) and np.isnan(c.i2) and c.note == hosts.NOT_ESTIMABLE, variances
    # through the table: one host's samples never vary (so neither do its log ratios), the other's do
    a = take(tmp_path / "a", 1.0, 2.0, seed=1, the_plan=None)
    b = tmp_path / "b"
    runner.run(plan(), b, progress=False, measure_fn=measure_with(1.0, 1.9, seed=2, spread=0.0), log=lambda *_: None)
    meta = json.loads((b / "meta.json").read_text())
    for session in meta["sessions"]:
        session["machine"]["cpu_model"] = "Other CPU"
    (b / "meta.json").write_text(json.dumps(meta))
    df = store_hosts.load_hosts([a, b])
    assert (hosts.host_log_ratios(df).groupby("host")["variance"].max() == 0).sum() == 1
    table = hosts.across_hosts(df)
    assert (table["hosts"] == 2).all() and table["tau"].isna().all() and table["i2"].isna().all()
    assert (table["note"] == hosts.NOT_ESTIMABLE).all()
    from bench_src.report import tables

    shown = tables.hosts.combined(table).frame
    assert (shown["tau²"] == "").all() and (shown["I²"] == "").all() and (shown["note"] == hosts.NOT_ESTIMABLE).all()
    from bench_src.report import hosts_report

    lines = [line for line in hosts_report.summary_lines(hosts_report.analyse(df)) if line.startswith("- ")]
    assert lines and all("tau and I² not estimable" in line and "nan" not in line for line in lines), lines


def test_tau2_and_i2_are_read_off_one_statistic():
    """I² > 0 exactly where tau² > 0; tau² is Paule and Mandel's (statsmodels' iteration gives the
    same where it converges), and where the hosts' own variances are tiny against their spread it is
    that spread (statsmodels' iteration stopped at 1e-15 there, beside an I² of 100%)."""
    from statsmodels.stats.meta_analysis import combine_effects

    rng = np.random.default_rng(1)
    for k in (2, 3, 5):
        for _ in range(200):
            eff = 0.05 + rng.normal(0, rng.choice([0.0, 0.005, 0.03]), k) + rng.normal(0, 0.01, k)
            var = rng.uniform(0.2, 3.0, k) * 1e-4
            c = hosts.combine(eff, var)
            assert (c.tau2 > 0) == (c.i2 > 0) and c.note == "", (eff, var)
            ref = combine_effects(eff, var, method_re="iterated")
            assert c.tau2 == pytest.approx(max(float(ref.tau2), 0.0), rel=1e-3, abs=1e-8)
            assert c.i2 == pytest.approx(min(1.0, max(0.0, float(ref.i2))), abs=1e-9)
    c = hosts.combine([0.01, 0.05], [1e-30, 1e-30])
    assert c.tau2 == pytest.approx(np.var([0.01, 0.05], ddof=1), rel=1e-9) and c.i2 == pytest.approx(1.0)
    c = hosts.combine([0.02, 0.02, 0.02], [1e-4, 2e-4, 1e-4])
    assert c.tau2 == 0 and c.i2 == 0 and c.note == ""


def test_same_fingerprint_is_one_host_with_the_blocks_of_both_runs(tmp_path):
    a = take(tmp_path / "a", 1.0, 2.0, seed=5)
    b = take(tmp_path / "b", 1.0, 2.0, seed=6)
    df = store_hosts.load_hosts([a, b])
    assert df["host"].nunique() == 1
    assert sorted(df.attrs["hosts"][df["host"].iloc[0]]["results_dirs"]) == sorted([str(a), str(b)])
    logs = hosts.host_log_ratios(df)
    assert set(logs["pairs"]) == {12}, "the two runs' blocks are blocks of one host"
    table = hosts.across_hosts(df)
    assert (table["hosts"] == 1).all() and table["ratio_ci_low"].isna().all(), "one host: no interval across hosts"
    assert (table["verdict_kind"] == "inconclusive").all()



def test_a_run_pinned_to_cpus_of_its_own_is_a_host_of_its_own_on_the_same_machine(tmp_path, monkeypatch):
    """Runs started under `taskset` on CPUs of their own are two hosts, as two pinned workers of a
    cluster are, and one machine with a run on the whole of it: the host is the share, recorded
    alike by a run in this process and by a cluster's host, the machine is not its usable CPUs."""
    from bench_src import cpus

    share = {"value": [0]}
    monkeypatch.setattr(cpus, "pinned_share", lambda: share["value"])
    on0 = take(tmp_path / "on0", 1.0, 2.0, seed=5)
    share["value"] = [1]
    on1 = take(tmp_path / "on1", 1.0, 2.0, seed=6)
    share["value"] = None
    whole = take(tmp_path / "whole", 1.0, 2.0, seed=7)
    sessions = [json.loads((d / "meta.json").read_text())["sessions"][0] for d in (on0, on1, whole)]
    assert [s.get("cpu_set") for s in sessions] == ["0", "1", None]
    df = store_hosts.load_hosts([on0, on1, whole])
    assert df["host"].nunique() == 3
    prints = [store_hosts.fingerprint(s) for s in sessions]
    prints[2]["machine"]["usable_cpus"] = 2  # the whole machine may use more CPUs than a share
    assert len({store_hosts.host_id(p) for p in prints}) == 3
    assert len({store_hosts.machine_id(p) for p in prints}) == 1

def set_identity(directory, **machine):
    """meta.json's sessions of a directory as if taken on another machine (its hostname, the digest
    of its machine ID; None: not recorded, as an older harness left it out)."""
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text())
    for s in meta["sessions"]:
        for key, value in machine.items():
            if value is None:
                s["machine"].pop(key, None)
            else:
                s["machine"][key] = value
    meta_path.write_text(json.dumps(meta))
    return directory


def test_two_machines_of_the_same_hardware_are_two_hosts(tmp_path):
    """Two identical nodes became one host (the fingerprint held nothing that tells machines apart),
    and the analysis saw one machine: the hostname and the machine ID's digest are part of it, so
    machines differing in either are hosts of their own, and one machine's runs stay one host."""
    from bench_src.run import machine

    described = machine.describe()
    assert "machine_id_digest" in described and described["hostname"]
    digest = described["machine_id_digest"]
    if digest is not None:  # a keyed digest, never the machine ID itself
        raw = next((Path(f).read_text().strip() for f in machine.MACHINE_ID_FILES if Path(f).exists()), "")
        assert len(digest) == 16 and raw and digest not in raw
    a = set_identity(take(tmp_path / "a", 1.0, 2.0, seed=41), hostname="nodeA", machine_id_digest="1" * 16)
    b = set_identity(take(tmp_path / "b", 1.0, 2.0, seed=42), hostname="nodeB", machine_id_digest="1" * 16)
    c = set_identity(take(tmp_path / "c", 1.0, 2.0, seed=43), hostname="nodeA", machine_id_digest="2" * 16)
    again = set_identity(take(tmp_path / "again", 1.0, 2.0, seed=44), hostname="nodeA", machine_id_digest="1" * 16)
    df = store_hosts.load_hosts([a, b, c, again])
    assert df["host"].nunique() == 3 and len(df.attrs["hosts"]) == 3
    assert len({e["machine"] for e in df.attrs["hosts"].values()}) == 3, "three machines"
    assert df.groupby("host")["results_dir"].nunique().sort_values().tolist() == [1, 1, 2], \
        "a's and again's runs, of one machine, are one host"


def test_a_host_recorded_without_its_machine_id_is_the_host_of_its_hardware_and_hostname(tmp_path):
    """Directories recorded before the machine ID's digest was (an older harness) combine with newer
    ones of the same machine as one host, by the hostname their sessions recorded; where the
    newer ones hold two machines of that hardware and hostname, which one it was cannot be told:
    refused, naming the directories."""
    old = set_identity(take(tmp_path / "old", 1.0, 2.0, seed=51), hostname="nodeA", machine_id_digest=None)
    new = set_identity(take(tmp_path / "new", 1.0, 2.0, seed=52), hostname="nodeA", machine_id_digest="1" * 16)
    other = set_identity(take(tmp_path / "other", 1.0, 2.0, seed=53), hostname="nodeB", machine_id_digest="3" * 16)
    df = store_hosts.load_hosts([old, new, other])
    assert df["host"].nunique() == 2
    pooled = df.attrs["hosts"][df.loc[df["results_dir"] == str(old), "host"].iloc[0]]
    assert sorted(pooled["results_dirs"]) == sorted([str(old), str(new)])
    assert pooled["fingerprint"]["machine"]["machine_id_digest"] == "1" * 16
    twin = set_identity(take(tmp_path / "twin", 1.0, 2.0, seed=54), hostname="nodeA", machine_id_digest="2" * 16)
    with pytest.raises(ValueError) as err:
        store_hosts.load_hosts([old, new, twin])
    assert str(err.value).startswith(f"{old} recorded a host without its machine's identity")
    assert "cannot be told" in str(err.value)
    assert str(new) in str(err.value) and str(twin) in str(err.value) and "\n" not in str(err.value)
    # a cluster session's fingerprint stored without the hostname (its samples carry that id): its
    # description's hostname places it
    def as_an_older_cluster_run(directory):
        meta = json.loads((directory / "meta.json").read_text())
        session = meta["sessions"][0]
        stored = store_hosts.fingerprint(session)
        stored["machine"].pop("hostname")
        stored_id = store_hosts.host_id(stored)
        session["hosts"] = {stored_id: {"fingerprint": stored, "machine": dict(session["machine"]), "label": "x"}}
        (directory / "meta.json").write_text(json.dumps(meta))
        lines = [json.loads(line) for line in (directory / "samples.jsonl").read_text().splitlines()]
        (directory / "samples.jsonl").write_text("".join(json.dumps({**r, "host": stored_id}) + "\n" for r in lines))
        return stored_id

    stored_id = as_an_older_cluster_run(old)
    df = store_hosts.load_hosts([old, new, other])
    assert df["host"].nunique() == 2 and set(df.loc[df["results_dir"] == str(old), "host"]) == \
        set(df.loc[df["results_dir"] == str(new), "host"])
    # alone, it keeps the id meta.json and samples.jsonl hold; two such runs of two machines that their
    # recorded hostnames tell apart (one id: the older harness left the hostname out) are two hosts
    assert set(store_hosts.load_hosts([old])["host"]) == {stored_id}
    twin_old = set_identity(take(tmp_path / "twin-old", 1.0, 2.0, seed=55), hostname="nodeC", machine_id_digest=None)
    assert as_an_older_cluster_run(twin_old) == stored_id
    df = store_hosts.load_hosts([old, twin_old])
    assert df["host"].nunique() == 2 and len({e["machine"] for e in df.attrs["hosts"].values()}) == 2


def test_different_plans_or_code_are_refused_naming_both(tmp_path):
    a = take(tmp_path / "a", 1.0, 2.0, seed=7)
    other = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, warmup=0, params={"sleep": {"work": 10}})
    b = take(tmp_path / "b", 1.0, 2.0, seed=8, the_plan=other)
    with pytest.raises(ValueError, match=r"holds another plan than .*a.*plan digest"):
        store_hosts.load_hosts([a, b])
    copy = tmp_path / "copy-of-a"
    shutil.copytree(a, copy)
    with pytest.raises(ValueError, match=r"copy-of-a holds the same run as .*/a \(created .* by process .*count twice"):
        store_hosts.load_hosts([a, copy])
    # two runs in directories of one name (make run's default, on two machines) are two runs
    same_name = [take(tmp_path / host / "quick-0123456-abcdef", 1.0, 2.0, seed=s, cpu_model=f"CPU {host}")
                 for s, host in ((5, "hostA"), (6, "hostB"))]
    assert store_hosts.load_hosts(same_name)["host"].nunique() == 2
    c = take(tmp_path / "c", 1.0, 2.0, seed=9, commit="0" * 40)
    meta = json.loads((a / "meta.json").read_text())
    if not store_hosts.source_commit(meta):
        pytest.skip("this checkout has no git commit to compare")
    with pytest.raises(ValueError, match=r"built from other source code .*git commit 0000"):
        store_hosts.load_hosts([a, c])
    with pytest.raises(ValueError, match="given twice"):
        store_hosts.load_hosts([a, a])
    with pytest.raises(ValueError, match="at least one"):
        store_hosts.load_hosts([])


def test_plans_that_differ_only_in_the_machine_defaults_are_refused_saying_what_to_give(tmp_path):
    # the README's command on two machines with other CPUs and RAM: threads and mem_limit_mb default
    # to each machine's, so the plans differ although the user gave the same
    base = dict(workloads=["sleep"], ns=[10, 100], samples=6, warmup=0, params={"sleep": {"work": 10}})
    a = take(tmp_path / "a", 1.0, 2.0, seed=21, the_plan=make_plan("quick", threads=2, mem_limit_mb=19000, **base))
    b = take(tmp_path / "b", 1.0, 2.0, seed=22, cpu_model="Other CPU",
             the_plan=make_plan("quick", threads=1, mem_limit_mb=3000, **base))
    with pytest.raises(ValueError) as err:
        store_hosts.load_hosts([a, b])
    assert ("they differ in mem_limit_mb: 19000 vs 3000; threads: 2 vs 1; unless given, each machine sets mem_limit_mb "
            "to 80% of its RAM and threads to its usable CPUs: give the same on every machine (--mem-limit-mb M, make "
            "run MEM_LIMIT_MB=M; --threads N, make run THREADS=N)): only runs of the same plan combine") in str(err.value)
    c = take(tmp_path / "c", 1.0, 2.0, seed=23, cpu_model="Other CPU",
             the_plan=make_plan("quick", threads=2, mem_limit_mb=19000, **base))
    assert store_hosts.load_hosts([a, c])["host"].nunique() == 2, "given alike, the two machines combine"
    other = make_plan("quick", threads=2, mem_limit_mb=19000, **{**base, "params": {"sleep": {"work": 20}}})
    d = take(tmp_path / "d", 1.0, 2.0, seed=24, the_plan=other)
    with pytest.raises(ValueError) as err:
        store_hosts.load_hosts([a, d])
    assert "they differ in params: " in str(err.value) and "unless given" not in str(err.value)


def test_one_commit_with_other_program_sources_is_refused_unless_named(tmp_path):
    # two `-dirty` trees of one commit, or copies without git: the commit strings agree, the source not
    a = take(tmp_path / "a", 1.0, 2.0, seed=31, commit="3" * 40 + "-dirty")
    assert set(json.loads((a / "meta.json").read_text())["sessions"][0]["sources"]) == {"benchlaunch", "gobench",
                                                                                        "rustbench"}
    b = take(tmp_path / "b", 1.0, 2.0, seed=32, cpu_model="Other CPU", commit="3" * 40 + "-dirty",
             sources={"gobench": "0" * 64})
    with pytest.raises(ValueError) as err:
        store_hosts.load_hosts([a, b])
    assert f"{b} was built from other source code than {a} (the source of gobench differs, under git commit " in str(
        err.value) and str(err.value).endswith(
        "name it as a factor (--factor commit on the command line, -p factor commit in analysis.ipynb, "
        "factor=\"commit\" in a call)")
    assert store_hosts.load_hosts([a, b], factor="commit")["host"].nunique() == 2
    same = take(tmp_path / "c", 1.0, 2.0, seed=33, cpu_model="Other CPU", commit="3" * 40 + "-dirty")
    assert store_hosts.load_hosts([a, same])["host"].nunique() == 2, "the same source combines"
    older = take(tmp_path / "d", 1.0, 2.0, seed=34, cpu_model="Other CPU", commit="3" * 40 + "-dirty", sources={})
    assert store_hosts.load_hosts([a, older])["host"].nunique() == 2, "a session that recorded none is not refused"


def test_the_command_writes_the_tables_the_forest_plots_and_the_summary(tmp_path):
    import subprocess
    import sys
    a = take(tmp_path / "a", 1.0, 2.0, seed=10)
    b = take(tmp_path / "b", 1.0, 1.98, seed=11, cpu_model="Other CPU")
    out = tmp_path / "combined"
    done = subprocess.run([sys.executable, "-m", "bench_src", "hosts", str(a), str(b), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "2 results directories from 2 distinct machine(s)" in done.stdout
    assert "holds on 2 of 2 hosts" in done.stdout
    for name in ("hosts.csv", "hosts.md", "per_host_elapsed_s.csv", "combined_elapsed_s.csv",
                 "host_values_elapsed_s.csv", "forest_elapsed_s.svg", "forest_elapsed_s.png", "forest_elapsed_s.pdf"):
        assert (out / name).stat().st_size > 0, name
    other = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, warmup=0, params={"sleep": {"work": 10}})
    c = take(tmp_path / "c", 1.0, 2.0, seed=12, the_plan=other)
    done = subprocess.run([sys.executable, "-m", "bench_src", "hosts", str(a), str(c), "--out", str(tmp_path / "x")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "another plan" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x").exists()
    # the same report again replaces its own files; a directory holding anything else is not written into
    again = subprocess.run([sys.executable, "-m", "bench_src", "hosts", str(a), str(b), "--out", str(out)],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    for into, what in ((a, "it is a run's results directory"), (tmp_path / "mine", "it holds 'notes.txt', which a "
                                                                 "hosts report does not write")):
        into.mkdir(exist_ok=True)
        if not (into / "meta.json").exists():
            (into / "notes.txt").write_text("mine")
        before = sorted(p.name for p in into.iterdir())
        refused = subprocess.run([sys.executable, "-m", "bench_src", "hosts", str(a), str(b), "--out", str(into)],
                                 capture_output=True, text=True, timeout=300)
        assert refused.returncode == 2 and refused.stderr == (
            f"error: the hosts report is not written into {str(into)!r}: {what}; give --out a new or empty "
            "directory\n"), refused.stderr
        assert sorted(p.name for p in into.iterdir()) == before


def test_a_directory_a_run_still_writes_is_refused_as_report_refuses_it(tmp_path, capsys):
    """`hosts` analysed a directory while a run was writing it (23 of 32 samples, no word), where
    `report` refused it: every reader of several hosts refuses it now with the report's own line,
    before anything is written (the command, api.load of a list, analysis.ipynb's parameters as
    papermill passes them, one directory or a list)."""
    import re

    from bench_src import api
    from bench_src.__main__ import main
    from bench_src.report import notebook as nb
    from bench_src.store import LockedError
    from locks import held_elsewhere

    a = take(tmp_path / "a", 1.0, 2.0, seed=30)
    b = take(tmp_path / "b", 1.0, 1.98, seed=31, cpu_model="Other CPU")
    out = tmp_path / "combined"
    with held_elsewhere(b / ".lock") as run:
        assert main(["report", str(b)]) == 2
        refused_by_report = capsys.readouterr().err
        assert re.fullmatch(rf"error: results directory {re.escape(repr(str(b)))} \(a report now would be of part of "
                            rf"its run\) is in use by PID {run.pid}, since \S+ \(lock {re.escape(str(b / '.lock'))}\); "
                            r"wait for it to finish or stop it\n", refused_by_report), refused_by_report
        assert main(["hosts", str(a), str(b), "--out", str(out)]) == 2
        assert capsys.readouterr().err == refused_by_report, "the same rule, the same line"
        assert not out.exists(), "nothing written"
        with pytest.raises(LockedError) as err:
            api.load([a, b])
        assert api.error_line(err.value) + "\n" == refused_by_report
        for given in (json.dumps([str(a), str(b)]), str(b)):
            with pytest.raises(LockedError) as err:
                nb.analysis_parameters(given, hosts_dir=str(out))
            assert api.error_line(err.value) + "\n" == refused_by_report, given
        for read in (nb.memory_parameters, nb.reproduce_parameters):  # the other analysis notebooks alike
            with pytest.raises(LockedError) as err:
                read(str(b))
            assert api.error_line(err.value) + "\n" == refused_by_report, read
    assert not (b / "export").exists() and not out.exists()
    assert main(["hosts", str(a), str(b), "--out", str(out)]) == 0, "the run over, the same command combines them"


def test_a_path_that_holds_no_run_is_refused_with_what_an_analysis_needs(tmp_path, capsys):
    """`hosts A DIR` with DIR missing, empty or holding a meta.json that is no run's told to "give the
    directory of a run, or a new or empty one": a run's advice, which an analysis cannot follow.
    `hosts` says what `report` says of the same path, and the run keeps its own advice."""
    from bench_src.__main__ import main

    a = take(tmp_path / "a", 1.0, 2.0, seed=32)
    empty = tmp_path / "empty"
    empty.mkdir()
    record = tmp_path / "record"  # a run's record whose plan does not rebuild, and no samples
    record.mkdir()
    (record / "meta.json").write_text(json.dumps({"run_id": "x", "plan": {"profile": 3}, "sessions": []}))
    out = tmp_path / "combined"
    for d, ends in ((tmp_path / "nonexistent", "does not exist; run notebooks/run.ipynb or `python -m bench_src run` "
                     "first, or pass the directory of a run\n"),
                    (empty, "is not a results directory: it is empty; run notebooks/run.ipynb or `python -m bench_src "
                     "run` first, or pass the directory of a run\n"),
                    (record, "is not a results directory of this package, or one of a run that stored no sample; give "
                     "the results directory of a run\n")):
        assert main(["report", str(d)]) == 2
        by_report = capsys.readouterr().err
        assert main(["hosts", str(a), str(d), "--out", str(out)]) == 2
        by_hosts = capsys.readouterr().err
        assert by_hosts == by_report and by_hosts.startswith("error: ") and by_hosts.endswith(ends), by_hosts
        assert "new or empty" not in by_hosts and not out.exists()
    assert main(["check", "--profile", "quick", "--results-dir", str(record)]) == 2
    assert capsys.readouterr().err.endswith("give the directory of a run, or a new or empty one\n"), \
        "a run may be given a new directory"


def test_a_difference_named_as_a_factor_is_accepted_and_kept_apart(tmp_path):
    from bench_src import api

    a = take(tmp_path / "a", 1.0, 2.0, seed=13, commit="1" * 40)
    b = take(tmp_path / "b", 1.0, 2.0, seed=14, commit="2" * 40)
    with pytest.raises(ValueError, match=r"built from other source code .*factor=\"commit\""):
        store_hosts.load_hosts([a, b])
    with pytest.raises(ValueError, match=r"factor='cpu': allowed: plan, commit"):
        store_hosts.load_hosts([a, b], factor="cpu")
    df = api.load([a, b], factor="commit")
    assert df.attrs["factor"] == "commit" and df["host"].nunique() == 1, "one machine, two commits"
    assert dict(df.groupby("results_dir")["commit"].unique().map(tuple)) == {str(a): ("1" * 40,), str(b): ("2" * 40,)}
    logs = hosts.host_log_ratios(df)
    assert set(logs["pairs"]) == {6}, "a commit's blocks are not pooled with the other commit's"
    table = hosts.across_hosts(df)
    assert sorted(table["commit"].unique()) == ["1" * 40, "2" * 40] and len(table) == 4
    # one host per commit: each commit's own verdict (Go lower), no interval across hosts
    assert (table["hosts"] == 1).all() and (table["host_verdicts"] == "a").all()
    per = hosts.per_host(df)
    assert len(per) == 4 and set(per["commit"]) == {"1" * 40, "2" * 40}

    other = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, warmup=0, params={"sleep": {"work": 10}})
    c = take(tmp_path / "c", 1.0, 2.0, seed=15, cpu_model="Other CPU", commit="1" * 40, the_plan=other)
    with pytest.raises(ValueError, match=r"another plan .*factor=\"plan\""):
        api.load([a, c])
    both = api.load([a, c], factor="plan")
    assert set(both["plan"]) == {plan().digest, other.digest} and both["host"].nunique() == 2
    combined = hosts.across_hosts(both)
    # N = 100 ran under one plan only; N = 10 under each plan on its own machine: three rows, one host each
    assert len(combined) == 3 and (combined["hosts"] == 1).all()
    assert sorted(combined.groupby("plan").size()) == [1, 2]
    with pytest.raises(ValueError, match="give a list"):
        api.load(a, factor="commit")


def test_plans_of_different_looks_are_refused_even_as_a_factor(tmp_path):
    from bench_src import api

    a = take(tmp_path / "a", 1.0, 2.0, seed=16)
    longer = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=8, warmup=0, params={"sleep": {"work": 10}})
    b = take(tmp_path / "b", 1.0, 2.0, seed=17, the_plan=longer)
    with pytest.raises(ValueError, match=r"other looks of the sequential rule .*\[8\] vs \[6\] pairs"):
        api.load([a, b], factor="plan")


def test_the_analysis_notebook_shows_the_hosts_of_a_list_of_directories(tmp_path):
    import papermill as pm

    from bench_src import paths

    a = take(tmp_path / "a", 1.0, 2.0, seed=18)
    b = take(tmp_path / "b", 1.0, 1.98, seed=19, cpu_model="Other CPU")
    out = tmp_path / "hosts"
    pm.execute_notebook(str(paths.ROOT / "notebooks" / "analysis.ipynb"), str(tmp_path / "analysis.ipynb"),
                        parameters={"results_dir": json.dumps([str(a), str(b)]), "hosts_dir": str(out)},
                        cwd=str(paths.ROOT), kernel_name="python3", progress_bar=False)
    executed = json.loads((tmp_path / "analysis.ipynb").read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not any(o.get("output_type") == "error" for o in outputs)
    shown = "".join("".join(o.get("data", {}).get("text/html", "")) + "".join(o.get("text", "")) for o in outputs)
    assert "2 results directories from 2 distinct machine(s)" in shown
    for title in ("Go vs Rust across hosts, workload time", "Go vs Rust on each host", "The hosts"):
        assert title in shown, title
    assert "2 of 2 hosts" in shown and "I²" in shown and "tau²" in shown
    assert "<img alt='forest_elapsed_s'" in shown, "the forest plot is shown"
    assert "this section is the analysis of one directory" in shown
    assert (out / "combined_elapsed_s.csv").is_file() and (out / "forest_elapsed_s.png").is_file()
    assert not (a / "export").exists(), "several directories: no directory's own report is written"


def run_on_two_hosts(directory, seed):
    """A run whose blocks two hosts took, as a local cluster of two leaves its directory: the
    session describes both hosts (shares of one machine, CPU 0 and CPU 1) and each sample carries
    its block's host, blocks alternating between them (6 pairs on each)."""
    the_plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=12, warmup=0,
                         params={"sleep": {"work": 10}})
    take(directory, 1.0, 2.0, seed, the_plan=the_plan)
    meta = json.loads((directory / "meta.json").read_text())
    session = meta["sessions"][-1]
    prints = [store_hosts.fingerprint({**session, "cpu_set": cpu}) for cpu in ("0", "1")]
    session["hosts"] = {store_hosts.host_id(fp): {"fingerprint": fp, "label": store_hosts.host_label(fp),
                                                  "cpu_set": fp["cpu_set"]} for fp in prints}
    (directory / "meta.json").write_text(json.dumps(meta))
    ids = list(session["hosts"])
    records = [json.loads(line) for line in (directory / "samples.jsonl").read_text().splitlines()]
    (directory / "samples.jsonl").write_text("".join(json.dumps({**r, "host": ids[r["block"] % 2]}) + "\n"
                                                     for r in records))
    return directory


def test_one_directory_of_a_run_on_several_hosts_has_the_hosts_section_of_its_report(tmp_path):
    """analysis.ipynb on a cluster run's one directory said "give results_dir a list of directories"
    and showed no hosts, where report.html has a Hosts section: the section shows that report's own
    per-host and combined tables and forest plots, with the hosts described; one host keeps the one
    line, which names both ways to the section."""
    from bench_src import api
    from bench_src.report import notebook as nb

    cluster = run_on_two_hosts(tmp_path / "cluster", seed=33)
    parameters = nb.analysis_parameters(str(cluster))
    rep = nb.analysis(parameters)
    found = api.analysis_hosts(parameters, rep)
    assert found is not None and found.machines == 2 and found.distinct_machines == 1
    for metric in ("elapsed_s", "peak_rss_mib"):
        assert found.combined[metric] is rep.tables[f"across_hosts_{metric}"], "the report's table, as report.html"
        assert found.per_host[metric] is rep.tables[f"per_host_{metric}"]
    assert found.files == [p for m in ("elapsed_s", "peak_rss_mib") for p in rep.figures[f"forest_{m}"]]
    section = nb.hosts_section(found)
    text = repr(section)
    assert nb.ONE not in section.items
    assert text.startswith("1 results directory from 1 distinct machine(s)"), text[:200]
    assert "2 hosts on 1 machine(s): hosts of one machine are shares of it" in text
    titles = [r.title for r in section.readables()]
    assert titles == ["The hosts", "Go vs Rust across hosts, workload time", "Go vs Rust on each host, workload time",
                      "Go vs Rust across hosts, peak RSS", "Go vs Rust on each host, peak RSS"], titles
    assert "tau²" in text and "I²" in text and "holds on" in text
    assert [p.name for p in section.files()] == ["forest_elapsed_s.png", "forest_peak_rss_mib.png"]
    assert all(p.parent == rep.export_dir / "figures" for p in section.files()), "nothing written elsewhere"

    alone = take(tmp_path / "alone", 1.0, 2.0, seed=34)
    parameters = nb.analysis_parameters(str(alone))
    assert api.analysis_hosts(parameters, nb.analysis(parameters)) is None
    assert nb.hosts_section(None).items == [nb.ONE]
    assert "a list of directories taken on several machines" in nb.ONE and "a run on several hosts (cluster)" in nb.ONE


def test_the_analysis_notebook_shows_the_hosts_of_one_directory_of_a_run_on_several_hosts(tmp_path):
    import papermill as pm

    from bench_src import paths
    from bench_src.report import notebook as nb

    cluster = run_on_two_hosts(tmp_path / "cluster", seed=35)
    pm.execute_notebook(str(paths.ROOT / "notebooks" / "analysis.ipynb"), str(tmp_path / "analysis.ipynb"),
                        parameters={"results_dir": str(cluster)}, cwd=str(paths.ROOT), kernel_name="python3",
                        progress_bar=False)
    executed = json.loads((tmp_path / "analysis.ipynb").read_text())
    last = executed["cells"][-1]
    assert "".join(last["source"]) == "nb.hosts_section(hosts)"
    shown = "".join("".join(o.get("data", {}).get("text/html", "")) for o in last["outputs"])
    assert "1 results directory from 1 distinct machine(s)" in shown and nb.ONE not in shown
    for title in ("The hosts", "Go vs Rust across hosts, workload time", "Go vs Rust on each host, workload time"):
        assert title in shown, title
    assert "<img alt='forest_elapsed_s'" in shown, "the forest plot is shown"


def test_a_combined_verdict_holds_on_the_hosts_whose_own_interval_shows_it():
    """"Holds on k of m": a combined difference holds on the hosts whose own interval calls the same
    side (whether or not smaller than the margin); a combined equivalence on the hosts whose own
    interval lies inside the margin (an equivalence, or a difference called but smaller than the
    margin: before, two hosts' "Go faster, by less than 2%" under a combined "equivalent" read "holds
    on 0 of 2").  A host "equivalent" does not hold a combined difference: its interval holds 1.  An
    inconclusive combined verdict holds nowhere (before, it held on every inconclusive host)."""
    assert hosts.holds("a", "a", False) and hosts.holds("a", "a", True) and hosts.holds("b", "b", True)
    assert not hosts.holds("b", "equivalent", False), "an equivalent host's interval holds 1"
    assert not hosts.holds("a", "b", True) and not hosts.holds("a", "inconclusive", False)
    assert hosts.holds("equivalent", "equivalent", False) and hosts.holds("equivalent", "a", True)
    assert not hosts.holds("equivalent", "a", False), "a difference of the margin or more is no equivalence"
    assert not hosts.holds("equivalent", "inconclusive", False)
    assert not any(hosts.holds("inconclusive", kind, within) for kind in ("a", "b", "equivalent", "inconclusive")
                   for within in (False, True))


def times_frame(ratios, cv, seed):
    """Workload time: per host, one sleep comparison of 10 blocks whose Go/Rust ratio is `ratios[h]`,
    with lognormal noise of `cv` per sample."""
    import pandas as pd

    from bench_src.analysis import simulate

    parts = []
    for h, r in enumerate(ratios):
        f = simulate.frame(simulate.go_rust_cells([r]), 10, np.random.default_rng(seed * 10 + h),
                           simulate.Conditions(cv=cv))
        f["host"], f["host_label"], f["run_id"] = f"h{h}", f"host {h}", f"run{h}"
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def blocks_frame(blocks, ratio=0.5, cv=0.01, seed=0):
    """Workload time: per host, one sleep comparison of Go/Rust ratio `ratio` in `blocks[h]` blocks."""
    import pandas as pd

    from bench_src.analysis import simulate

    parts = []
    for h, n in enumerate(blocks):
        f = simulate.frame(simulate.go_rust_cells([ratio]), n, np.random.default_rng(seed * 10 + h),
                           simulate.Conditions(cv=cv))
        f["host"], f["host_label"], f["run_id"] = f"h{h}", f"host {h}", f"run{h}"
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def test_a_host_with_fewer_pairs_than_a_verdict_needs_is_left_out_of_the_combination_saying_why():
    """The floor of every comparison (rules.MIN_PAIRS pairs) holds per host in the combination: a
    host of 3 pairs, "not tested" in its own table, does not enter the combined verdict (it did: its
    mean and its variance read off 3 pairs counted as a host's); the row names it and why."""
    from bench_src.analysis import rules
    from bench_src.report import hosts_report, tables

    df = blocks_frame([10, 10, 3])
    own = hosts.per_host(df).set_index("host")
    assert own.loc["h2", "verdict_kind"] == "inconclusive" and "not tested" in own.loc["h2", "warning"]
    logs = hosts.host_log_ratios(df).set_index("host")
    assert logs.loc["h2", "pairs"] == 3 < rules.MIN_PAIRS and logs.loc["h0", "left_out"] == ""
    row = hosts.across_hosts(df).iloc[0]
    assert row["hosts"] == 2 and row["host_list"] == "h0,h1" and row["left_out_hosts"] == "h2"
    assert row["verdict_kind"] == "a" and row["holds_on_text"] == "2 of 2"
    assert ("host host 2 left out of the combination: too few pairs: 3 blocks hold both cells, and a verdict needs 6 "
            "(the error rate is measured from there)") in row["note"]
    c = hosts.combine(logs.loc[["h0", "h1"], "log_ratio"], logs.loc[["h0", "h1"], "variance"])
    assert row["ratio"] == pytest.approx(np.exp(c.estimate), rel=1e-12)
    lines = hosts_report.summary_lines(hosts_report.analyse(df))
    assert any("1 of them combined without a host that had fewer than 6 pairs" in line for line in lines), lines
    assert "left out of the combination" in tables.hosts.combined(hosts.across_hosts(df)).frame["note"].iloc[0]


def test_a_combination_left_with_one_host_of_enough_pairs_is_not_tested():
    """Two hosts, one of 4 pairs: one host is left to combine, so the row is not tested across hosts
    (no ratio, no interval), as a one-host table's row of too few pairs is; it read "Go faster" from
    the two before."""
    from bench_src.report import tables

    df = blocks_frame([10, 4])
    row = hosts.across_hosts(df).iloc[0]
    assert row["hosts"] == 1 and row["left_out_hosts"] == "h1" and row["verdict_kind"] == "inconclusive"
    assert np.isnan(row["ratio"]) and np.isnan(row["ratio_ci_low"]) and np.isnan(row["p_adjusted"])
    assert "not tested across hosts: 1 host with 6 pairs or more, and a combination needs 2" in row["note"]
    shown = tables.hosts.combined(hosts.across_hosts(df)).frame.iloc[0]
    assert shown["verdict"] == "not tested" and shown["Go/Rust [interval]"] == ""


def test_each_hosts_value_is_the_mean_log_ratio_and_interval_the_combination_reads_and_the_forest_draws_it():
    """The forest plot draws per host what was combined: exp of its mean log ratio with the normal on
    its own variance at the family's level (it drew each host table's Hodges-Lehmann estimate at that
    host's own level); a host left out is an open marker without an interval."""
    import matplotlib.pyplot as plt
    from scipy import stats as sps

    from bench_src.report import figures

    df = blocks_frame([10, 10, 3], cv=0.05, seed=3)
    logs = hosts.host_log_ratios(df)
    combined = hosts.across_hosts(df, logs=logs)
    values = hosts.host_values(logs, combined).set_index("host")
    level = 1 - combined["ci_level"].iloc[0]
    for h in ("h0", "h1"):
        d = logs.set_index("host").loc[h]
        half = sps.norm.isf(level / 2) * np.sqrt(d["variance"])
        assert values.loc[h, ["ratio", "ratio_ci_low", "ratio_ci_high"]].tolist() == pytest.approx(
            [np.exp(d["log_ratio"]), np.exp(d["log_ratio"] - half), np.exp(d["log_ratio"] + half)], rel=1e-12)
    assert np.isnan(values.loc["h2", "ratio_ci_low"]) and values.loc["h2", "ratio"] > 0
    own = hosts.per_host(df).set_index("host")
    assert values.loc["h0", "ratio"] != pytest.approx(own.loc["h0", "ratio"], rel=1e-9), "not the host table's"
    fig = figures.forest(hosts.host_values(logs, combined), combined, 0.02)
    drawn = sorted(tuple(sorted((float(seg[0][0]), float(seg[1][0])))) for coll in fig.axes[0].collections
                   if hasattr(coll, "get_segments") for seg in coll.get_segments() if seg[0][1] == seg[1][1])
    expected = sorted((values.loc[h, "ratio_ci_low"], values.loc[h, "ratio_ci_high"]) for h in ("h0", "h1"))
    assert len(drawn) == 2 and np.allclose(drawn, expected, rtol=1e-12), (drawn, expected)
    points = [(line.get_xdata()[0], line.get_markerfacecolor()) for line in fig.axes[0].lines
              if line.get_marker() == "o"]
    assert any(x == pytest.approx(values.loc["h2", "ratio"]) and face == "white" for x, face in points), points
    plt.close(fig)


def cluster_run(directory, go_on_b=1.0, go=1.0, rust=2.0, spread=0.02, samples=12, seed=1):
    """A run as a local cluster of 2 leaves it: blocks of even number taken on one host (CPU 0), of
    odd number on the other (CPU 1), two shares of this machine described in the session's `hosts`;
    Go's times on the second are `go_on_b` times what they are on the first."""
    the_plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=samples, warmup=0,
                         params={"sleep": {"work": 10}})
    take(directory, go, rust, seed, the_plan=the_plan)
    meta = json.loads((directory / "meta.json").read_text())
    session = meta["sessions"][-1]
    prints = [{**store_hosts.fingerprint(session), "cpu_set": cpu} for cpu in ("0", "1")]
    a, b = (store_hosts.host_id(fp) for fp in prints)
    session["engine"] = "cluster local:2"
    session["hosts"] = {store_hosts.host_id(fp): {"label": store_hosts.host_label(fp), "cpu_set": fp["cpu_set"],
                                                   "fingerprint": fp} for fp in prints}
    (directory / "meta.json").write_text(json.dumps(meta))
    records = [json.loads(line) for line in (directory / "samples.jsonl").read_text().splitlines()]
    for r in records:
        r["host"] = a if r.get("block", 0) % 2 == 0 else b
        if r["host"] == b and r["lang"] == "go" and r.get("elapsed_ns"):
            r["elapsed_ns"] = int(r["elapsed_ns"] * go_on_b)
    (directory / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return directory


def test_the_test_of_homogeneity_is_welchs_f_test_on_each_hosts_pairs():
    """Welch's F test of equal host means, from each host's mean, variance of the mean and pairs:
    with 2 hosts it is Welch's two-sample t test (F = t², the same p as scipy's ttest_ind with
    unequal variances); with 3 it matches a hand computation of Welch (1951)."""
    from scipy import stats as sps

    rng = np.random.default_rng(11)
    a, b = rng.normal(0.05, 0.01, 7), rng.normal(0.06, 0.03, 12)
    c = hosts.combine([a.mean(), b.mean()], [a.var(ddof=1) / 7, b.var(ddof=1) / 12], pairs=[7, 12])
    t = sps.ttest_ind(a, b, equal_var=False)
    assert c.welch_f == pytest.approx(t.statistic ** 2, rel=1e-10)
    assert c.welch_p == pytest.approx(t.pvalue, rel=1e-8) and c.welch_df2 == pytest.approx(t.df, rel=1e-10)

    groups = [rng.normal(0.05, s, n) for s, n in ((0.01, 6), (0.02, 9), (0.015, 30))]
    m = np.array([g.mean() for g in groups])
    n = np.array([g.size for g in groups], dtype=float)
    v = np.array([g.var(ddof=1) for g in groups])
    w = n / v
    mw = (w * m).sum() / w.sum()
    lam = (((1 - w / w.sum()) ** 2) / (n - 1)).sum()
    f = ((w * (m - mw) ** 2).sum() / 2) / (1 + 2 * (3 - 2) / (9 - 1) * lam)
    df2 = (9 - 1) / (3 * lam)
    c = hosts.combine(m, v / n, pairs=n)
    assert c.welch_f == pytest.approx(f, rel=1e-10) and c.welch_df2 == pytest.approx(df2, rel=1e-10)
    assert c.welch_p == pytest.approx(sps.f.sf(f, 2, df2), rel=1e-8)
    assert c.q == pytest.approx((w * (m - mw) ** 2).sum(), rel=1e-10)  # Welch's numerator is Q / (k - 1)
    # a host with one pair: no test; a host variance of 0: nothing estimable, no test either
    assert math.isnan(hosts.combine(m, v / n, pairs=[1, 9, 30]).welch_p)
    assert math.isnan(hosts.combine(m, [0.0, *(v / n)[1:]], pairs=n).welch_p)


def test_cochrans_q_its_degrees_of_freedom_and_welchs_test_stand_beside_tau2_and_i2(tmp_path):
    """With 2 hosts tau² and I² rest on one degree of freedom (I² >= 50% in 16% of sets without any
    heterogeneity): every combined row carries Cochran's Q and its hosts - 1 degrees of freedom (as
    statsmodels' combine_effects gives Q), and Welch's test of equal host means, and every place
    that shows the table says what they are estimated from; report.html's Hosts section says, as
    hosts.md does, that hosts of one machine are not machines."""
    import warnings

    from scipy import stats as sps
    from statsmodels.stats.meta_analysis import combine_effects

    from bench_src.report import full, hosts_report, tables

    rng = np.random.default_rng(5)
    for k in (2, 3, 5):
        eff, var = 0.05 + rng.normal(0, 0.01, k), rng.uniform(0.5, 2.0, k) * 1e-4
        c = hosts.combine(eff, var)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = combine_effects(eff, var, method_re="pm")
        assert c.q == pytest.approx(float(ref.q), rel=1e-12) and c.q_df == k - 1
        assert math.isnan(c.welch_p)  # no pairs given: no test of homogeneity
    assert hosts.i2_by_chance(2) == pytest.approx(sps.chi2.sf(2, 1)) and round(hosts.i2_by_chance(2), 2) == 0.16

    d = cluster_run(tmp_path / "r", go_on_b=1.02)
    rep = full.analyse(d)
    table = rep.tables["across_hosts_elapsed_s"]
    assert (table["hosts"] == 2).all() and (table["q_df"] == 1).all() and table["q"].notna().all()
    assert table["welch_p"].between(0, 1).all() and (table["welch_df2"] > 0).all()
    shown = tables.hosts.combined(table)
    assert (shown.frame["estimated from"] == "2 hosts (1 df)").all()
    assert all(text.startswith(f"{q:.3g}"[:3]) for q, text in zip(table["q"], shown.frame["Q"]))
    assert all(text.startswith("F ") and " on 1 and " in text and ", p " in text
               for text in shown.frame["equal hosts (Welch)"])
    assert "I² reaches 50% by chance in 16% of sets of 2 hosts" in shown.caption
    full.export_all(rep)  # report.html's text (no figure is read here)
    page = (d / "export" / "report.html").read_text()
    hosts_part = page[page.index("<section id='hosts'>"):]
    hosts_part = hosts_part[:hosts_part.index("</section>")]
    assert "2 hosts on 1 machine(s): hosts of one machine are shares of it" in hosts_part
    assert "not across machines" in hosts_part and "2 hosts (1 df)" in hosts_part
    # the hosts command's summary: each called row with its Q and what it rests on
    from bench_src.store import hosts as store_hosts_

    lines = hosts_report.summary_lines(hosts_report.analyse(store_hosts_.load_hosts([d])))
    assert tables.hosts.machines_caveat(2, 1) in lines
    called = [line for line in lines if line.startswith("- ")]
    assert called and all(", Q " in line and "from 2 hosts (1 df)" in line for line in called), lines
    # the row's own reading first, how far the hosts differ (Welch's p among it) last
    assert all(line.index("holds on 2 of 2") < line.index("; tau ") < line.index("; equal hosts (Welch): F ")
               for line in called), called
    assert any("16% of sets of 2 hosts" in line for line in lines), lines


def test_an_inconclusive_combined_row_counts_the_hosts_verdicts_and_holds_on_none():
    """Two hosts each "equivalent within ±2%" whose combination is inconclusive (t on one degree of
    freedom) read "holds on 0 of 2"; two inconclusive hosts under an inconclusive combination read
    "holds on 2 of 2".  Neither is a count of anything the row claims: the row says there is no
    verdict to hold and counts the hosts' own verdicts."""
    from bench_src.report import tables

    equivalent = hosts.across_hosts(times_frame([1.0, 1.0], 0.01, seed=2))
    noisy = hosts.across_hosts(times_frame([1.0, 1.0], 0.2, seed=0))
    for table, counts in ((equivalent, "2 equivalent within ±2%"), (noisy, "2 inconclusive")):
        row = table.iloc[0]
        assert row["verdict_kind"] == "inconclusive" and row["holds_on_text"] == "", row.to_dict()
        assert np.isnan(row["holds_on"]) and row["host_verdict_counts"] == counts
        shown = tables.hosts.combined(table)
        assert shown.frame["holds on"].iloc[0] == f"no verdict to hold; hosts: {counts}"
        assert "an inconclusive row claims nothing to hold" in shown.caption
    decided = hosts.across_hosts(times_frame([1.0, 1.0], 0.01, seed=0)).iloc[0]
    assert decided["verdict_kind"] == "equivalent" and decided["holds_on_text"] == "2 of 2"
    assert tables.hosts.combined(hosts.across_hosts(times_frame([1.0, 1.0], 0.01, seed=0))).frame[
        "holds on"].iloc[0] == "2 of 2 hosts"


def test_the_combined_table_reads_verdicts_as_the_one_host_tables_do(tmp_path):
    from bench_src.report import tables

    a = take(tmp_path / "a", 1.0, 2.0, seed=5)
    b = take(tmp_path / "b", 1.0, 2.0, seed=6, cpu_model="Another CPU")
    df = store_hosts.load_hosts([a, b])
    table = hosts.across_hosts(df)
    assert set(table["verdict"]) == {"Go faster"} and set(table["holds_on_text"]) == {"2 of 2"}
    assert set(table["host_verdict_texts"]) == {"Go faster; Go faster"}
    readable = tables.hosts.combined(table).frame
    assert set(readable["verdict"]) == {"Go faster"} and set(readable["hosts' own verdicts"]) == {"Go faster; Go faster"}
    own = tables.hosts.per_host(hosts.per_host(df)).frame
    assert set(own["verdict"]) == {"Go faster"}


def pages_frame(go_pages, rust_pages):
    """Peak RSS on the 4 KiB page grid: per host, Go's and Rust's pages in each of its blocks (one
    sleep comparison, one host per entry)."""
    import pandas as pd

    from bench_src.analysis import rules, simulate

    page = rules.resolution("peak_rss_mib")
    parts = []
    for h, (go, rust) in enumerate(zip(go_pages, rust_pages)):
        f = simulate.frame(simulate.go_rust_cells([1.0]), len(go), np.random.default_rng(h))
        per_block = np.where(f["lang"] == "go", np.asarray(go, float)[f["block"]], np.asarray(rust, float)[f["block"]])
        f["peak_rss_mib"] = per_block * page
        f["host"], f["host_label"], f["run_id"] = f"h{h}", f"host {h}", f"run{h}"
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def test_hosts_whose_means_coincide_on_the_page_grid_are_not_called_from_a_zero_width_interval():
    """Go at 2,560 pages in every block, Rust one page more in 5 of 10 blocks, other blocks on each
    of two hosts: each host's mean log ratio is the same, so the hosts' spread is 0.  Each host calls
    the two equivalent; across hosts the interval keeps the hosts' own noise and their rounding on
    the grid, holds 1 and says the same (before: a zero-width interval, p = 0, "Go smaller, by less
    than 2%")."""
    go = [2560] * 10
    df = pages_frame([go, go], [[2561] * 5 + [2560] * 5, [2560] * 5 + [2561] * 5])
    logs = hosts.host_log_ratios(df, "peak_rss_mib")
    assert logs["log_ratio"].nunique() == 1 and (logs["variance"] > 0).all()
    assert set(hosts.per_host(df, "peak_rss_mib")["verdict_kind"]) == {"equivalent"}
    row = hosts.across_hosts(df, "peak_rss_mib").iloc[0]
    assert row["ratio_ci_low"] < 1 < row["ratio_ci_high"] and row["p_value"] > 0.05, row.to_dict()
    assert row["verdict_kind"] == "equivalent"
    # at least the classic random-effects interval on the hosts' own noise, plus the grid's bound
    half = (np.log(row["ratio_ci_high"]) - np.log(row["ratio_ci_low"])) / 2
    assert half > 1.96 * np.sqrt(logs["variance"].sum()) / 2 + logs["rounding_u"].mean()


def test_hosts_whose_values_never_vary_are_combined_as_each_reads_its_own():
    """Three hosts whose values never vary (Go one page above Rust in every block): no noise and no
    spread, so the interval is the grid's rounding bound alone, as each host's own is, and the
    combined verdict is each host's."""
    df = pages_frame([[2561] * 10] * 3, [[2560] * 10] * 3)
    own = hosts.per_host(df, "peak_rss_mib")
    row = hosts.across_hosts(df, "peak_rss_mib").iloc[0]
    assert row["ratio_ci_high"] > row["ratio_ci_low"] > 1, row.to_dict()
    assert set(own["verdict"]) == {row["verdict"]} == {"Rust smaller, by less than 2%"}
    assert row["ratio_ci_low"] == pytest.approx(own["ratio_ci_low"].iloc[0], rel=1e-3)


def test_the_combined_interval_is_the_wider_of_the_t_interval_on_the_spread_and_the_classic_one():
    """Hosts that agree more closely than their own noise: the classic random-effects interval
    (normal, the hosts' own variances); hosts far apart: the t interval on their unweighted spread
    (t on hosts - 1 degrees of freedom).  Either way the p-value is the smallest level whose interval
    excludes 0, with or without a grid."""
    from scipy import stats as sps

    from bench_src.analysis import paired

    c = hosts.combine([0.01, 0.01], [1e-4, 1e-4])
    assert c.high - c.estimate == pytest.approx(sps.norm.isf(0.025) * np.sqrt(2e-4) / 2)
    assert c.p_value == pytest.approx(2 * sps.norm.sf(0.01 / (np.sqrt(2e-4) / 2)))
    c = hosts.combine([0.0, 0.1], [1e-6, 1e-6])
    assert c.high - c.estimate == pytest.approx(sps.t.isf(0.025, 1) * 0.05)
    assert c.p_value == pytest.approx(2 * sps.t.sf(1.0, 1))
    rng = np.random.default_rng(3)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        eff = 0.01 + rng.normal(0, rng.choice([0.0, 0.002, 0.02]), k)
        var = rng.uniform(0, 2e-5, k) * rng.choice([0, 1])
        grid = paired.Rounding(*(rng.uniform(0, 5e-4, k) * rng.choice([0, 1]) for _ in range(3)))
        c = hosts.combine(eff, var, rounding=grid)
        assert c.high > c.low or (not grid.any and not var.any() and np.ptp(eff) == 0)
        for level in (c.p_value * 0.999, c.p_value * 1.001):
            if 1e-290 < level < 1:  # (the bisection stops at 1e-300)
                low, high = c.interval(level)
                assert (low > 0 or high < 0) == (level > c.p_value), (eff, var, level, c)


def test_the_classic_interval_with_heterogeneity_adds_paule_and_mandels_tau2_to_each_hosts_variance():
    """With tau² > 0 the classic interval is the wider one; leaving tau² out of it narrows every heterogeneous row."""
    from scipy import optimize, stats as sps

    eff = np.array([0.0096, -0.0049, 0.0177, 0.0043, 0.0097])
    var = np.array([5.07e-6, 1.28e-7, 1.165e-6, 2.8e-4, 4.14e-4])
    k = eff.size

    def q(t):  # Cochran's generalised Q
        w = 1 / (var + t)
        return (w * (eff - (w * eff).sum() / w.sum()) ** 2).sum()

    tau2 = optimize.bisect(lambda t: q(t) - (k - 1), 0.0, 1.0, xtol=1e-18, rtol=1e-14)  # Paule and Mandel
    spread = sps.t.isf(0.025, k - 1) * eff.std(ddof=1) / np.sqrt(k)
    # the mean of the hosts' estimates (equal weights): its variance is sum (v_i + tau²) / k²
    classic = sps.norm.isf(0.025) * np.sqrt((var + tau2).sum()) / k
    c = hosts.combine(eff, var)
    assert c.tau2 == pytest.approx(tau2, rel=1e-9) and tau2 > 0
    assert classic > spread
    assert c.high - c.estimate == pytest.approx(max(spread, classic), rel=1e-9)
    assert c.estimate - c.low == pytest.approx(max(spread, classic), rel=1e-9)


def test_hartung_and_knapps_interval_weights_the_hosts_and_scales_its_variance():
    """hosts.hksj, the interval measured beside the combination's and not taken, is Hartung and
    Knapp's (HKSJ): the mean weighted by 1 / (v_i + tau²), its variance q / sum w_i with
    q = sum w_i (y_i - mu)² / (k - 1), on t with k - 1 degrees of freedom; by hand, and as
    statsmodels' combine_effects gives it ("random effect wls").  With unequal variances it is not
    the t interval on the hosts' unweighted spread the combination uses."""
    import warnings

    from scipy import stats as sps
    from statsmodels.stats.meta_analysis import combine_effects

    eff = np.array([0.01, 0.05, 0.03, 0.02])
    var = np.array([1e-4, 4e-4, 1.5e-4, 9e-4])
    tau2 = 2e-4
    w = 1 / (var + tau2)
    mu = (w * eff).sum() / w.sum()
    q = (w * (eff - mu) ** 2).sum() / 3
    half = sps.t.isf(0.025, 3) * np.sqrt(q / w.sum())
    assert hosts.hksj(eff, var, tau2) == pytest.approx((mu, half), rel=1e-12)
    # statsmodels, with Paule and Mandel's tau² (as hosts.combine estimates it)
    c = hosts.combine(eff, var)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = combine_effects(eff, var, method_re="pm", use_t=True).summary_frame()
    mu, half = hosts.hksj(eff, var, c.tau2)
    assert (mu - half, mu + half) == pytest.approx(tuple(ref.loc["random effect wls", ["ci_low", "ci_upp"]]),
                                                   rel=1e-4)
    assert c.se_spread == pytest.approx(eff.std(ddof=1) / 2) and half != pytest.approx(sps.t.isf(0.025, 3) *
                                                                                         c.se_spread, rel=0.01)
    assert np.isnan(hosts.hksj([0.01], [1e-4], 0.0)[1])


def test_the_combined_interval_adds_the_mean_of_the_hosts_rounding_bounds():
    """The grid's part of the combined interval is the hosts' mean bound, not the largest host's."""
    from scipy import stats as sps

    from bench_src.analysis import paired

    grid = paired.Rounding(u=np.array([2e-4, 8e-4]), v=np.array([0.0, 0.0]), fixed=np.array([0.0, 0.0]))
    c = hosts.combine([0.01, 0.011], [1e-6, 1e-6], rounding=grid)
    spread = sps.t.isf(0.025, 1) * np.std([0.01, 0.011], ddof=1) / np.sqrt(2)
    classic = sps.norm.isf(0.025) * np.sqrt(2e-6) / 2  # tau² = 0: Q(0) = 0.5 <= 1
    # each host's error uniform on [-u, u]: its 95% bound is 0.95 u
    mean_bound = 0.95 * (2e-4 + 8e-4) / 2
    assert c.high - c.estimate == pytest.approx(max(spread, classic) + mean_bound, rel=1e-9)


def test_a_hosts_variance_is_the_sample_variance_of_its_log_ratios_over_its_pairs():
    """Each host's variance (ddof = 1, over n) weighs it in the classic interval; ddof = 0 understates it."""
    go = [2560] * 10
    rust = [[2561] * 5 + [2560] * 5, [2560] * 5 + [2561] * 5]
    logs = hosts.host_log_ratios(pages_frame([go, go], rust), "peak_rss_mib").sort_values("host")
    for h in range(2):
        d = np.log(np.array(go, float)) - np.log(np.array(rust[h], float))
        assert logs["variance"].iloc[h] == pytest.approx(np.var(d, ddof=1) / d.size, rel=1e-12)


def test_a_combined_equivalence_holds_on_a_host_that_calls_a_difference_inside_the_margin():
    """A host whose own interval lies inside the margin supports a combined "equivalent", whatever side it calls."""
    import pandas as pd

    from bench_src.analysis import simulate

    parts = []
    for h, (ratio, cv) in enumerate([(1.005, 0.001), (1.005, 0.01)]):
        f = simulate.frame(simulate.go_rust_cells([ratio]), 10, np.random.default_rng(10 + h),
                           simulate.Conditions(cv=cv))
        f["host"], f["host_label"], f["run_id"] = f"h{h}", f"host {h}", f"run{h}"
        parts.append(f)
    df = pd.concat(parts, ignore_index=True)
    own = hosts.per_host(df).set_index("host")
    assert own.loc["h0", "verdict_kind"] == "b" and bool(own.loc["h0", "within_margin"])
    assert own.loc["h0", "ratio_ci_low"] > 1 and own.loc["h0", "ratio_ci_high"] < 1.02
    assert own.loc["h1", "verdict_kind"] == "equivalent"
    row = hosts.across_hosts(df).iloc[0]
    assert row["verdict_kind"] == "equivalent"
    assert row["holds_on"] == 2 and row["holds_on_text"] == "2 of 2"


def test_the_hosts_tables_name_every_part_of_a_comparisons_key():
    """Rows of the across-hosts and per-host tables that differ only in the threads or in one
    side's own parameters (a driver) read apart, as the Go-vs-Rust table's do: their key's columns
    are that table's (before, workload, N, the variants and the shared parameters only: two rows
    looked the same)."""
    import pandas as pd

    from bench_src.report import tables

    base = {"workload": "mysql", "n": 1000, "threads_requested": 2, "arm": "", "shared_params": "pool=151",
            "go_variant": "pool", "rust_variant": "pool", "go_params": "driver=go-sql,pool=151",
            "rust_params": "driver=sqlx,pool=151", "metric": "elapsed_s", "ratio": 1.05, "ratio_ci_low": 1.01,
            "ratio_ci_high": 1.1, "ci_level": 0.95, "verdict_kind": "b", "verdict": "Rust faster", "hosts": 2,
            "tau": 0.01, "i2": 0.1, "holds_on_text": "2 of 2", "host_verdicts": "b,b", "host_label": "a CPU",
            "host": "h0"}
    rows = [base, {**base, "threads_requested": 4}, {**base, "go_params": "driver=other,pool=151"}]
    t = pd.DataFrame(rows)
    for shown in (tables.hosts.combined(t).frame, tables.hosts.per_host(t).frame):
        key = shown[[c for c in shown.columns if c in ("workload", "N", "threads", "arm", "parameters", "Go", "Rust")]]
        assert not key.duplicated().any(), key
        assert list(shown["threads"]) == ["2", "4", "2"] and "arm" not in shown.columns
        assert list(shown["Go"]) == ["pool (driver=go-sql)", "pool (driver=go-sql)", "pool (driver=other)"]
        assert set(shown["Rust"]) == {"pool (driver=sqlx)"} and set(shown["parameters"]) == {"pool=151"}
    # the Go-vs-Rust table names them alike
    one = tables.comparisons.comparison(t).frame
    assert list(one["Go"]) == ["pool (driver=go-sql)", "pool (driver=go-sql)", "pool (driver=other)"]


def test_the_summary_names_each_difference_by_its_whole_key_and_keeps_its_interval_off_1():
    """Two differences that differ only in threads read alike, and a called interval [1.0004, 1.05]
    read '[1, 1.05]' beside 'Rust faster' (formatted with :.3g)."""
    import pandas as pd

    from bench_src.analysis import rules
    from bench_src.report import hosts_report as hr

    row = dict(workload="spawn", n=1000, go_variant="goroutines", rust_variant="tokio-spawn", shared_params="",
               go_params="", rust_params="", arm="", metric="elapsed_s", hosts=3, ratio=1.02, ratio_ci_low=1.0004,
               ratio_ci_high=1.05, ci_level=0.95, tau=0.01, i2=0.2, verdict_kind="b", within_margin=False,
               verdict=rules.verdict_text("b", False, "Go", "Rust", "elapsed_s", 0.02), holds_on=3,
               holds_on_text="3 of 3", host_verdicts="b,b,b", host_verdict_texts="x", host_verdict_counts="3 x", note="")
    t = pd.DataFrame([{**row, "threads_requested": 1}, {**row, "threads_requested": 4}])
    rep = hr.HostsReport(df=pd.DataFrame(), overview=pd.DataFrame({"machine": ["a", "b", "c"],
                                                                   "results_dirs": ["r1", "r2", "r3"]}),
                         combined={"elapsed_s": t})
    lines = [line for line in hr.summary_lines(rep) if line.startswith("- ")]
    assert len(set(lines)) == 2, lines
    assert "threads 1" in lines[0] and "threads 4" in lines[1]
    assert all("[1.0004, 1.05]" in line for line in lines), lines


# --- the headline tables of a run on several hosts against the combination ----------------------------
def test_pooled_verdicts_are_set_against_the_combination_across_hosts_row_by_row():
    """One owner compares the two readings: a different kind, a difference called on one side only
    within the margin, a comparison not tested or not measured across hosts all differ; the same
    verdict does not."""
    import pandas as pd

    key = {k: "" for k in hosts.KEY} | {"workload": "sleep", "threads_requested": 2}
    pooled = pd.DataFrame([{**key, "n": n, "verdict_kind": kind, "within_margin": within, "ratio": 0.99,
                            "verdict": f"pooled {n}"}
                           for n, kind, within in ((1, "a", True), (2, "a", False), (3, "a", True), (4, "equivalent", False),
                                                   (5, "a", False), (6, "b", False))])
    combined = pd.DataFrame([{**key, "n": n, "hosts": k, "verdict_kind": kind, "within_margin": within, "ratio": ratio,
                              "verdict": f"across {n}"}
                             for n, kind, within, ratio, k in ((1, "inconclusive", False, 0.99, 2),
                                                               (2, "a", False, 0.9, 2), (3, "a", False, 0.97, 3),
                                                               (4, "equivalent", False, 1.0, 2),
                                                               (5, "inconclusive", False, np.nan, 1))])
    out = hosts.pooled_against_hosts(pooled, combined).set_index("n")
    assert out["differs"].to_dict() == {1: True, 2: False, 3: True, 4: False, 5: True, 6: True}
    assert not out.loc[5, "hosts_tested"] and out.loc[6, "hosts_kind"] == "not measured" and out.loc[3, "hosts"] == 3
    assert out.loc[1, ["pooled_verdict", "hosts_verdict"]].tolist() == ["pooled 1", "across 1"]


def test_the_findings_and_the_method_of_a_run_on_several_hosts_say_the_tables_pool_them_and_name_the_rows_read_otherwise(
        tmp_path):
    """A cluster run whose two hosts measure Go at half and a quarter of Rust: pooled, Go is faster
    (0.35 [0.25, 0.50]); combined across the two hosts (t on one degree of freedom) inconclusive.
    The findings and the Method say the headline verdicts read these hosts pooled, point to the
    Hosts section, and name the rows that read otherwise; a run on one host says nothing of it."""
    import report_data
    from bench_src.report import findings, full

    d = cluster_run(tmp_path / "r", go_on_b=0.5)
    rep = full.describe_method(full.analyse(d))
    assert set(rep.tables["go_vs_rust_elapsed_s"]["verdict"]) == {"Go faster"}
    assert set(rep.tables["across_hosts_elapsed_s"]["verdict"]) == {"inconclusive"}
    time, memory = rep.findings
    pooled = ("pool the blocks of the run's 2 hosts as one sample (pairs within a host): a reading of these 2 hosts, "
              "not of machines in general, which the combination across hosts in the Hosts section is")
    row = ("sleep N = 10 (waitgroup vs join-handles, threads 2, kernel=xorshift,work=10) (pooled: Go faster; "
           "across hosts: inconclusive)")
    assert pooled in time.summary() and "2 of the 2 Go-vs-Rust rows read otherwise across hosts: " + row in time.summary()
    assert pooled in memory.summary() and "every one of the 2 Go-vs-Rust rows reads the same across hosts" in \
        memory.summary()
    assert row in findings.markdown(rep.findings)
    method = rep.method[rep.method.index("### Several hosts"):]
    assert "The Go-vs-Rust tables and the findings " + pooled in method and row in method
    assert "read the Hosts section" in method
    # a run on one host: nothing of the kind
    from bench_src.analysis import compare

    one = findings.findings({"go_vs_rust_elapsed_s": compare.compare(report_data.frame(), "elapsed_s")})
    assert one and all(f.hosts is None and "pool the blocks" not in f.summary() for f in one)
    many = findings.HostsReading(3, 9, tuple((f"row {i}", "Go faster", "inconclusive") for i in range(7)))
    assert many.differ_text().startswith("7 of the 9 Go-vs-Rust rows read otherwise across hosts: row 0 (pooled: Go "
                                         "faster; across hosts: inconclusive); ")
    assert findings.HostsReading(2, 2, (("row", "a", "b"),)).differ_text().startswith("1 of the 2 Go-vs-Rust rows reads")
    assert "row 4 (" in many.differ_text() and "row 5 (" not in many.differ_text()
    assert many.differ_text().endswith("; and 2 more (the Hosts section has them)")


def test_the_prediction_interval_of_a_new_host_is_the_wider_of_t_on_the_spread_and_the_models_normal():
    """A machine not measured: the hosts' plain mean ± the wider of t(k - 1) x s x sqrt(1 + 1/k) and
    the normal on tau² + sum (v_i + tau²) / k², at 95% whatever the family's level; from 3 hosts."""
    from scipy import stats as sps

    eff, var = np.array([0.01, 0.03, 0.08]), np.array([1e-4, 2e-4, 1e-4])
    # by hand: mean 0.04, s² = (0.03² + 0.01² + 0.04²) / 2 = 0.0013, t(2) at 97.5% = 4.302653
    spread = 4.302653 * math.sqrt(0.0013) * math.sqrt(4 / 3)
    assert spread == pytest.approx(0.179133, abs=1e-6)
    assert float(hosts.prediction_half_width(eff, var, 0.0)) == pytest.approx(spread, rel=1e-6)
    c = hosts.combine(eff, var, pairs=[10, 10, 10])
    assert c.tau2 > 0 and c.predict_note == ""
    model = sps.norm.isf(0.025) * math.sqrt(c.tau2 + (var + c.tau2).sum() / 9)
    assert model < spread
    assert (c.predict_low, c.predict_high) == pytest.approx((0.04 - spread, 0.04 + spread), rel=1e-6)
    # hosts whose means coincide (a page grid): the spread is 0, the model's normal keeps it open,
    # 1.959964 x sqrt(3e-4 / 9) = 0.011316
    c = hosts.combine([0.02, 0.02, 0.02], [1e-4, 1e-4, 1e-4])
    assert c.tau2 == 0 and c.predict_high - c.estimate == pytest.approx(0.011316, abs=1e-6)
    # vectorised over rows (the simulation's use), each row as alone
    rows = np.array([eff, [0.02, 0.02, 0.02]])
    both = hosts.prediction_half_width(rows, np.array([var, [1e-4] * 3]), np.array([0.0, 0.0]))
    assert both == pytest.approx([spread, 0.011316], abs=1e-6)
    # 2 hosts: no prediction, and why
    c = hosts.combine([0.01, 0.03], [1e-4, 1e-4], pairs=[10, 10])
    assert math.isnan(c.predict_low) and math.isnan(c.predict_high)
    assert c.predict_note.startswith("no prediction interval: 2 hosts combined, and a prediction needs 3")
    assert math.isnan(float(hosts.prediction_half_width([0.01, 0.03], [1e-4, 1e-4], 0.0)))


def test_tau2s_interval_is_the_q_profile_with_each_hosts_variance_redrawn_from_its_pairs():
    """tau²'s 95% interval inverts the bootstrap test of tau² = t (hosts.tau2_accepts) on one set of
    draws: its ends are where the test changes; with pairs so many that each host's variance is
    known, it is the Q-profile of chi² on k - 1 degrees of freedom (Viechtbauer 2007) within the
    error of 10,000 draws (the 2.5% quantile of chi² on 4 df within 3.4%, one standard
    error); hosts closer than their noise give [0, 0]; nothing where tau² is not
    estimable."""
    from scipy import optimize, stats as sps

    eff = np.array([0.0096, -0.0049, 0.0177, 0.0043, 0.0097])
    var = np.array([2e-5, 1e-5, 3e-5, 2e-5, 1e-5])
    n = np.array([6, 10, 30, 8, 12])
    low, high = hosts.tau2_interval(eff, var, n)
    assert 0 <= low < hosts.heterogeneity(eff, var).tau2 < high
    assert hosts.tau2_interval(eff, var, n) == (low, high), "seeded: the same interval on every reading"
    z, chi = hosts.tau2_draws(np.random.default_rng(0), n)
    if low > 0:
        assert hosts.tau2_accepts(eff, var, low * 1.01, z, chi) and not hosts.tau2_accepts(eff, var, low * 0.99, z, chi)
    else:
        assert hosts.tau2_accepts(eff, var, 0.0, z, chi)
    assert hosts.tau2_accepts(eff, var, high * 0.99, z, chi) and not hosts.tau2_accepts(eff, var, high * 1.01, z, chi)

    def q(t):  # Cochran's generalised Q by hand
        w = 1 / (var + t)
        return (w * (eff - (w * eff).sum() / w.sum()) ** 2).sum()

    chi2_low, chi2_high = sps.chi2.ppf([0.025, 0.975], 4)
    profile_high = optimize.brentq(lambda t: q(t) - chi2_low, 0, 1)
    profile_low = optimize.brentq(lambda t: q(t) - chi2_high, 0, 1) if q(0) > chi2_high else 0.0
    known = hosts.tau2_interval(eff, var, np.full(5, 10 ** 7))
    assert known[0] == pytest.approx(profile_low, rel=0.12, abs=1e-6) and known[1] == pytest.approx(profile_high, rel=0.12)
    # hosts that agree more closely than their own noise: Q(0) below the draws' 2.5% quantile
    assert hosts.tau2_interval([0.01, 0.0101, 0.0099], [1e-4, 1e-4, 1e-4], [10, 10, 10]) == (0.0, 0.0)
    for bad in (dict(variances=[0.0, 1e-4, 1e-4]), dict(pairs=[1, 10, 10])):
        args = {"effects": [0.01, 0.02, 0.04], "variances": [1e-4, 1e-4, 1e-4], "pairs": [10, 10, 10], **bad}
        assert all(math.isnan(x) for x in hosts.tau2_interval(**args))
    c = hosts.combine(eff, var, pairs=n)
    assert (c.tau2_low, c.tau2_high) == (low, high) and c.tau_low == pytest.approx(math.sqrt(low))
    assert math.isnan(hosts.combine(eff, var).tau2_high), "without pairs no interval"


def test_the_combined_table_gives_a_new_machines_ratio_from_3_hosts_and_taus_interval(tmp_path):
    """across_hosts: `predict_low`/`predict_high` (95%, the ratio a machine not measured would have)
    around the combined ratio, wider than its interval, from 3 hosts; with 2, NaN and why; tau's 95%
    interval beside tau."""
    dirs = [take(tmp_path / name, 1.0, rust, seed=i, cpu_model=f"CPU {name}")
            for i, (name, rust) in enumerate((("a", 2.0), ("b", 1.96), ("c", 2.05)))]
    three = hosts.across_hosts(store_hosts.load_hosts(dirs))
    assert (three["hosts"] == 3).all() and (three["predict_level"] == 0.95).all() and (three["predict_note"] == "").all()
    assert (three["predict_low"] < three["ratio_ci_low"]).all() and (three["ratio_ci_high"] < three["predict_high"]).all()
    assert (three["tau_ci_low"] <= three["tau_ci_high"]).all() and (three["tau_ci_high"] > 0).all()
    two = hosts.across_hosts(store_hosts.load_hosts(dirs[:2]))
    assert two["predict_low"].isna().all() and two["predict_high"].isna().all()
    assert two["predict_note"].str.startswith("no prediction interval: 2 hosts combined").all()
    assert two["tau_ci_high"].notna().all()


def test_the_combined_table_for_reading_shows_taus_interval_and_a_new_machines_ratio_from_3_hosts(tmp_path):
    """The readable combined table and the summary's words carry what across_hosts computes: tau
    [95%] beside tau², and "a machine not measured (95%)" from 3 hosts (blank with 2)."""
    from bench_src.report import tables, units

    dirs = [take(tmp_path / name, 1.0, rust, seed=i, cpu_model=f"CPU {name}")
            for i, (name, rust) in enumerate((("a", 2.0), ("b", 1.96), ("c", 2.05)))]
    three = hosts.across_hosts(store_hosts.load_hosts(dirs))
    shown = tables.hosts.combined(three).frame
    row = three.iloc[0]
    lo, hi = (units.significant(v, 3) for v in (row["predict_low"], row["predict_high"]))
    assert shown["a machine not measured (95%)"].iloc[0] == f"[{lo}, {hi}]"
    tau = shown["tau [95%]"].iloc[0]
    assert tau.endswith("]") and tau.startswith(units.significant(row["tau"], 3) if row["tau"] > 0 else "0")
    words = tables.hosts.heterogeneity_text(row)
    assert f"tau {tau} (95%)" in words and f"a machine not measured: Go/Rust [{lo}, {hi}] (95% prediction)" in words
    assert "95% prediction interval, from 3 hosts" in tables.hosts.combined(three).caption
    two = tables.hosts.combined(hosts.across_hosts(store_hosts.load_hosts(dirs[:2]))).frame
    assert (two["a machine not measured (95%)"] == "").all() and two["tau [95%]"].str.endswith("]").all()
