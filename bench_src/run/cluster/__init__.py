"""One plan on many hosts at once, on Dask distributed: `engine` is the client's side (the one
process that owns the results directory and the sequential rule), `host` what runs in each worker.
Imported only by a run that names a cluster: the default, in-process run needs none of it."""
