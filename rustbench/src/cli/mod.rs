//! What every workload shares, one concern per file (as `gobench/internal/cli/`):
//! the command line (`args`), the error type (`error`), the database URL and
//! its redaction (`dsn`), the one line printed on failure (`stderr`), the
//! open-file limit (`rlimit`), the clock and the workload timer (`timer`) and
//! the result line (`result`).

pub mod args;
pub mod dsn;
pub mod error;
pub mod result;
pub mod rlimit;
pub mod stderr;
pub mod timer;
