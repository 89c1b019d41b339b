//! The workloads: one file each, defining a `pub const SPEC: WorkloadSpec`
//! (see `spec`), named in `registry`. Workload files import `spec` (and the
//! shared helpers beside them), never `registry`.

pub mod registry;
pub mod spec;

pub mod cpu_loops;
pub mod files_read;
pub mod files_rw;
mod fsshared;
pub mod idle_tasks;
pub mod mysql;
mod osthreads;
pub mod ping_pong;
pub mod postgres;
pub mod sleep;
pub mod sqlite;
mod sqlshared;
mod sqlxusers;
pub mod threads_vs_tasks;
