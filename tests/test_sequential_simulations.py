"""Simulations of the sequential rule (bench_src.analysis.sequential on synthetic runs of
bench_src.analysis.simulate): its error rate over the looks, coverage at stop, the samples it
saves, and where it sends the next blocks.  Every simulation is seeded; the number of runs is given
beside each.  These are the longest simulations: collected before tests/test_simulations.py, they
start first when `make test` spreads the simulations over the CPUs (pytest -n auto), so that no
long study is left to run alone at the end."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from bench_src.analysis import compare, paired, rules, sequential, simulate

pytestmark = pytest.mark.simulation


def test_sequential_rule_keeps_family_wise_false_positives_below_alpha():
    # 200 runs of a plan whose 12 Go-vs-Rust comparisons are all A/A-like (equal medians, CV 2%, so
    # most stay open past the pilot): the share of runs with any false call, which for an all-equal
    # family is its false discovery rate.  The rule's bound is 5% (alpha split over the looks, BH
    # over the family).  200 runs cannot tell 4% from 5%, so the assertion is a one-sided binomial
    # test at the 1% level of "at most 5%": it fails for a rule whose rate is 10% (expected 20 of
    # 200) with probability about 80%, and for one at 12% with probability above 95%.
    rng = np.random.default_rng(600)
    runs = 200
    r = simulate.sequential_study(runs, rng, dict.fromkeys(simulate.SEQUENTIAL_NS, 1.0), simulate.Conditions(cv=0.02))
    assert r["past_pilot"] > 0, "the simulation must go past the pilot to test the looks"
    false_runs = round(r["fwer"] * runs)
    assert binomtest(false_runs, runs, rules.ALPHA, alternative="greater").pvalue > 0.01, r


def test_sequential_rule_covers_and_saves_samples_on_a_mixed_run():
    # 80 runs of a plan whose 12 comparisons are clearly different (x1.3, x0.8), equal, or open
    # (1.5% apart at CV 1%): 960 intervals (standard error 0.7 points), and the samples each run took
    rng = np.random.default_rng(700)
    r = simulate.sequential_study(80, rng, simulate.MIXED, simulate.Conditions(cv=0.01))
    # every interval is at least a 95% one (the family's level, split over the looks): coverage >= 95%
    assert r["coverage"] >= 0.95, r
    assert r["wrong"] == 0, r
    assert r["mean_samples"] < 0.75 * r["budget"], r


def test_a_large_family_decides_clear_differences_at_the_pilot():
    # 72 comparisons at the pilot of a sequential design with looks at 6, 13 and 20 pairs: every
    # Go/Rust ratio is 1.3 with CV 1%; Student's t decides at 6 pairs, below the floor of any
    # exact test (whose interval at its floor it never undercuts)
    rng = np.random.default_rng(900)
    df = simulate.frame(simulate.go_rust_cells([1.3] * 72), 6, rng, simulate.Conditions(cv=0.01))
    planned = compare.Design((6, 13, 20), rules.look_spending(3), (("go_vs_rust", 72),))
    t = compare.compare(df, design=planned)
    assert len(t) == 72 and (t["verdict_kind"] == "b").all() and (t["test"] == paired.RANK_THEN_T).all()
    assert (t["looks"] == 1).all()


ARTICLE_LOOKS = simulate.sequential_plan(samples=6, max_samples=20, looks=3)


@pytest.mark.parametrize("seed, cond", [(610, simulate.Conditions(cv=0.02)),
                                        (611, simulate.Conditions("bimodal", 0.01))],
                         ids=["lognormal CV 2%", "bimodal CV 1%"])
def test_sequential_rule_keeps_its_error_rate_on_the_articles_looks(seed, cond):
    # The article's shape: looks at 6, 13 and 20 pairs.  All A/A-like (equal medians, CV 2%, and
    # bimodal with narrow modes): 120 runs each, one-sided binomial test of "at most 5%" at the 1%
    # level
    runs = 120
    r = simulate.sequential_study(runs, np.random.default_rng(seed), dict.fromkeys(simulate.SEQUENTIAL_NS, 1.0),
                                  cond, plan=ARTICLE_LOOKS)
    assert r["past_pilot"] > 0
    assert binomtest(round(r["fwer"] * runs), runs, rules.ALPHA, alternative="greater").pvalue > 0.01, r


def test_sequential_rule_decides_a_mixed_run_on_the_articles_looks():
    # The same looks on a mixed run: the clear differences are called, the intervals cover
    r = simulate.sequential_study(60, np.random.default_rng(710), simulate.MIXED, simulate.Conditions(cv=0.01),
                                  plan=ARTICLE_LOOKS)
    assert r["wrong"] == 0 and r["coverage"] >= 0.93, r
    assert r["mean_samples"] < 0.8 * r["budget"], r


def test_the_next_blocks_go_to_the_group_that_narrows_most_per_second_up_to_its_next_look():
    a, b, c, d = (sequential.CellRef("sleep", lang, "v", n, 2, "", ()) for n in (1, 2) for lang in ("go", "rust"))
    groups = [{a, b}, {c, d}]
    comps = [("go_vs_rust", a, b), ("go_vs_rust", c, d)]
    design = compare.Design((6, 10, 13, 16, 20), rules.look_spending(5))
    found = sequential.Look(dict.fromkeys(comps, "open"), {comps[0]: 0.05, comps[1]: 0.20},
                            {comps[0]: 6, comps[1]: 11}, {})
    # the second group is wider, but further along: 2 blocks to 13 pairs against 4 to 10 for the first
    assert sequential.next_step(groups, found, design, dict.fromkeys((a, b, c, d), 1.0)) == (1, 2)
    cheap = sequential.next_step(groups, found, design, {a: 0.001, b: 0.001, c: 1.0, d: 1.0})
    assert cheap == (0, 4), "per second of machine time, the cheap group first"
    done = sequential.Look(dict.fromkeys(comps, "open"), {}, {comps[0]: 20, comps[1]: 20}, {})
    assert sequential.next_step(groups, done, design, {}) is None, "every open comparison at the last look"


def test_the_late_looks_continue_the_ratio_past_the_budget_each_with_its_share_of_alpha():
    from bench_src.profiles import PROFILES

    article = rules.look_counts(6, PROFILES["article"].max_samples, PROFILES["article"].looks)
    assert article[-1] == 600
    assert rules.late_counts(article, PROFILES["article"].late_looks) == (912, 1386, 2107, 3202, 4867)
    design = sequential.design_of(simulate.sequential_plan(samples=6, max_samples=20, looks=3, late_looks=2))
    assert design.looks == (6, 11, 20, 37, 67) and design.late_from == 3 and design.budget == 20
    assert design.spending == pytest.approx((0.5, 0.125, 0.125, 0.125, 0.125)) and sum(design.spending) == pytest.approx(1)
    assert compare._design(pd.DataFrame(), design.to_dict()) == design, "the design a frame carries keeps its late looks"
    none = sequential.design_of(simulate.sequential_plan(samples=6, max_samples=20, looks=3))
    assert (none.looks, none.late_from, none.budget) == ((6, 11, 20), None, 20)


def test_a_group_takes_a_late_look_only_where_its_blocks_cost_at_most_a_minute():
    a, b, c, d = (sequential.CellRef("sleep", lang, "v", n, 2, "", ()) for n in (1, 2) for lang in ("go", "rust"))
    groups = [{a, b}, {c, d}]
    comps = [("go_vs_rust", a, b), ("go_vs_rust", c, d)]
    design = compare.Design((6, 10, 20, 40), rules.look_spending(4), (), late_from=3)
    at_budget = sequential.Look(dict.fromkeys(comps, "open"), {comps[0]: 0.05, comps[1]: 0.20},
                                {comps[0]: 20, comps[1]: 20}, {})
    given = dict.fromkeys((a, b, c, d), 20)
    # 20 blocks to the late look at 40 pairs: 0.04 s for the first group, 20 x 3.2 s = 64 s for the second
    cheap = {a: 0.001, b: 0.001, c: 1.6, d: 1.6}
    assert sequential.next_step(groups, at_budget, design, cheap, given) == (0, 20)
    assert sequential.next_step([{c, d}], at_budget, design, cheap, given) is None, "past the budget, 64 s > 60 s"
    within = {a: 0.001, b: 0.001, c: 1.5, d: 1.5}  # 20 x 3 s = 60 s
    assert sequential.next_step([{c, d}], at_budget, design, within, given) == (0, 20)
    # below the budget the cost does not bind: 4 blocks to 10 pairs at 1,000 s a sample
    pilot = sequential.Look(dict.fromkeys(comps, "open"), {comps[1]: 0.2}, {comps[0]: 20, comps[1]: 6}, {})
    assert sequential.next_step([{c, d}], pilot, design, {c: 1000.0, d: 1000.0}, dict.fromkeys((c, d), 6)) == (0, 4)
    # cells given the budget of blocks whose samples made 15 pairs: the 5 blocks to 20 pairs are
    # past the budget of blocks, so they too are taken only where they cost at most a minute
    short = sequential.Look(dict.fromkeys(comps, "open"), {comps[1]: 0.2}, {comps[0]: 20, comps[1]: 15}, {})
    assert sequential.next_step([{c, d}], short, design, {c: 10.0, d: 10.0}, given) is None, "5 x 20 s = 100 s"
    assert sequential.next_step([{c, d}], short, design, cheap, given) == (0, 5), "5 x 3.2 s = 16 s"


@pytest.mark.parametrize("seconds, past, runs", [(0.005, True, 60), (2.0, False, 5)], ids=["cheap cells", "dear cells"])
def test_the_late_looks_keep_the_error_rate_and_go_past_the_budget_only_for_cheap_cells(seconds, past, runs):
    # All-equal runs at CV 5% (per-block log ratios of sd 7%: open at 20 pairs, where the MDE is
    # about 6%) with looks at 6, 11, 20 and late looks at 37 and 67: with samples of 5 ms the open
    # comparisons take the late looks (710 of 720 did, 55.6 samples a cell on average, 2 runs of 60
    # with a false call), with samples of 2 s (37 - 20 = 17 blocks x 4 s = 68 s) none does.
    # One-sided binomial test at the 1% level of "at most 5%" of runs with a false call (60 runs)
    plan = simulate.sequential_plan(samples=6, max_samples=20, looks=3, late_looks=2)
    r = simulate.sequential_study(runs, np.random.default_rng(4867), dict.fromkeys(simulate.SEQUENTIAL_NS, 1.0),
                                  simulate.Conditions(cv=0.05), plan=plan, seconds=seconds)
    assert (r["past_budget"] > 0) is past, r
    assert r["coverage"] >= 0.93, r
    assert binomtest(round(r["fwer"] * runs), runs, rules.ALPHA, alternative="greater").pvalue > 0.01, r


def test_what_a_look_decides_the_final_tables_decide_too():
    # The rule's looks and the final tables use the same tests at the same shares of alpha: a
    # comparison the pilot's look called (or found equivalent) is called (equivalent) in the final
    # tables of the run, whatever the later looks of the other comparisons did
    plan = simulate.sequential_plan(samples=6, max_samples=20, looks=5)
    truth = {n: r for n, r in zip(simulate.SEQUENTIAL_NS, [1.04, 1.0, 1.06, 0.97, 1.0, 1.05] * 2)}
    design = sequential.design_of(plan)
    for seed in range(3):
        df = simulate.sequential_run(plan, {c.id: (truth[c.n] if c.lang == "go" else 1.0) for c in plan.cells()},
                                     np.random.default_rng([seed, 40]), simulate.Conditions(cv=0.02))
        comps = sequential.plan_comparisons(plan)
        pilot = sequential.look(df[df["block"] < plan.samples], comps, design, {}, k=0)
        final = compare.compare(df, design=design).set_index("n")
        for (_, a, _), state in pilot.per_metric["elapsed_s"].items():
            kind = final.loc[a.n, "verdict_kind"]
            if state == "difference":
                assert kind in ("a", "b"), (seed, a.n, kind)
            if state == "equivalent":
                assert kind in ("equivalent", "a", "b") and bool(final.loc[a.n, "ratio_ci_low"] >= 0.98), (seed, a.n)


def test_a_look_that_keeps_its_tests_across_looks_decides_as_one_that_recomputes_them():
    # the rule keeps each comparison's test for the values it was made on (look's memo): a look
    # between two steps finds most comparisons unchanged.  Looks at every boundary of a run, with
    # and without the memo, find the same; the memo's tests are used again, not made again
    plan = simulate.sequential_plan(samples=6, max_samples=20, looks=5)
    truth = {n: r for n, r in zip(simulate.SEQUENTIAL_NS, [1.04, 1.0, 1.06, 0.97, 1.0, 1.05] * 2)}
    df = simulate.sequential_run(plan, {c.id: (truth[c.n] if c.lang == "go" else 1.0) for c in plan.cells()},
                                 np.random.default_rng(41), simulate.Conditions(cv=0.03))
    design, comps = sequential.design_of(plan), sequential.plan_comparisons(plan)
    memo: dict = {}
    last = int(df["block"].max()) + 1  # the extra blocks are numbered on from the pilot's, group after group
    assert last > 20, "the run went past its pilot"
    for boundary in (6, 6, last // 4, last // 2, last, last):
        part = df[df["block"] < boundary]
        kept, fresh = sequential.look(part, comps, design, {}, memo=memo), sequential.look(part, comps, design, {})
        assert (kept.state, kept.widths, kept.pairs, kept.per_metric) == \
               (fresh.state, fresh.widths, fresh.pairs, fresh.per_metric), boundary
    entries = len(memo)
    sequential.look(df.sample(frac=1.0, random_state=0), comps, design, {}, memo=memo)
    assert len(memo) == entries, "the same values again (in another row order): every test taken from the memo"
    # a Location hands out what it computed once, read-only, equal to computing it afresh
    d = np.log(np.random.default_rng(3).lognormal(0.01, 0.02, 9))
    loc = paired.Location.of(d, 0.05 / 30)
    low, high = loc.interval(0.01)
    assert loc.interval(0.01)[0] is low and np.allclose((low, high), paired.Location.of(d, 0.05 / 30).interval(0.01))
    assert loc.p_value() is loc.p_value()
    for bound in (low, high):
        if isinstance(bound, np.ndarray):
            with pytest.raises(ValueError):
                bound[...] = 0.0


def test_groups_take_their_looks_one_after_another_and_a_resumed_run_repeats_them():
    # the sequential rule on a plan whose cells differ in cost: the cheap open comparisons reach
    # their later looks before the expensive ones get a block
    plan = simulate.sequential_plan(samples=6, max_samples=20, looks=5)
    rng = np.random.default_rng(4)
    truth = dict.fromkeys(simulate.SEQUENTIAL_NS, 1.0)
    df = simulate.sequential_run(plan, {c.id: truth[c.n] for c in plan.cells()}, rng, simulate.Conditions(cv=0.03))
    per_cell = df.groupby("n").size() / 2
    assert per_cell.max() > plan.samples, "open comparisons got more blocks"
    assert (per_cell.isin(rules.look_counts(6, 20, 5))).all(), "every cell stops at a look"
    assert rules.look_counts(6, 20, 5) == (6, 8, 11, 15, 20), "looks in geometric progression"


def test_expected_samples_from_a_pilot():
    plan = simulate.sequential_plan()
    ns = simulate.SEQUENTIAL_NS
    no_pilot = sequential.expected_samples(plan)
    assert set(no_pilot.values()) == {float(plan.samples)}, "without a pilot: the pilot (the rest is not projected)"
    rng = np.random.default_rng(800)
    truth = {n: (1.0 if n == 40 else r) for n, r in simulate.MIXED.items()}
    df = simulate.frame({simulate.SimCell(lang, n): (truth[n] if lang == "go" else 1.0) for n in ns
                         for lang in ("go", "rust")}, 10, rng, simulate.Conditions(cv=0.005))
    wide = df["n"] == 40  # equal medians but a spread of 5%: open at the pilot, and for long
    df.loc[wide, "elapsed_s"] *= np.exp(0.05 * rng.standard_normal(int(wide.sum())))
    cells = {(c.lang, c.n): c for c in plan.cells()}
    records = [{"phase": "measured", "block": int(r.block), "cell_id": cells[(r.lang, r.n)].id, "workload": "sleep",
                "lang": r.lang, "variant": r.variant, "n": int(r.n), "threads_requested": simulate.SIM_THREADS, "arm": "",
                "params": '{"kernel": "xorshift", "work": "10"}', "status": "ok", "checksum": "0", "equiv_key": "k",
                "elapsed_ns": int(r.elapsed_s * 1e9), "wall_ns": int(r.elapsed_s * 1e9), "seq": int(r.seq)}
               for r in df.itertuples()]
    expected = sequential.expected_samples(plan, records)
    by_n = {n: expected[cells[("go", n)].id] for n in ns}
    assert by_n[10] == by_n[50] == by_n[20] == plan.samples, "clear differences and equal cells stop at the pilot"
    assert by_n[40] > plan.samples + 10, by_n[40]
    assert sequential.expected_duration(plan, {c.id: 2.0 for c in plan.cells()}, records) == pytest.approx(
        2.0 * sum(expected.values()))
    # a cell whose every pilot sample failed closes its comparisons (the rule's look says "no data");
    # a cell the records do not hold at all (its pilot not taken yet) counts at the budget
    failed = [dict(r, status="failed", reason="exit 1") if r["cell_id"] == cells[("go", 40)].id else r
              for r in records if r["cell_id"] != cells[("go", 50)].id]
    expected = sequential.expected_samples(plan, failed)
    assert expected[cells[("go", 40)].id] == expected[cells[("rust", 40)].id] == plan.samples, \
        "a comparison without valid samples takes no more blocks"
    assert expected[cells[("go", 50)].id] == expected[cells[("rust", 50)].id] == plan.max_samples


def test_the_projection_continues_the_pilots_standard_deviation():
    # six per-block log ratios 5% apart: at a spread of 2% the first look after the pilot decides;
    # the same ratios spread five times wider take longer, by the square of the spread
    design = sequential.Design.from_plan(simulate.sequential_plan(samples=6, max_samples=100, looks=8))
    rng = np.random.default_rng(3)
    unit = np.array([0.3, -0.5, 0.1, 0.8, -0.2, -0.4])
    calm, wide = np.log(1.05) + 0.02 * unit, np.log(1.05) + 0.10 * unit
    assert sequential.pilot_spread(calm) == pytest.approx(0.02 * np.std(unit, ddof=1), rel=1e-12)
    assert sequential.pilot_spread(np.array([0.1])) == 0.0
    # one block far out counts whole: the median absolute deviation (0.01 here) no longer stands in
    wild = np.array([0.01, 0.02, 0.03, 0.02, 0.01, 1.0])
    assert sequential.pilot_spread(wild) == pytest.approx(np.std(wild, ddof=1), rel=1e-12) and \
        sequential.pilot_spread(wild) > 0.4
    assert sequential._projected_stop(calm, design, 0.05 / 30, rng, 500).mean() == design.looks[1]
    assert sequential._projected_stop(wide, design, 0.05 / 30, rng, 500).mean() > 3 * design.looks[1]


def test_a_cell_whose_samples_stop_counting_stops_at_the_budget_of_blocks():
    # A cell whose server is gone in a resumed session is skipped sample after sample: its blocks
    # bring no pairs.  The rule counts the blocks it gave each cell, not the pairs they made, so
    # the run ends once that cell was given the budget (before, it took block after block of skips
    # without end: one run reached block 15,155)
    plan = simulate.sequential_plan(samples=6, max_samples=20, looks=5)
    gone = next(c for c in plan.cells() if c.n == 40 and c.lang == "go")
    given: dict[str, int] = {}
    rows: list[dict] = []
    rng = np.random.default_rng(7)

    class Store:
        def frame_before(self, block):
            df = pd.DataFrame(rows)
            return df[df["block"] < block] if len(df) else df

    def take(seq, slot, alone=False):
        c = slot.cell
        given[c.id] = given.get(c.id, 0) + 1
        assert given[c.id] <= plan.max_samples, f"{c.id} was given block {given[c.id]} of a budget of 20"
        if c.id == gone.id and slot.block >= plan.samples:
            return  # skipped: no valid sample, no pair
        value = float(rng.lognormal(0, 0.05 if c.n == 40 else 0.002))  # only N = 40 stays open
        rows.append({"run_id": "sim", "seq": seq, "phase": "measured", "block": slot.block, "pos": slot.pos,
                     "cell_id": c.id, "workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
                     "threads_requested": c.threads, "arm": c.arm, "params": ",".join(f"{k}={v}" for k, v in c.params),
                     **{f"p_{k}": v for k, v in c.params}, "valid": True, "elapsed_s": value, "wall_s": value})

    class Bar:
        def expect(self, cells):
            pass

    for seq, slot in enumerate(plan.schedule()):
        if slot.phase == "measured":
            take(seq, slot)
    lines: list[str] = []
    sequential.run_blocks(plan, Store(), take, set(), Bar(), lines.append)
    assert given[gone.id] == plan.max_samples, "the open comparison was given its whole budget, and no more"
    assert "1 of them with fewer pairs" in lines[-1], lines[-1]


def test_a_look_reads_only_the_blocks_before_its_boundary():
    """A look at boundary 6 must not see block 6, or a later sample could change an earlier look."""
    import report_data

    recs = report_data.records(samples=8, warmup=0)
    assert {r["block"] for r in recs} == set(range(8))
    assert set(sequential._frame(recs, 6)["block"]) == set(range(6))


def test_a_look_is_reached_when_the_pairs_equal_its_count():
    """A comparison with exactly a look's pairs takes that look; a strict count would skip it."""
    from types import SimpleNamespace

    design = SimpleNamespace(looks=(6, 10, 14))
    assert sequential.reached_look(design, 10) == 1
    assert sequential.reached_look(design, 9) == 0 and sequential.reached_look(design, 5) == -1


def test_the_rule_does_not_fish_for_the_rare_samples_whose_memory_counts():
    # Go's 1,000,000 sleeping idle tasks were all alive at once in 1 of the 6 pilot samples of an
    # article run (6 of 73 in all): with that one pair of peak RSS the comparison stayed open, and the
    # rule gave its four cells of 4-7 s 67 more blocks, 21 of the run's 73 minutes, for samples whose
    # memory counts, a selection of the cell's samples.  Now a comparison whose samples ran but whose
    # values mostly do not count is left to the pilot for that metric ("no data" at the look, "not
    # tested" in its table); one short of pairs because samples failed still gets the blocks
    import json

    plan = simulate.sequential_plan(samples=6, max_samples=40, looks=4)
    design = sequential.design_of(plan)
    rng = np.random.default_rng(11)
    fishing, failing = simulate.SEQUENTIAL_NS[0], simulate.SEQUENTIAL_NS[1]
    records = []
    for c in plan.cells():
        for block in range(plan.samples):
            value = (2.0 if c.lang == "go" else 1.0) * float(rng.lognormal(0, 0.01))  # times clearly apart
            alive = c.n if not (c.n == fishing and c.lang == "go" and block != 2) else c.n - 1
            failed = c.n == failing and c.lang == "go" and block in (2, 4)
            records.append({"phase": "measured", "block": block, "seq": len(records), "cell_id": c.id,
                            "workload": c.workload, "lang": c.lang, "variant": c.variant, "n": c.n,
                            "threads_requested": c.threads, "arm": c.arm, "params": json.dumps(dict(c.params)),
                            "status": "failed" if failed else "ok", "reason": "exit 1" if failed else "",
                            "checksum": "0", "equiv_key": "k", "elapsed_ns": int(value * 1e9),
                            "wall_ns": int(value * 1e9), "peak_rss_bytes": int(1e8 * float(rng.lognormal(0, 0.2))),
                            "extra": json.dumps({"alive_at_spawn": alive})})
    comps = sequential.plan_comparisons(plan)
    look = sequential.look(sequential._frame(records, plan.samples), comps, design, {}, k=0)
    of = {c[1].n: c for c in comps if c[1].lang != c[2].lang}
    memory = look.per_metric["peak_rss_mib"]
    assert look.pairs[of[fishing]] == plan.samples, "its pairs are those of the metric the rule still reads"
    assert memory[of[fishing]] == "no data" and look.state[of[fishing]] == "difference", memory[of[fishing]]
    # samples that failed: too few pairs in every metric, so the cells take the blocks that make it testable
    assert look.per_metric["elapsed_s"][of[failing]] == "open" and look.state[of[failing]] == "open"
    expected = sequential.expected_samples(plan, records)
    fished = [c.id for c in plan.cells() if c.n == fishing]
    assert [expected[cid] for cid in fished] == [plan.samples] * 2, "no more blocks for those cells"
    # the old rule: one pair that counts, open, the widest interval of all (infinite), sampled first
    assert sequential._fishing(1, 6) and not sequential._fishing(4, 4) and not sequential._fishing(6, 6)
