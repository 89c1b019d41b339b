import pytest

from bench_src.catalogue import WORKLOADS
from bench_src.plan import make_plan


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
    ({"params": {"sleep": {"work": -1}}}, ["-1", "integer >= 0"]),
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


def test_equivalence_key_ignores_language_and_variant():
    plan = make_plan("quick", workloads=["sleep"], ns=[10], variants="all", params={"sleep": {"work": 10}})
    keys = {c.equivalence_key() for c in plan.cells()}
    assert len(keys) == 1


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


def test_cli_run_with_a_bad_plan_exits_2_with_one_line(tmp_path, capsys):
    from bench_src.__main__ import main
    assert main(["run", "--plan", str(tmp_path / "missing.yml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --plan") and "\n" not in err
    assert main(["run", "--plan", "{ns: [0]}"]) == 2
    assert "ns" in capsys.readouterr().err
