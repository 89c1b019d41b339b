"""bench_src: the harness of the Go goroutines vs Rust tokio benchmark.

Modules, one concern each: catalogue (workloads), profiles, plan (validation and schedule), build,
measure (one sample through the launcher), store (results directory), runner, equivalence
(checksums), stats, figures, api (the notebooks' calls).
"""

__version__ = "0.1.0"
