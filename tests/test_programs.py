"""Both programs, run directly, against the Python oracle and against each other, and against the
catalogue (their `list`)."""
import json
import subprocess

import pytest

from bench_src import paths
from bench_src.catalogue import WORKLOADS
from bench_src.run.measure import RESULT_KEYS
from reference import cpu_loops_checksum, sleep_checksum

pytestmark = pytest.mark.slow


def run_program(lang, *args):
    out = subprocess.run([str(paths.program(lang)), *args], capture_output=True, text=True, timeout=60)
    return out


def result(lang, *args):
    out = run_program(lang, *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("lang", ["go", "rust"])
def test_catalogue_matches_the_program(built, lang):
    listed = result(lang, "list")
    assert listed["lang"] == lang
    # both ways: a workload a program implements and the catalogue lacks is one the harness never runs
    assert set(listed["workloads"]) == set(WORKLOADS), f"{lang} lists other workloads than the catalogue"
    for name, w in WORKLOADS.items():
        assert name in listed["workloads"], f"{lang} does not implement {name}"
        got = listed["workloads"][name]
        assert got["variants"] == list(w.variants[lang])
        assert got["default_variant"] == w.default_variant(lang)
        assert got["params"] == w.default_params(lang)


@pytest.mark.parametrize("lang", ["go", "rust"])
def test_the_plan_accepts_only_values_the_program_accepts(built, lang):
    """Every value the catalogue lets into a plan is one the program takes: an integer knob's range
    lies within the program's, a choice is among its choices (the plan refuses, before anything is
    built, a value one of them would reject).  And the program's list tells the truth about the
    low end: its minimum is the plan's, and the program runs it (rustbench listed ping_pong's buffer
    from 0, a value it refuses when it runs)."""
    listed = result(lang, "list")["workloads"]
    wider, minimums, refused = [], [], []
    for name, w in WORKLOADS.items():
        limits = listed[name]["limits"]
        for p in w.params_for(lang):
            got = limits[p.name]
            if p.kind == "int":
                assert "min" in got, (name, p.name, got)
                if p.minimum_for(lang) < got["min"] or p.maximum > got["max"]:
                    wider.append(f"{name} {p.name}: plan [{p.minimum_for(lang)}, {p.maximum}], "
                                 f"{lang} [{got['min']}, {got['max']}]")
                if got["min"] != p.minimum_for(lang):
                    minimums.append(f"{name} {p.name}: plan from {p.minimum_for(lang)}, {lang} lists {got['min']}")
                if w.fixture is None and w.server is None:  # needs no files or server: run it at the minimum it lists
                    done = run_program(lang, name, "--n", "1", "--param", f"{p.name}={got['min']}")
                    if done.returncode != 0:
                        refused.append(f"{name} {p.name}={got['min']}: {done.stderr.strip()[:200]}")
            elif not set(p.choices_for(lang)) <= set(got["choices"]):
                wider.append(f"{name} {p.name}: plan {p.choices_for(lang)}, {lang} {got['choices']}")
    assert (wider, minimums, refused) == ([], [], [])


@pytest.mark.parametrize("lang", ["go", "rust"])
def test_sleep_every_variant_matches_the_oracle(built, lang):
    for variant in WORKLOADS["sleep"].variants[lang]:
        for kernel, n, work in (("xorshift", 10, 2000), ("xorshift", 37, 100), ("article", 20, 1000)):
            r = result(lang, "sleep", "--n", str(n), "--variant", variant,
                       "--param", f"kernel={kernel}", "--param", f"work={work}")
            assert r["checksum"] == sleep_checksum(n, work, kernel), (variant, kernel, n)
            assert r["tasks_ok"] == n and r["variant"] == variant and r["workload"] == "sleep"
            assert r["params"] == {"kernel": kernel, "work": str(work)}
            # both count the tasks alive at the last spawn, as for idle_tasks: every one here, since
            # the shortest of the first 37 sleeps is 6 ms (validity.all_alive reads it for memory)
            assert r["alive_at_spawn"] == n, (variant, kernel, n, r.get("alive_at_spawn"))


@pytest.mark.parametrize("lang", ["go", "rust"])
def test_cpu_loops_every_variant_matches_the_oracle(built, lang):
    for variant in WORKLOADS["cpu_loops"].variants[lang]:
        for n, inner, u in ((100, 1000, 10), (1000, 1003, 7), (7, 5, 3)):
            r = result(lang, "cpu_loops", "--n", str(n), "--variant", variant, "--threads", "2",
                       "--param", f"inner={inner}", "--param", f"u={u}")
            assert r["checksum"] == cpu_loops_checksum(n, inner, u), (variant, n, inner, u)
            # the same threads in both languages: the one-loop variants run on 1 whatever is asked
            # (Go with GOMAXPROCS 1, Rust without a runtime), parallel on the 2 asked for
            assert r["threads"] == (2 if variant == "parallel" else 1), (variant, n, r["threads"])


JSON_TYPES = {"string": str, "integer": int, "object": dict, "array": list}


@pytest.mark.parametrize("lang", ["go", "rust"])
def test_result_line_has_the_contract_keys(built, lang):
    r = result(lang, "sleep", "--n", "5", "--threads", "1", "--param", "work=10")
    for spec in RESULT_KEYS:
        key = spec["key"]
        if spec["required"]:
            assert key in r, key
        if r.get(key) is not None:
            assert isinstance(r[key], JSON_TYPES[spec["type"]]), (key, r[key])
    standard = [k["key"] for k in RESULT_KEYS]
    assert [k for k in r if k in standard] == [k for k in standard if k in r], "standard keys in the schema's order"
    assert r["threads"] == 1 and r["n"] == 5
    assert len(r["checksum"]) == 16 and int(r["checksum"], 16) >= 0
    assert 0 < r["spawned_ns"] <= r["elapsed_ns"]


@pytest.mark.parametrize("lang", ["go", "rust"])
@pytest.mark.parametrize("args", [
    ["sleep", "--n", "0"], ["sleep", "--n", "x"], ["sleep"], ["nosuch", "--n", "1"],
    ["sleep", "--n", "1", "--variant", "nosuch"], ["sleep", "--n", "1", "--param", "nosuch=1"],
    ["sleep", "--n", "1", "--param", "kernel=nosuch"], ["sleep", "--n", "1", "--param", "work=-1"],
    ["cpu_loops", "--n", "1", "--param", "u=0"],
])
def test_bad_arguments_exit_2_with_a_message(built, lang, args):
    out = run_program(lang, *args)
    assert out.returncode == 2, (args, out.stdout, out.stderr)
    assert out.stderr.strip(), "a usage error must say what is wrong"


@pytest.mark.parametrize("lang", ["go", "rust"])
def test_a_parameter_changes_the_checksum_exactly_when_the_catalogue_says_it_changes_the_work(built, lang):
    """`checksum=True` in the catalogue puts a parameter in the Go/Rust equivalence key: it must
    change the checksum, or the check compares different work as if it were the same; `False` must
    not, or every sample of such a plan would read as a checksum mismatch.  Each integer parameter
    of a workload without files or a server, at two small values in the program's default variant.
    A wait's length is work no checksum can count (the least workload time proves it instead:
    `catalogue.least_elapsed_ns`), so idle tasks' `duration_ms` is in the key with an equal sum."""
    waits = {("idle_tasks", "duration_ms")}
    wrong = []
    for name, w in WORKLOADS.items():
        if w.fixture is not None or w.server is not None:
            continue
        for p in w.params_for(lang):
            if p.kind != "int":
                continue
            low = max(p.minimum_for(lang), 1)
            sums = [result(lang, name, "--n", "3", "--threads", "1", "--param", f"{p.name}={v}")["checksum"]
                    for v in (low, low + 1)]
            if (sums[0] != sums[1]) != (p.checksum and (name, p.name) not in waits):
                wrong.append(f"{name} {p.name}={low}/{low + 1}: checksums {sums}, catalogue checksum={p.checksum}")
    assert wrong == []
