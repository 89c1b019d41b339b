"""bench_src: the harness of the Go goroutines vs Rust tokio benchmark.

The layout follows the flow of a run, each folder a floor that imports only from its own or a
lower one (docs/code-map.md draws it, with where a change goes):
- `catalogue`, `parameters`, `profiles`, `cpus`, `values`, `paths`, `digits`, `cluster_spec`,
  `redact`: the workloads, the plan's parameters, named grids, the usable-CPUs rule, typed reading
  of a user's values, file places, numbers kept on their side of an edge, what `cluster` names,
  where a URL's password lies;
- `plan/`: validate the user's parameters into a plan of cells and its interleaved schedule;
- `store/`: the results directory and the checksums that prove equal work;
- `analysis/`: statistics, comparisons, verdicts, scaling, quality checks, published figures;
- `run/` and `report/` (one floor): build the programs, prepare fixtures and servers, take each
  sample through the launcher; tables, figures and exports for a reader;
- `api`: the calls the notebooks make; `__main__`: the command line.
"""

__version__ = "0.1.0"
