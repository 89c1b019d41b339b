import json
import re

import pytest

from bench_src import paths
from bench_src.catalogue import WORKLOADS
from bench_src.plan import make_plan, plan_from_dict
from bench_src.values import from_papermill
from bench_src.profiles import PROFILES


def test_quick_profile_defaults_are_valid():
    plan = make_plan("quick")
    assert set(plan.workloads) == set(WORKLOADS)
    cells = plan.cells()
    assert {c.lang for c in cells} == {"go", "rust"}
    # default variants only
    assert {(c.lang, c.variant) for c in cells if c.workload == "sleep"} == {("go", "waitgroup"), ("rust", "join-handles")}


@pytest.mark.parametrize("kwargs, words", [
    ({"workloads": ["nosuch"]}, ["'nosuch'", "sleep", "cpu_loops"]),
    ({"languages": ["java"]}, ["'java'", "go, rust"]),
    ({"ns": [10, 0]}, ["0", ">= 1"]),
    ({"ns": [-5]}, ["-5"]),
    ({"ns": ["ten"]}, ["'ten'"]),
    ({"ns": [10_000_000_000]}, ["10000000000", "limit"]),
    ({"samples": 0}, ["samples", "0"]),
    ({"samples": -3}, ["samples", "-3"]),
    ({"warmup": -1}, ["warmup", "-1"]),
    ({"variants": {"sleep": {"go": ["nosuch"]}}}, ["'nosuch'", "waitgroup", "chan-per-task"]),
    ({"variants": {"sleep": {"java": ["x"]}}}, ["'java'"]),
    ({"params": {"sleep": {"nosuch": 1}}}, ["'nosuch'", "kernel", "work"]),
    ({"params": {"sleep": {"kernel": "fast"}}}, ["'fast'", "xorshift", "article"]),
    ({"params": {"sleep": {"work": -1}}}, ["params[sleep][work] = -1", "integer >= 0"]),
    ({"params": {"sleep": {"kernel": "fast"}}}, ["params[sleep][kernel] = 'fast' is not allowed: allowed: xorshift"]),
    ({"workloads": ["sqlite"], "params": {"sqlite": {"driver": "foo"}}},
     ["params[sqlite][driver] = 'foo'", "go mattn, modernc; rust sqlx, rusqlite"]),
    ({"variants": "fastest"}, ["variants: 'fastest' is neither 'default' nor 'all'", "{sleep: {go: [waitgroup]"]),
    ({"params": {"nosuch": {}}}, ["'nosuch'"]),
    ({"timeout_s": 0}, ["timeout_s"]),
    ({"profile": "huge"}, ["'huge'", "quick"]),
])
def test_invalid_parameters_name_the_value_and_the_allowed_ones(kwargs, words):
    with pytest.raises(ValueError) as err:
        make_plan(**kwargs)
    for w in words:
        assert w in str(err.value), (w, str(err.value))


def test_params_grid_and_variants_expand_to_cells():
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], variants="all",
                     params={"sleep": {"kernel": ["xorshift", "article"], "work": [0, 10]}}, smoke=True)
    cells = plan.cells()
    assert len(cells) == 2 * 4 * 2 * 2 * 2  # langs x variants x N x kernel x work
    assert len({c.id for c in cells}) == len(cells)


def test_file_switches_take_yaml_on_off_and_flush_is_rust_only():
    from bench_src.__main__ import plan_parameters
    given = plan_parameters("{params: {files_rw: {digest: [on, off], flush: [on, off]}}}")["params"]
    assert given["files_rw"]["digest"] == [True, False]  # what YAML makes of a bare on/off
    plan = make_plan("quick", workloads=["files_rw"], ns=[10], params=given, smoke=True)
    cells = plan.cells()
    assert {(c.lang, dict(c.params).get("digest"), dict(c.params).get("flush")) for c in cells} == {
        ("go", "on", None), ("go", "off", None),
        ("rust", "on", "on"), ("rust", "on", "off"), ("rust", "off", "on"), ("rust", "off", "off")}
    with pytest.raises(ValueError, match="'yes'.*on, off"):
        make_plan("quick", workloads=["files_read"], ns=[10], params={"files_read": {"digest": "yes"}}, smoke=True)
    with pytest.raises(ValueError, match="'flush'.*allowed: digest, retain"):
        make_plan("quick", workloads=["files_read"], ns=[10], params={"files_read": {"flush": "off"}}, smoke=True)


def test_every_block_holds_every_cell_once_in_a_seeded_order():
    plan = make_plan("quick", samples=4, warmup=2, seed=7, smoke=True)
    cells = plan.cells()
    schedule = plan.schedule()
    assert len(schedule) == len(cells) * 6
    for phase, blocks in (("warmup", 2), ("measured", 4)):
        for b in range(blocks):
            block = [s.cell for s in schedule if s.phase == phase and s.block == b]
            assert sorted(block) == sorted(cells)
    orders = [tuple(s.cell.id for s in schedule if s.phase == "measured" and s.block == b) for b in range(4)]
    assert len(set(orders)) > 1, "blocks must be shuffled independently"
    assert [s.sample_id for s in make_plan("quick", samples=4, warmup=2, seed=7, smoke=True).schedule()] == \
        [s.sample_id for s in schedule]
    assert [s.sample_id for s in make_plan("quick", samples=4, warmup=2, seed=8, smoke=True).schedule()] != \
        [s.sample_id for s in schedule]
    assert schedule[0].phase == "warmup" and schedule[-1].phase == "measured"


def _runs_of(block: list, key) -> list:
    """The keys of a block's cells, one per run of equal keys."""
    runs: list = []
    for slot in block:
        if not runs or runs[-1] != key(slot.cell):
            runs.append(key(slot.cell))
    return runs


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_comparison_pairs_cells_of_one_group(profile):
    """The grouped order keeps the cells of a group together: every pair a family compares must
    lie in one group, or its two samples would still be minutes apart."""
    from bench_src.plan.comparisons import cell_of, plan_comparisons
    plan = make_plan(profile, variants="all", aa=profile == "quick", smoke=True, allow_large=True)
    cells = {cell_of(c): c for c in plan.cells()}
    pairs = [pair for found in plan_comparisons(plan).values() for pair in found]
    assert pairs
    apart = [(a, b) for a, b in pairs if cells[a].group_key() != cells[b].group_key()]
    assert apart == []
    # analysis/cores.py pairs each cell at k cores with the same cell at the fewest
    by_program: dict = {}
    for c in plan.cells():
        by_program.setdefault((c.workload, c.lang, c.variant, c.n, c.params, c.arm), set()).add(c.group_key())
    assert all(len(keys) == 1 for keys in by_program.values())
    if profile == "article-full":
        assert any(len({c.cores for c in plan.cells() if c.group_key() == key}) > 1
                   for key in {c.group_key() for c in plan.cells()}), "the core counts of a cell share its group"


def test_grouped_blocks_run_each_group_together_in_a_random_order():
    plan = make_plan("article", seed=3)
    assert plan.block_order == "grouped"
    schedule = plan.schedule()
    cells = plan.cells()
    groups = {c.group_key() for c in cells}
    firsts, group_orders = [], []
    for b in range(plan.samples):
        block = [s for s in schedule if s.phase == "measured" and s.block == b]
        assert sorted(s.cell for s in block) == sorted(cells)
        runs = _runs_of(block, lambda c: c.group_key())
        assert sorted(runs, key=repr) == sorted(groups, key=repr), "a group split within a block"
        group_orders.append(tuple(runs))
        go, rust = (next(s.pos for s in block if s.cell.workload == "mysql" and s.cell.n == 1000 and s.cell.lang == lang
                         and s.cell.variant == "pool") for lang in ("go", "rust"))
        firsts.append(go < rust)
    assert len(set(group_orders)) == plan.samples, "the groups' order must change from block to block"
    assert set(firsts) == {True, False}, "which of a pair runs first must be left to chance"
    extra = plan.extra_block(7, [c for c in cells if c.workload in ("mysql", "postgres")])
    assert len(_runs_of(extra, lambda c: c.group_key())) == len({c.group_key() for c in cells
                                                                if c.workload in ("mysql", "postgres")})


def test_block_order_shuffled_is_the_order_of_plans_stored_before_it_was_a_choice():
    grouped = make_plan("quick", samples=4, seed=5, smoke=True)
    shuffled = make_plan("quick", samples=4, seed=5, smoke=True, block_order="shuffled")
    stored = shuffled.to_dict()
    assert "block_order" not in stored, "a shuffled plan keeps the digest it had before the order was a choice"
    assert "block_order" in grouped.to_dict() and grouped.digest != shuffled.digest
    assert plan_from_dict(stored).block_order == "shuffled"
    assert plan_from_dict(grouped.to_dict()).schedule() == grouped.schedule()
    block = [s for s in shuffled.schedule() if s.phase == "measured" and s.block == 0]
    assert len(_runs_of(block, lambda c: c.group_key())) > len({c.group_key() for c in shuffled.cells()})
    with pytest.raises(ValueError, match="block_order must be one of grouped, shuffled, got 'random'"):
        make_plan("quick", block_order="random")
    # a meta.json whose order no plan can have is named, not read as the grouped order
    from bench_src.plan.model import stored_plan_problem
    assert stored_plan_problem(grouped.to_dict()) is None and stored_plan_problem(stored) is None
    assert stored_plan_problem({**stored, "block_order": "sideways"}) == \
        "plan.block_order is 'sideways', not one of grouped, shuffled"
    assert stored_plan_problem({**stored, "warmup_scope": "all"}) == "plan.warmup_scope is 'all', not one of cell, program"


def test_equivalence_key_ignores_language_and_variant():
    # one work value: the quick profile runs sleep at two (work=0 and 50000), which are different work
    plan = make_plan("quick", workloads=["sleep"], ns=[10], variants="all", params={"sleep": {"work": 1000}})
    keys = {c.equivalence_key() for c in plan.cells()}
    assert len(keys) == 1 and len(plan.cells()) == 8


def test_every_catalogue_workload_has_a_default_variant_per_language():
    for w in WORKLOADS.values():
        for lang in ("go", "rust"):
            assert w.default_variant(lang) in w.variants[lang]


def test_cli_plan_parameters_inline_or_from_a_file(tmp_path):
    from bench_src.__main__ import plan_parameters
    assert plan_parameters("{ns: [10, 100], samples: 3}") == {"ns": [10, 100], "samples": 3}
    path = tmp_path / "plan.yml"
    path.write_text("workloads: [sqlite]\nns: [1000]\n")
    assert plan_parameters(str(path)) == {"workloads": ["sqlite"], "ns": [1000]}
    (tmp_path / "empty.yml").write_text("")
    assert plan_parameters(str(tmp_path / "empty.yml")) == {}
    (tmp_path / "list.yml").write_text("- 10\n- 100\n")
    with pytest.raises(ValueError, match="expected a mapping"):
        plan_parameters(str(tmp_path / "list.yml"))
    with pytest.raises(ValueError, match="neither a mapping"):
        plan_parameters(str(tmp_path / "missing.yml"))
    # a block mapping given inline is read as YAML, and its syntax error named (not "neither ... nor a file")
    assert plan_parameters("samples: 10\nns: [10]") == {"samples": 10, "ns": [10]}
    with pytest.raises(ValueError, match=r"cannot read it as YAML/JSON: expected ',' or ']'.*line 2"):
        plan_parameters("samples: 10\nns: [10")
    with pytest.raises(ValueError, match="YAML needs a space after each colon"):
        plan_parameters("samples:10")


def test_a_key_without_a_space_after_its_colon_is_named_with_the_cause():
    from bench_src.__main__ import plan_parameters
    with pytest.raises(ValueError, match=r"unknown plan parameter 'samples:10'.*YAML needs a space after each colon"):
        make_plan(**plan_parameters("{samples:10}"))


def test_cli_run_with_a_bad_plan_exits_2_with_one_line(tmp_path, capsys):
    from bench_src.__main__ import main
    assert main(["run", "--plan", str(tmp_path / "missing.yml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --plan") and "\n" not in err
    assert main(["run", "--plan", "{ns: [0]}"]) == 2
    assert "ns" in capsys.readouterr().err


# --- typed validation, before anything is built ------------------------------------------------------
@pytest.mark.parametrize("kwargs, words", [
    ({"ns": [float("inf")]}, ["ns[", "inf", "integer"]),
    ({"ns": [float("nan")]}, ["ns[", "nan"]),
    ({"ns": [10.5]}, ["10.5"]),
    ({"ns": [True]}, ["True"]),
    ({"timeout_s": "abc"}, ["timeout_s", "'abc'", "finite"]),
    ({"timeout_s": [1]}, ["timeout_s", "[1]"]),
    ({"timeout_s": 0.0004}, ["timeout_s", "0.0004", ">= 0.001"]),
    ({"timeout_s": float("inf")}, ["timeout_s", "inf"]),
    ({"cooldown_s": float("inf")}, ["cooldown_s", "inf"]),
    ({"cooldown_s": float("nan")}, ["cooldown_s", "nan"]),
    ({"cooldown_s": -1}, ["cooldown_s", "-1"]),
    ({"sample": 3}, ["unknown plan parameter 'sample'", "samples", "warmup", "allow_large"]),
    ({"samples": 1e9}, ["samples", "<= 10000"]),
    ({"samples": "1e9"}, ["samples", "'1e9'"]),
    ({"samples": 2.5}, ["samples", "2.5"]),
    ({"warmup": 10_000}, ["warmup", "<= 100"]),
    ({"seed": -1}, ["seed", "-1"]),
    ({"threads": "two"}, ["threads", "'two'"]),
    ({"threads": 100_000}, ["threads", "<= 1024"]),
    ({"timeline_ms": float("nan")}, ["timeline_ms", "nan"]),
    ({"timeline_ms": 0.5}, ["timeline_ms", "at least 1 ms"]),
    ({"article_preset": "aa"}, ["article_preset", "'aa'", "true/false"]),
    ({"aa": "maybe"}, ["aa must be a boolean", "'maybe'"]),
    ({"allow_large": "sure"}, ["allow_large", "'sure'"]),
    ({"mem_limit_mb": -5}, ["mem_limit_mb", "-5"]),
    ({"mem_limit_mb": "99999999999999999999"}, ["mem_limit_mb", "'99999999999999999999'", "<= 67108864"]),
    ({"mem_limit_mb": 99_999_999_999}, ["mem_limit_mb", "99999999999", "<= 67108864"]),
    ({"samples": 6, "max_samples": -1}, ["max_samples", "-1", "no sequential rule (so does 0)"]),
    ({"workloads": ["sleep"], "params": {"sleep": {"work": 99999999999999999999}}},
     ["params[sleep][work] = 99999999999999999999", "<= 2147483647"]),
    ({"workloads": ["mysql"], "params": {"mysql": {"pool": [8, 2**31]}}}, ["params[mysql][pool]", "2147483648"]),
    ({"workloads": ["sleep"], "ns": {"cpu_loops": [10]}}, ["ns names workload 'cpu_loops'", "not in this plan"]),
    ({"workloads": ["sleep"], "params": {"cpu_loops": {"u": 3}}}, ["params names workload 'cpu_loops'"]),
    ({"workloads": ["sleep"], "variants": {"cpu_loops": "all"}}, ["variants names workload 'cpu_loops'"]),
    ({"workloads": ["sleep"], "params": {"sleep": {"work": []}}}, ["params[sleep][work] is empty"]),
    ({"workloads": ["mysql"], "dsn": {"mysql": 5}}, ["dsn[mysql]", "URL string", "int"]),
    ({"workloads": ["mysql"], "dsn": "mysql://u:p@h/db"}, ["dsn must be a mapping", "u:***@h"]),
    ({"workloads": ["mysql"], "dsn": {"mysql": "http://u:p@h/db"}}, ["scheme must be mysql"]),
    ({"workloads": ["mysql"], "dsn": {"mysql": "mysql://u:secret@/db"}}, ["needs a host and a database", "***"]),
    ({"workloads": ["mysql"], "dsn": {"mysql": "mysql://u:secret@h:3306"}}, ["needs a host and a database"]),
    ({"workloads": ["mysql"], "dsn": {"mysql": "mysql://u:secret@h:port/db"}}, ["not a URL"]),
    ({"workloads": ["mysql"], "dsn": {"oracle": "x"}}, ["unknown server 'oracle'", "mysql, postgres"]),
    ({"workloads": ["sleep"], "dsn": {"mysql": "mysql://u:p@h/db"}}, ["no mysql workload"]),
    ({"workloads": ["mysql"], "dsn": {"mysql": "env:BENCH_TEST_UNSET_DSN"}}, ["BENCH_TEST_UNSET_DSN", "not set"]),
])
def test_every_parameter_is_typed_and_checked(kwargs, words, monkeypatch):
    monkeypatch.delenv("BENCH_TEST_UNSET_DSN", raising=False)
    with pytest.raises(ValueError) as err:
        make_plan(**kwargs)
    for w in words:
        assert w in str(err.value), (w, str(err.value))
    assert "secret" not in str(err.value), "a DSN's password is never shown"


@pytest.mark.parametrize("text, value", [
    ("false", False), ("False", False), ("0", False), ("no", False), ("off", False), (0, False), (False, False),
    ("true", True), ("True", True), ("1", True), ("yes", True), (1, True), (True, True),
])
def test_booleans_from_papermill_strings(text, value):
    from bench_src import api
    plan = api.plan_from_parameters(workloads="sleep", ns="[10]", article_preset=text, aa=text)
    assert plan.article_preset is value and plan.aa is value
    assert api.parse_bool("progress", text) is value


def test_papermill_string_numbers_are_read_with_their_type():
    from bench_src import api
    plan = api.plan_from_parameters(workloads="sleep", ns="[10]", samples="5", warmup="0", timeout_s="2.5",
                                    cooldown_s="0", threads="1", seed="7", smoke="true")
    assert (plan.samples, plan.warmup, plan.timeout_s, plan.cooldown_s, plan.threads, plan.seed) == (5, 0, 2.5, 0.0, 1, 7)


@pytest.mark.parametrize("kwargs, default", [
    ({"threads": 0}, "the usable CPUs"), ({"threads": "0"}, "the usable CPUs"), ({"threads": -1}, "the usable CPUs"),
    ({"mem_limit_mb": 0}, "80% of RAM"), ({"mem_limit_mb": "0"}, "80% of RAM"), ({"mem_limit_mb": -5}, "80% of RAM"),
    ({"looks": 0, "samples": 8, "max_samples": 20}, "the default (3)"),
    ({"looks": "0", "samples": 8, "max_samples": 20}, "the default (3)"),
    ({"looks": -1, "samples": 8, "max_samples": 20}, "the default (3)"),
    ({"looks": 0}, "the default (3)"),
])
def test_zero_is_no_synonym_for_a_default_and_the_error_names_the_default(kwargs, default):
    """threads, mem_limit_mb and looks have no zero: 0 is refused like a negative value, and the error
    says that None (leaving it out) gives the default."""
    name = next(iter(kwargs))
    with pytest.raises(ValueError) as err:
        make_plan("quick", workloads=["sleep"], ns=[10], smoke=True, **kwargs)
    message = str(err.value)
    assert message.startswith(f"{name} must be an integer >= ") and f"or None for {default}" in message, message
    assert message.endswith(f"got {kwargs[name]!r}"), message


@pytest.mark.parametrize("plan_text", [
    "{workloads: [sleep], ns: [10], samples: 3, samples: 4, smoke: true}",
    '{"workloads": ["sleep"], "ns": [10], "samples": 3, "samples": 4, "smoke": true}',
    "workloads: [sleep]\nns: [10]\nsamples: 3\nsmoke: true\nsamples: 4\n",
])
def test_a_key_given_twice_in_a_plan_is_refused_naming_it(plan_text, tmp_path, capsys):
    from bench_src.__main__ import main
    plan_arg = plan_text
    if not plan_text.startswith("{"):
        (tmp_path / "plan.yml").write_text(plan_text)
        plan_arg = str(tmp_path / "plan.yml")
    assert main(["check", "--results-dir", str(tmp_path / "r"), "--plan", plan_arg]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("error: --plan") and "the key 'samples' is given twice" in err, err


def test_a_key_given_twice_deeper_or_in_a_papermill_string_is_refused_naming_it():
    from bench_src import api
    from bench_src.__main__ import plan_parameters
    with pytest.raises(ValueError, match=r"the key 'work' is given twice \(line 1, column 48\); give it once$"):
        plan_parameters("{workloads: [sleep], params: {sleep: {work: 0, work: 50}}}")
    with pytest.raises(ValueError, match=r"^params='.*': cannot read it as YAML/JSON: the key 'work' is given twice"):
        api.plan_from_parameters(workloads="sleep", ns="[10]", params="{sleep: {work: 0, work: 50}}")
    with pytest.raises(ValueError, match="the key 'sleep' is given twice"):
        api.plan_from_parameters(workloads="sleep", ns='{"sleep": [10], "sleep": [100]}')
    # a YAML merge key is no duplicate: explicit keys override merged ones, as YAML defines
    assert plan_parameters("{base: &b {samples: 3}, <<: *b, samples: 4}")["samples"] == 4


def test_threads_default_to_the_usable_cpus_and_every_command_carries_them():
    from bench_src import cpus
    from bench_src.run import measure
    plan = make_plan("quick", workloads=["sleep", "mysql"], ns=[10])
    assert plan.threads == cpus.usable_cpus() >= 1
    assert make_plan("quick", workloads=["sleep"], ns=[10], threads=None).threads == plan.threads
    for cell in plan.cells():
        assert cell.threads == plan.threads and f"|t={plan.threads}|" in cell.id
        cmd = measure.command(cell)
        assert cmd[cmd.index("--threads") + 1] == str(plan.threads)
        assert "--dsn" not in cmd
    assert make_plan("quick", workloads=["sleep"], ns=[10], threads=3).cells()[0].threads == 3


def test_the_plan_size_is_capped_unless_allowed(capsys, tmp_path):
    from bench_src.__main__ import main

    big = dict(workloads=["sleep"], ns=list(range(1, 101)), params={"sleep": {"work": list(range(100))}},
               samples=6, warmup=0, smoke=True)
    with pytest.raises(ValueError, match=r"120,000 samples \(20,000 cells x 6\)") as err:
        make_plan("quick", **big)
    # each place a plan is given in, in its own words (the keyword alone read as wrong syntax on the command line)
    assert str(err.value).endswith("; if that is meant, set allow_large (--allow-large true on the command line, "
                                   "-p allow_large True with papermill, allow_large=True in a call)"), str(err.value)
    assert main(["check", "--plan", json.dumps(big)]) == 2 and "--allow-large true" in capsys.readouterr().err
    assert main(["check", "--allow-large", "true", "--plan", json.dumps(big), "--results-dir", str(tmp_path)]) == 0
    assert len(make_plan("quick", allow_large=True, **big).cells()) == 20_000
    huge = dict(big, ns=list(range(1, 1001)), params={"sleep": {"work": list(range(1000))}})
    with pytest.raises(ValueError, match="at most 2,000,000 are possible"):
        make_plan("quick", allow_large=True, **huge)
    with pytest.raises(ValueError, match="at most 1000 are allowed"):
        make_plan("quick", workloads=["sleep"], ns=list(range(1, 2002)))


def test_a_dsn_password_is_neither_stored_nor_part_of_the_plan_identity(monkeypatch):
    a = make_plan("quick", workloads=["mysql"], ns=[10], dsn={"mysql": "mysql://u:first-secret@db.example:3306/b"})
    b = make_plan("quick", workloads=["mysql"], ns=[10], dsn={"mysql": "mysql://u:other-secret@db.example:3306/b"})
    assert a.dsn["mysql"].endswith("first-secret@db.example:3306/b"), "the plan itself keeps the URL to connect"
    assert a.to_dict()["dsn"] == {"mysql": "mysql://u:***@db.example:3306/b"} and a.digest == b.digest
    monkeypatch.setenv("BENCH_TEST_DSN", "postgres://u:env-secret@db.example/b")
    c = make_plan("quick", workloads=["postgres"], ns=[10], dsn={"postgres": "env:BENCH_TEST_DSN"})
    assert c.dsn == {"postgres": "env:BENCH_TEST_DSN"} and "env-secret" not in str(c.to_dict())


def test_timeouts_reach_the_launcher_as_whole_milliseconds_never_zero():
    from bench_src.run.measure import timeout_ms
    assert timeout_ms(0.001) == 1 and timeout_ms(0.0015) == 2 and timeout_ms(120) == 120_000
    for bad in (0, 0.0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            timeout_ms(bad)


def test_cli_check_validates_a_plan_and_its_directory_without_writing(tmp_path, capsys, monkeypatch):
    from bench_src.__main__ import main
    from bench_src.run import build, runner
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("must not build"))
    out = tmp_path / "r"
    assert main(["check", "--seed", "3", "--results-dir", str(out), "--plan", "{workloads: [sleep], ns: [10]}"]) == 0
    assert capsys.readouterr().out.strip() == str(out) and not out.exists()
    assert main(["check", "--plan", "{sample: 3}"]) == 2
    assert "unknown plan parameter 'sample'; allowed: profile, workloads" in capsys.readouterr().err
    assert main(["check", "--profile", "quick", "--plan", "{profile: article}"]) == 2
    assert "contradicts" in capsys.readouterr().err
    # a directory that holds another plan is refused before anything is built or written
    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=1, warmup=0, seed=3, smoke=True)
    runner.run(plan, out, context=runner.NoContext(), progress=False, log=lambda *_: None,
               measure_fn=lambda cell, *a, **k: {"status": "ok", "reason": "", "checksum": "1"})
    before = sorted(p.name for p in out.iterdir())
    assert main(["check", "--seed", "4", "--results-dir", str(out), "--plan", "{workloads: [sleep], ns: [10]}"]) == 2
    assert "already holds a different plan" in capsys.readouterr().err
    assert main(["check", "--seed", "3", "--results-dir", str(out),
                 "--plan", "{workloads: [sleep], ns: [10], samples: 1, warmup: 0, smoke: true}"]) == 0
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_plan_that_compares_nothing_is_run_with_a_one_line_note(tmp_path, capsys, monkeypatch):
    """One language, one variant, no A/A arms: no comparison, so no verdict, but its cells' timings
    and memory are still measured and reported.  `check` and `run` accept it and say so in one line
    (check on stderr: its stdout is the directory alone); a plan that compares something gets no note."""
    from bench_src.__main__ import main
    from bench_src.run import build, runner
    from bench_src.store import ResultsStore
    from test_store_runner import fake_measure

    monkeypatch.setattr(build, "build", lambda *a, **k: {})
    real_run = runner.run
    monkeypatch.setattr(runner, "run", lambda *a, **k: real_run(*a, measure_fn=fake_measure(),
                                                                context=runner.NoContext(), **k))
    note = ("note: this plan compares no two cells (no Go-vs-Rust, model, variant or A/A pair): each cell's timings "
            "and memory are reported, but no verdict is reached")
    out = tmp_path / "r"
    one = ["--workloads", '["sleep"]', "--ns", '{"sleep":[10]}', "--languages", '["go"]', "--results-dir", str(out)]
    assert main(["check", *one]) == 0
    shown = capsys.readouterr()
    assert shown.out.strip() == str(out) and not out.exists()
    assert [line for line in shown.err.splitlines() if line.startswith("note: ")] == [
        note + "; to compare, add the other language (languages), a variant (variants) or aa=True"]
    # a sample budget above samples buys nothing: the one cell stops after its pilot
    sequential = [*one, "--samples", "6", "--max-samples", "10", "--warmup", "0", "--params", '{"sleep": {"work": 10}}']
    assert main(["run", "--no-progress", *sequential]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: this plan")]
    assert lines == [note + "; max_samples (10) has no comparison to decide, so every cell stops at samples (6); to "
                     "compare, add the other language (languages), a variant (variants) or aa=True"]
    assert len(ResultsStore(out).records()) == 6
    for compares in (["--languages", '["go", "rust"]'], ["--languages", '["go"]', "--aa", "true"]):
        assert main(["check", "--workloads", '["sleep"]', "--ns", '{"sleep":[10]}', *compares,
                     "--results-dir", str(tmp_path / "other")]) == 0
        assert "note: this plan compares" not in capsys.readouterr().err, compares


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_makes_a_plan_that_can_reach_a_verdict(name):
    plan = make_plan(name)  # the feasibility check refuses a plan that never could
    assert plan.cells()


def test_article_profile_runs_the_article_settings_and_the_defaults_of_every_claim():
    """The reproduction table sets the article's settings beside each language's defaults, from
    cells of the same run: the article profile must take both, at every N of the article's table
    that it covers (MySQL stops at 1,000 for time, as the profile says; article-full takes 10,000),
    except where its n_range
    leaves a setting out on purpose: sleep's compute kernel above N = 100,000, so that at N =
    1,000,000 only the article's settings are measured."""
    from bench_src.analysis import published

    plan = make_plan("article")
    have = {(c.workload, c.lang, c.n, c.variant, tuple(sorted(c.params))) for c in plan.cells()}
    covered, left_out = 0, set()
    for r in published.article_ratios().itertuples():
        if r.workload not in plan.ns or r.n not in plan.ns[r.workload]:
            assert r.workload == "mysql" and r.n in (10_000, 100_000), (r.workload, r.n)
            continue
        for lang in ("go", "rust"):
            article = published.article_setting(r.workload, lang)
            assert (r.workload, lang, r.n, article.variant, article.params) in have, (r.workload, r.n, lang)
            default = published.default_setting(r.workload, lang)
            if (r.workload, lang, r.n, default.variant, default.params) not in have:
                left_out.add((r.workload, r.n, lang))
        covered += 1
    assert covered >= 19
    full = make_plan("article-full")
    assert tuple(full.ns["mysql"]) == (10, 100, 1000, 10000) and {c.n for c in full.cells() if c.workload == "mysql"} \
        == {10, 100, 1000, 10000}
    assert {c.id for c in plan.cells() if c.workload not in ("sleep", "idle_tasks", "threads_vs_tasks", "ping_pong")} \
        < {c.id for c in full.cells()}, \
        "article-full: the article profile's file and database cells, and more"
    assert left_out == {("sleep", 1_000_000, "go"), ("sleep", 1_000_000, "rust")}
    assert plan.n_range["sleep"] == {"kernel=xorshift,work=50000": (None, 100_000)}
    sleep = {dict(c.params)["kernel"] for c in plan.cells() if c.workload == "sleep"}
    assert sleep == {"xorshift", "article"}
    assert {dict(c.params)["work"] for c in plan.cells() if c.workload == "sleep" and dict(c.params)["kernel"] == "xorshift"} == {"0", "50000"}


def test_the_private_server_admits_the_largest_pool_of_any_cell():
    from bench_src.run.resources import max_pool

    assert max_pool(make_plan("quick", workloads=["mysql"]), {"mysql"}) == 64
    # the article preset opens 151 connections, a pool no grid value names
    assert max_pool(make_plan("article"), {"mysql"}) == 151
    assert max_pool(make_plan("quick", workloads=["mysql"], params={"mysql": {"pool": [8, 200]}}), {"mysql"}) == 200
    # the workloads a server serves, taken whole: no workload name inside another's
    both = make_plan("quick", workloads=["mysql", "sqlite"], params={"mysql": {"pool": [8, 200]}})
    assert max_pool(both, {"sqlite"}) < 200 and max_pool(both, {"mysql", "sqlite"}) == 200
    with pytest.raises(TypeError, match="a set of workloads"):
        max_pool(both, "mysql")


def test_warmup_per_program_configuration_at_its_smallest_n():
    per_cell = make_plan("quick", workloads=["sleep"], ns=[10, 1000, 100000], warmup=1, samples=6)
    per_program = make_plan("quick", workloads=["sleep"], ns=[10, 1000, 100000], warmup=1, samples=6,
                            warmup_scope="program")
    assert len(per_cell.schedule()) == len(per_cell.cells()) * 7
    warm = [s.cell for s in per_program.schedule() if s.phase == "warmup"]
    assert {c.n for c in warm} == {10}, "each configuration warms up at its smallest N"
    assert len(warm) == len(per_program.cells()) // 3
    assert {(c.lang, c.variant, c.params) for c in warm} == {(c.lang, c.variant, c.params) for c in per_program.cells()}
    assert sum(per_program.warmups().values()) == len(warm)
    assert [s for s in per_program.schedule() if s.phase == "measured"] == \
        [s for s in per_cell.schedule() if s.phase == "measured"], "the measured blocks do not change"
    with pytest.raises(ValueError, match="warmup_scope must be one of cell, program, got 'everything'"):
        make_plan("quick", workloads=["sleep"], warmup_scope="everything")


def test_n_range_runs_a_setting_only_at_the_n_values_it_names():
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100, 1000], params={"sleep": {"work": [0, 50000]}},
                     n_range={"sleep": {"kernel=xorshift,work=50000": [None, 100]}})
    kept = {(c.n, dict(c.params)["work"]) for c in plan.cells()}
    assert kept == {(10, "0"), (100, "0"), (1000, "0"), (10, "50000"), (100, "50000")}
    assert plan.to_dict()["n_range"] == {"sleep": {"kernel=xorshift,work=50000": [None, 100]}}
    assert plan_from_dict(plan.to_dict()).cells() == plan.cells(), "meta.json keeps the range"
    assert "n_range" not in make_plan("quick", workloads=["sleep"]).to_dict(), "no range: the digest of before"
    # papermill passes it as a string; the profile's ranges hold unless a setting is given again
    assert make_plan("quick", workloads=["sleep"], ns=[10, 1000],
                     n_range=from_papermill("n_range", '{sleep: {"work=0": [100, null]}}')).n_range == \
        {"sleep": {"work=0": (100, None)}} == make_plan(
            "quick", workloads=["sleep"], ns=[10, 1000], n_range={"sleep": {"work=0": [100, "None"]}}).n_range
    article = make_plan("article", n_range={"sleep": {"kernel=xorshift,work=50000": [None, None]}})
    assert any(c.n == 1_000_000 and dict(c.params)["kernel"] == "xorshift" and dict(c.params)["work"] == "50000"
               for c in article.cells()), "[null, null] lifts the profile's range"
    assert article.n_range["idle_tasks"] == {"wait=sleep": (10_000, None)}


@pytest.mark.parametrize("given, message", [
    ({"sleep": {"work=7": [1, 10]}}, r"sets work=7, a value this plan does not run \(it runs work = 0, 50000\)"),
    ({"sleep": {"wrk=0": [1, 10]}}, r"names parameter 'wrk', which sleep does not have; allowed: kernel, work"),
    ({"sleep": {"work": [1, 10]}}, r"'work' is not a parameter setting; give \"key=value\""),
    ({"sleep": {"work=0": [5]}}, r"must be \[lowest N, highest N\] \(null: no bound\), got \[5\]"),
    ({"sleep": {"work=0": [100, 10]}}, r"the lowest N \(100\) is above the highest \(10\)"),
    ({"sleep": {"work=0": [20000, None]}}, r"holds none of the N values of sleep \(10, 100, 1000, 10000\)"),
    ({"sleep": {"work=0": ["x", 5]}}, r"N must be an integer >= 1, or None for no bound, got 'x'"),
    # null (None) or the word None is no bound; "" and "null" were too, by a rule of their own (values.read_none)
    ({"sleep": {"work=0": ["", 5]}}, r"\['work=0'\]: N must be an integer >= 1, or None for no bound, got ''"),
    ({"sleep": {"work=0": [1, "null"]}}, r"\['work=0'\]: N must be an integer >= 1, or None for no bound, got 'null'"),
    ({"sleep": 3}, r"n_range\[sleep\] must be a mapping"),
    ({"cpu_loops": {"u=10": [1, 2]}}, r"n_range names workload 'cpu_loops', which is not in this plan"),
])
def test_a_bad_n_range_is_refused_naming_it(given, message):
    with pytest.raises(ValueError, match=message):
        make_plan("quick", workloads=["sleep"], params={"sleep": {"work": [0, 50000]}}, n_range=given)


@pytest.mark.parametrize("given, message", [
    ({"workloads": "sleep,cpu_loops"}, "workloads: 'sleep,cpu_loops' is one string, not a list; write a list in "
                                       "brackets: '[sleep, cpu_loops]'"),
    ({"workloads": "sleep", "ns": "10,100"}, "ns[sleep]: '10,100' is one string, not a list; write a list in "
                                             "brackets: '[10, 100]', or one number without separators: 10100"),
    ({"languages": "go, rust"}, "languages: 'go, rust' is one string, not a list; write a list in brackets: "
                                "'[go, rust]'"),
])
def test_a_list_written_with_commas_is_named_with_the_list_it_meant(given, message):
    # papermill's `-p workloads sleep,cpu_loops` and the command line's `--workloads sleep,cpu_loops`
    # pass one string: not "unknown workload 'sleep,cpu_loops'" beside a list that holds both
    from bench_src import api
    with pytest.raises(ValueError) as err:
        api.plan_from_parameters(**given)
    assert str(err.value) == message


def test_every_plan_field_is_stored_typed_and_read_back():
    """A field of Plan reaches meta.json, has its stored type checked (`stored_plan_problem`) and is
    read back by `plan_from_dict`: a field left out of either would come back as its default after a
    resume, in the report or on a cluster's host, and change the plan's digest."""
    import dataclasses

    from bench_src.plan.model import _STORED_TYPES, Plan

    fields = {f.name for f in dataclasses.fields(Plan)}
    read: set[str] = set()

    class Reading(dict):
        def __getitem__(self, key):
            read.add(key)
            return super().__getitem__(key)

        def get(self, key, default=None):
            read.add(key)
            return super().get(key, default)

    plan = make_plan("quick")
    assert plan_from_dict(Reading(plan.to_dict())) == plan
    assert read == fields, "plan_from_dict reads every field of Plan, and nothing else"
    assert set(_STORED_TYPES) == fields, "every field of Plan has its stored type"


def test_the_threads_note_of_a_local_cluster_compares_threads_with_a_hosts_cpus(monkeypatch):
    # each host of local:N is pinned to its own share of the CPUs: on 2 CPUs, local:2 runs every
    # program on one CPU, and its threads 1 leave Rust no CPU more than Go; the note said "below this
    # machine's 2 usable CPUs ... pin them: cores [1]"
    from bench_src import api, cpus
    from bench_src.cluster_spec import parse_cluster
    from bench_src.plan.validate import threads_note

    shares = {1: [[0, 1]], 2: [[0], [1]], 3: [[0, 1], [2]]}
    monkeypatch.setattr(cpus, "usable_cpus", lambda: 3)
    monkeypatch.setattr(cpus, "split", lambda workers: shares[workers])
    plan = api.plan_from_parameters(profile="quick", workloads="sleep", ns="[10]", samples=6, cluster="local:2")
    assert plan.threads == 1
    assert threads_note(plan, cluster=parse_cluster("local:2")) is None
    one = threads_note(plan, cluster=parse_cluster("local:1"))
    assert one.startswith("threads is 1, below the 2 CPUs of the host of cluster local:1, and 2 Rust cells run "
                          "unpinned") and one.endswith("pin them: cores [1]")
    assert threads_note(plan, cluster=parse_cluster("local:3")).startswith(
        "threads is 1, below the 2 CPUs of the largest host of cluster local:3, and 2 Rust cells run unpinned")
    assert threads_note(plan).startswith("threads is 1, below this machine's 3 usable CPUs")  # in this process


@pytest.mark.parametrize("kwargs, message", [
    ({"looks": -1}, r"looks must be an integer >= 1"),
    ({"max_samples": 20000}, r"max_samples must be an integer >= 0 and <= 10000"),
    ({"max_samples": 20, "late_looks": 6}, r"late_looks must be an integer >= 0 and <= 5"),
    ({"late_looks": 2}, r"late_looks \(2\) continues the sequential rule's looks past max_samples: set max_samples "
                        r"above samples \(10\) and looks >= 2 too, or late_looks=0"),
    ({"variants": {"ping_pong": {"go": ["all", "channels"]}}}, r"'all' stands alone"),
    ({"params": {"ping_pong": {"buffer": True}}}, r"must be a value or a list of values, got True"),
    ({"n_range": {"ping_pong": {"mode=lockstep": None, "mode=pipelined": [1, 10]}}},
     r"a comma separates entries: quote a setting of several parameters"),
])
def test_errors_say_what_is_wrong_with_the_value_itself(kwargs, message):
    # each of these named another problem (looks "only applies to sequential sampling", "unknown
    # variant 'all'", "must be a list" where one value is allowed, bounds None without why) or none
    with pytest.raises(ValueError, match=message):
        make_plan("quick", workloads=["ping_pong"], ns=[10], **kwargs)


def test_the_size_check_counts_the_samples_a_sequential_plan_may_take():
    """A plan is sized by its budget (max_samples), not its first look's samples: 52 cells x 10,001 is refused."""
    ns = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400]
    assert len(make_plan("quick", workloads=["sleep"], ns=ns, samples=6).cells()) == 52
    with pytest.raises(ValueError, match="more than 100,000"):
        make_plan("quick", workloads=["sleep"], ns=ns, samples=6, max_samples=10000)


def test_an_n_range_bound_equal_to_an_n_keeps_that_n():
    """n_range bounds are inclusive: [10, 10] runs the setting at N = 10 and nowhere else."""
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], n_range={"sleep": {"work=0": [10, 10]}})
    kept = {(c.lang, c.n, dict(c.params)["work"]) for c in plan.cells()}
    assert kept == {(lang, n, work) for lang in ("go", "rust") for n, work in
                    ((10, "0"), (10, "50000"), (100, "50000"))}
    assert len(plan.cells()) == 6


def test_a_profiles_core_count_equal_to_the_usable_cpus_is_kept(monkeypatch):
    """A core count the machine has exactly (2 of 2) must run, not be dropped as above the usable CPUs."""
    from bench_src import cpus

    monkeypatch.setattr(cpus, "usable_cpus", lambda: 2)
    assert make_plan("article-full").cores_of("sleep") == (1, 2)


def test_an_aa_plans_cell_bound_counts_both_arms():
    """The size check's bound must hold every cell an A/A plan lists (two arms per cell)."""
    from bench_src.plan.validate import cell_bound

    plan = make_plan("quick", workloads=["sleep"], ns=[10], aa=True)
    assert cell_bound(plan) == len(plan.cells()) == 8


def test_ns_are_sorted_and_deduplicated():
    """A repeated or unordered N must not make duplicate cells or change the plan's identity."""
    assert make_plan("quick", workloads=["sleep"], ns=[100, 10, 10]).ns == {"sleep": (10, 100)}


def test_an_unknown_variant_of_a_language_the_plan_leaves_out_is_refused_not_ignored():
    """`--languages '[rust]' --variants '{sleep: {go: [nonexistent-variant]}}'` was accepted, the bad
    name silently dropped; a known one for the left-out language still is accepted."""
    with pytest.raises(ValueError, match="unknown variant 'nonexistent-variant' of sleep for go"):
        make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=6, languages=["rust"],
                  variants={"sleep": {"go": ["nonexistent-variant"]}}, smoke=True)
    plan = make_plan("quick", workloads=["sleep"], ns=[10, 100], samples=6, languages=["rust"],
                     variants={"sleep": {"go": ["waitgroup"], "rust": ["joinset"]}}, smoke=True)
    assert {c.lang for c in plan.cells()} == {"rust"}


def test_a_profile_that_is_no_name_is_refused_with_the_names_allowed():
    """papermill's `-p profile None` read "profile must be a name, got None" without the names the
    command line's --profile lists."""
    from bench_src.profiles import PROFILES

    with pytest.raises(ValueError, match=f"profile must be a name, got None; allowed: {', '.join(PROFILES)}$"):
        make_plan(None)


# Every parameter whose value is a whole (or a real) number, as the plan or its parts take it
INTEGER_PARAMETERS = [
    ("samples", lambda b: {"samples": b}), ("warmup", lambda b: {"warmup": b}),
    ("max_samples", lambda b: {"max_samples": b}), ("looks", lambda b: {"max_samples": 20, "looks": b}),
    ("late_looks", lambda b: {"max_samples": 20, "late_looks": b}),
    ("seed", lambda b: {"seed": b}), ("threads", lambda b: {"threads": b}),
    ("mem_limit_mb", lambda b: {"mem_limit_mb": b}), ("time_budget_s", lambda b: {"time_budget_s": b}),
    ("timeout_s", lambda b: {"timeout_s": b}), ("cooldown_s", lambda b: {"cooldown_s": b}),
    ("timeline_ms", lambda b: {"timeline_ms": b}), ("ns", lambda b: {"ns": [10, b]}),
    ("ns", lambda b: {"ns": {"sleep": [b]}}), ("cores", lambda b: {"cores": [b]}), ("cores", lambda b: {"cores": b}),
    ("cores", lambda b: {"cores": {"sleep": [b]}}), ("n_range", lambda b: {"n_range": {"sleep": {"work=0": [b, 10]}}}),
    ("params[sleep][work]", lambda b: {"params": {"sleep": {"work": [b]}}}),
    ("adaptive_target", lambda b: {"adaptive_target": b}),
]


@pytest.mark.parametrize("boolean", [False, True])
@pytest.mark.parametrize("name, given", INTEGER_PARAMETERS)
def test_a_boolean_is_refused_wherever_a_number_is_expected(name, given, boolean):
    """`max_samples: false` (YAML's boolean) was the fixed design, as 0: Python's False == 0 let it
    through the test for zero before the number was read; a boolean is no number anywhere."""
    from bench_src import api

    with pytest.raises(ValueError, match=rf"{re.escape(name)}.*{boolean}") as err:
        make_plan("quick", workloads=["sleep"], **{"ns": [10], "samples": 6, **given(boolean)})
    with pytest.raises(ValueError) as papermill:  # papermill's -y gives YAML's boolean as it is
        api.plan_from_parameters(profile="quick", workloads="[sleep]", **{"ns": "[10]", "samples": 6,
                                                                           **given(boolean)})
    assert str(papermill.value) == str(err.value)


@pytest.mark.parametrize("given, whole", [
    (lambda b: {"params": {"sleep": {"work": [b]}}}, 1000), (lambda b: {"params": {"sleep": {"work": b}}}, 1000),
    (lambda b: {"max_samples": 20, "looks": b}, 2), (lambda b: {"looks": b}, 1), (lambda b: {"samples": b}, 1000),
    (lambda b: {"max_samples": 20, "late_looks": b}, 2),
], ids=["params-list", "params-value", "looks", "looks-fixed-design", "samples", "late-looks"])
def test_a_whole_number_is_read_alike_wherever_one_is_expected(given, whole):
    """`params: {sleep: {work: 6.0}}` or `work: 1e3` was refused ("expected an integer") where
    `samples: 6.0` or `ns: [1e3]` read 6 and 1000, `work: "1_000"` was 1000 where `samples: "1_000"`
    was refused, and `looks: "1.0"` without max_samples "only applies to sequential sampling" where
    1 was accepted: each read a number by a rule of its own.  One reading now (values.as_int)."""
    base = {"workloads": ["sleep"], "ns": [10], "samples": 6, "smoke": True}
    plan = make_plan("quick", **{**base, **given(whole)})
    for spelling in (str(whole), float(whole), f"{whole}.0", f" {whole} ", f"{whole:.0e}"):
        assert make_plan("quick", **{**base, **given(spelling)}).digest == plan.digest, spelling
    for refused in (True, f"{whole}.5", f"{whole:_}" if whole >= 1000 else f"0_{whole}", "x"):
        with pytest.raises(ValueError, match=re.escape(repr(refused))):
            make_plan("quick", **{**base, **given(refused)})
    # the retired adaptive_target takes only 0, read as a number is ("0.0" too, false never)
    assert make_plan("quick", **base, adaptive_target="0.0").digest == make_plan("quick", **base).digest


def test_max_samples_false_is_refused_on_the_command_line_in_one_line(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "bench_src", "check", "--results-dir", str(out), "--plan",
                           "{workloads: [sleep], ns: [10], samples: 6, max_samples: false}"],
                          capture_output=True, text=True, timeout=300, cwd=str(paths.ROOT))
    assert done.returncode == 2 and done.stdout == "" and not out.exists()
    assert done.stderr.splitlines() == ["error: max_samples must be an integer >= 0 and <= 10000, or None for no "
                                        "sequential rule (so does 0), got False"]
    # 0 and None are still the fixed design
    assert make_plan("quick", workloads=["sleep"], ns=[10], samples=6, max_samples=0).max_samples == 0
    assert make_plan("quick", workloads=["sleep"], ns=[10], samples=6, max_samples="0").max_samples == 0
    assert make_plan("quick", workloads=["sleep"], ns=[10], samples=6, adaptive_target=0.0).max_samples == 0


COLON_HINT = "; YAML needs a space after each colon: '{samples: 10}', not '{samples:10}'"


@pytest.mark.parametrize("name, value, named", [
    ("params", "{sleep:{work:0}}", "unknown parameter 'work:0' for workload sleep"),
    ("params", "sleep:work: 0", "params: 'sleep:work: 0' is one string, not a mapping of workload to values"),
    ("params", "{sleep: work:0}", "params[sleep] must be a mapping of parameter to values, got 'work:0'"),
    ("params", "{sleep: {work: {go:0}}}", "params[sleep][work]: unknown language 'go:0'"),
    ("ns", "sleep:[10]", "ns: 'sleep:[10]' is one string, not a mapping of workload to values"),
    ("variants", "sleep:all", "variants: 'sleep:all' is neither 'default' nor 'all'"),
    ("variants", "{sleep: {go:waitgroup}}", "variants[sleep]: unknown language 'go:waitgroup'"),
    ("variants", "{sleep: go:waitgroup}", "unknown variant 'go:waitgroup' of sleep for go"),
    ("n_range", "{sleep: 'work=0:[1, 10]'}", "n_range[sleep] must be a mapping of a parameter setting"),
    ("cores", "sleep:1", "cores: 'sleep:1' is not a core count"),
    ("dsn", "{mysql:env:X}", "dsn: unknown server 'mysql:env:X'"),
])
def test_a_mapping_written_without_a_space_after_a_colon_is_named_with_the_cause(name, value, named):
    """`params: {sleep:{work:0}}` read "unknown parameter 'work:0' for workload sleep", and
    `sleep:work: 0` "params[sleep] must be a mapping", with nothing about the colon: YAML reads a
    colon without a space after it as part of a key or a string."""
    from bench_src import api

    with pytest.raises(ValueError) as err:
        api.plan_from_parameters(profile="quick", **{"workloads": "[sleep]", "ns": "[10]", name: value})
    assert named in str(err.value) and str(err.value).endswith(COLON_HINT), str(err.value)


def test_a_mapping_meant_in_a_string_says_so_and_a_colon_with_its_space_has_no_colon_hint():
    with pytest.raises(ValueError, match=re.escape("params: 'sleep: {work: 0}' is one string, not a mapping of "
                                                   "workload to values; write a mapping in braces, e.g. "
                                                   "'{sleep: ...}'") + "$"):
        make_plan("quick", workloads=["sleep"], ns=[10], params="sleep: {work: 0}")


@pytest.mark.parametrize("args", [
    ["--params", "{sleep:{work:0}}"], ["--params", "sleep:work: 0"],
    ["--plan", "workloads: [sleep]\nns: [10]\nparams:\n  sleep:work: 0\n"],
    ["--plan", "{workloads: [sleep], ns: [10], params: {sleep: {work:0}}}"],
])
def test_the_colon_hint_reaches_the_command_line_in_one_line(args, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "r"
    base = [] if args[0] == "--plan" else ["--workloads", "[sleep]", "--ns", "[10]"]
    done = subprocess.run([sys.executable, "-m", "bench_src", "check", "--results-dir", str(out), *base, *args],
                          capture_output=True, text=True, timeout=300, cwd=str(paths.ROOT))
    assert done.returncode == 2 and done.stdout == "" and not out.exists()
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].endswith(COLON_HINT), done.stderr
