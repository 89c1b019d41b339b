"""bench_src: the harness of the Go goroutines vs Rust tokio benchmark.

The layout follows the flow of a run:
- `catalogue`, `profiles`: the workloads (variants, parameters) and named grids;
- `plan/`: validate the user's parameters into a plan of cells and its interleaved schedule;
- `run/`: build the programs, prepare fixtures and servers, take each sample through the launcher;
- `store/`: the results directory and the checksums that prove equal work;
- `analysis/`: statistics, comparisons, verdicts, scaling, quality checks, published figures;
- `report/`: tables, figures and exports for a reader;
- `api`: the calls the notebooks make; `__main__`: the command line.
"""

__version__ = "0.1.0"
