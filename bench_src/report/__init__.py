"""Report: tables, figures and every export of a results directory, for a reader and an article."""
