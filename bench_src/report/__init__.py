"""Report: the tables, figures and exports of a results directory, for a reader and an article.

`full.full_report(dir)` is the one call (docs/report.md): `tables` formats for reading, `units`
writes quantities, `figures` draws in the style `theme` sets, `export/` has one exporter per
format, and `notebook`, `memory_view` and `reproduce_view` are what the notebooks call.
"""
