"""Earlier runs as the duration estimate reads them (bench_src/store/history.py): seconds per
sample by cell, and an earlier run's pilot, each read as that run's analysis keeps its records."""
import json

from bench_src.plan import estimate as est
from bench_src.plan import make_plan
from bench_src.store import history as hist


def plan(**kw):
    base = dict(workloads=["sleep"], ns=[10, 100], samples=3, warmup=1, params={"sleep": {"work": 1000}}, smoke=True)
    base.update(kw)
    return make_plan("quick", **base)


def full(rec: dict) -> dict:
    """A sample record with every key a line needs (records.REQUIRED) around the given ones."""
    return {"seq": 0, "phase": "measured", "block": 0, "workload": "sleep", "lang": "go", "variant": "waitgroup",
            "n": 10, **rec}


def write(directory, rows, extra_lines=()):
    directory.mkdir()
    lines = [json.dumps(full(r)) for r in rows] + list(extra_lines)
    (directory / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def test_history_reads_earlier_results_directories(tmp_path):
    p = plan()
    cells = p.cells()
    for name, secs in (("a", [1.0, 3.0]), ("b", [2.0])):
        rows = [{"sample_id": f"s{i}", "cell_id": cells[0].id, "status": "ok", "harness_s": s, "block": i}
                for i, s in enumerate(secs)]
        rows += [{"sample_id": "k", "cell_id": cells[1].id, "status": "skipped", "harness_s": 99.0, "block": 0},
                 {"sample_id": "f", "cell_id": cells[1].id, "status": "failed", "harness_s": 0.01, "block": 1},
                 {"sample_id": "w", "cell_id": cells[1].id, "status": "ok", "wall_ns": 4_000_000_000, "block": 2}]
        write(tmp_path / name, rows, ["{not json", json.dumps({"cell_id": cells[1].id, "status": "ok", "harness_s": 7.0}),
                                      json.dumps(full({"sample_id": "t", "cell_id": cells[1].id, "status": "ok",
                                                       "harness_s": 8.0, "block": [3]})),
                                      json.dumps(full({"sample_id": "u", "cell_id": cells[1].id, "status": "ok",
                                                       "harness_s": 9.0, "block": 4, "attempt": 7}))])
    seconds, sources = hist.history(tmp_path)
    assert seconds[cells[0].id] == 2.0 and seconds[cells[1].id] == 4.0, \
        "ok samples only; a line that is no sample record (not JSON, a key missing or of the wrong type) is left out"
    assert sources[cells[0].id] == {str(tmp_path / "a"), str(tmp_path / "b")}
    used = sorted({d for c in cells for d in sources.get(c.id, ())})
    e = est.estimate(p, seconds, sources=used)
    assert e.cells_from_history == 2 and len(e.sources) == 2
    assert "2 of 4 cells timed from earlier runs (2 results directories" in e.basis
    assert hist.history(tmp_path, exclude=tmp_path / "a")[0][cells[0].id] == 2.0


def test_before_its_pilot_a_run_expects_what_an_earlier_run_of_the_same_cells_decided(tmp_path):
    p = plan(samples=6, max_samples=12, smoke=False)
    cells = p.cells()

    def rows(cell_ids, blocks):
        out = [{"sample_id": f"{cid}#{b}", "cell_id": cid, "phase": "measured", "block": b, "status": "ok"}
               for cid in cell_ids for b in blocks]
        out.append({"sample_id": "w", "cell_id": cell_ids[0], "phase": "warmup", "block": 0, "status": "ok"})
        return out

    write(tmp_path / "partial", rows([cells[0].id], range(6)))
    write(tmp_path / "short", rows([c.id for c in cells], range(3)))
    full = write(tmp_path / "full", rows([c.id for c in cells], range(9)))
    write(tmp_path / "other", rows(["sleep|go|waitgroup|n=5|t=2|x"], range(6)))
    records, where = hist.earlier_pilot(p, tmp_path)
    assert where == str(full), "the directory whose pilot holds every cell, with most samples"
    assert {r["block"] for r in records} == set(range(6)), "only its pilot's blocks, measured"
    assert all(r["phase"] == "measured" for r in records)
    assert hist.earlier_pilot(p, tmp_path, exclude=full)[1] == str(tmp_path / "short"), \
        "a shorter pilot of every cell before one of some cells"
    (tmp_path / "short" / "samples.jsonl").unlink()
    assert hist.earlier_pilot(p, tmp_path, exclude=full) == ([], None), \
        "a directory missing some of the plan's cells is no guide"
    assert hist.earlier_pilot(p, tmp_path / "nothing") == ([], None)


def test_an_earlier_pilot_holds_each_block_once_as_its_analysis_keeps_it(tmp_path):
    """A session interrupted in block 5 left two of its samples; the next session took block 5
    again whole.  The earlier pilot is what that run's analysis keeps: each sample once, of the
    complete attempt, not the abandoned samples beside the new ones (which pair with them and give
    the estimate's sequential rule pairs that run never had); a skipped sample taken again counts
    by its last record."""
    p = plan(samples=6, max_samples=12, smoke=False)
    ids = [c.id for c in p.cells()]

    def rec(cid, block, attempt, status="ok", value=1.0):
        return {"sample_id": f"{cid}#{block}", "cell_id": cid, "phase": "measured", "block": block,
                "attempt": attempt, "status": status, "elapsed_s": value}

    rows = [rec(cid, b, "session:1") for b in range(5) for cid in ids]
    rows += [rec(ids[0], 5, "session:1", value=9.0), rec(ids[1], 5, "session:1", value=9.0)]
    rows += [rec(cid, 5, "session:2", status="skipped" if cid == ids[3] else "ok") for cid in ids]
    rows += [rec(ids[3], 5, "session:2")]
    write(tmp_path / "resumed", rows)
    records, where = hist.earlier_pilot(p, tmp_path)
    assert where == str(tmp_path / "resumed")
    assert len(records) == 6 * len(ids) == len({r["sample_id"] for r in records}), "each sample once"
    assert not [r for r in records if r["block"] == 5 and r["attempt"] != "session:2"], "the complete attempt"
    assert all(r["status"] == "ok" for r in records), "a sample taken again: its last record"
