"""Analysis: statistics of the stored samples: per-cell descriptives, Go vs Rust and variant
comparisons with their verdicts, scaling fits, quality checks, and the published figures beside
ours."""
