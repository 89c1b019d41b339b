"""reproduce_article.ipynb's first output says how much of the article's table the run measured."""
import pandas as pd

from bench_src.plan import make_plan
from bench_src.report import notebook as nb
from bench_src.report.reproduce_view import ReproduceView, coverage_line
from bench_src.run import runner
from report_data import alive_extra


def _measure(cell, *args, **kwargs):
    t = 0.010 if cell.lang == "go" else 0.012
    return {"status": "ok", "reason": "", "checksum": "00000000000000aa", "elapsed_ns": int(1e9 * t),
            "wall_ns": 2000, "user_ns": 1, "sys_ns": 1, "maxrss_kb": 8192, "peak_rss_bytes": 8 << 20,
            "extra": alive_extra(cell), "tasks_ok": cell.n, "threads": cell.threads, "cpus": "0"}


def test_a_run_of_part_of_the_article_says_so_in_one_line_at_the_top(tmp_path):
    # a quick run gave tables full of "not measured" and no word of why
    plan = make_plan("quick", workloads=["sleep"], ns=[10], samples=6, warmup=0)
    runner.run(plan, tmp_path / "r", progress=False, measure_fn=_measure, log=lambda *_: None)
    view = ReproduceView(nb.reproduce_parameters(str(tmp_path / "r")))
    lines = repr(view).splitlines()
    total = len(view.side_frame())
    assert len(lines) == 2 and lines[0].startswith(f"{tmp_path / 'r'}: ")
    assert lines[1] == (f"this run measured 2 of the article's {total} cells (workload, N and metric) with the "
                        "defaults and 0 with the article's settings; the others read \"not measured\": the article "
                        "and article-full profiles (make run PROFILE=article) measure the article's grid "
                        "(bench_src/profiles.py says which cells each leaves out, and why)")


def test_a_run_of_every_cell_of_the_article_adds_no_line():
    side = pd.DataFrame({"ours_default_verdict_kind": ["a", "failed"], "ours_article_verdict_kind": ["b", "equivalent"]})
    assert coverage_line(side) is None
    side.loc[1, "ours_article_verdict_kind"] = "not measured"
    assert coverage_line(side).startswith("this run measured 2 of the article's 2 cells (workload, N and metric) "
                                          "with the defaults and 1 with the article's settings;")
    assert coverage_line(side.iloc[:0]) is None  # no cell at all: the side-by-side table says so
