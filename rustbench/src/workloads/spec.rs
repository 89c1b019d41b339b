//! What every workload is made of: its static description (`WorkloadSpec`,
//! `ParamSpec`, `Check`), the context a run gets (`Ctx`), what it hands back
//! (`Outcome`; `Collected`, the wrapping sum of task results that several
//! of them hand back as their checksum), and the steps around it
//! (`prepare`, `execute`). Workloads import this module; the registry that
//! names them all imports them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::affinity::allowed_cpus;
use crate::cli::args::{RunArgs, parse_uint};
use crate::cli::dsn::DSN_ENV;
use crate::cli::error::BenchError;
use crate::cli::result::{
    Flavour, RUSTC_VERSION, Report, RuntimeInfo, TOKIO_VERSION, checksum_hex,
};
use crate::cli::timer::Timer;

/// Static description of a workload.
pub struct WorkloadSpec {
    pub name: &'static str,
    /// Allowed `--variant` values.
    pub variants: &'static [&'static str],
    /// Used when `--variant` is absent; must be one of `variants`.
    pub default_variant: &'static str,
    /// Allowed `--param` keys with their defaults and checks.
    pub params: &'static [ParamSpec],
    /// `--data-dir` is required.
    pub needs_data_dir: bool,
    /// Needs a database server, whose URL comes from BENCH_DSN.
    pub needs_dsn: bool,
    /// Runs the workload. It does its own setup, then calls `ctx.timer.start()`
    /// right before spawning the first task, `ctx.timer.mark_spawned()` after
    /// the last spawn (where that means something) and `ctx.timer.stop()`
    /// when the last result has been collected.
    pub run: fn(&mut Ctx) -> Result<Outcome, BenchError>,
}

/// One `--param` key.
pub struct ParamSpec {
    pub key: &'static str,
    /// Default value, as it would be written on the command line.
    pub default: &'static str,
    pub check: Check,
}

/// How a `--param` value is validated.
#[derive(Debug, Clone, Copy)]
pub enum Check {
    /// Decimal integer in `min..=max`.
    UInt { min: u64, max: u64 },
    /// One of the listed words.
    OneOf(&'static [&'static str]),
}

impl Check {
    /// Any integer >= 0: a count or a duration with no bound but u64's.
    pub const ANY_UINT: Check = Check::UInt {
        min: 0,
        max: u64::MAX,
    };

    pub fn validate(&self, value: &str) -> Result<(), String> {
        match *self {
            Check::UInt { min, max } => match parse_uint(value) {
                Some(v) if v >= min && v <= max => Ok(()),
                _ if max == u64::MAX => Err(format!("expected an integer >= {min}")),
                _ => Err(format!("expected an integer in {min}..={max}")),
            },
            Check::OneOf(words) => {
                if words.contains(&value) {
                    Ok(())
                } else {
                    Err(format!("expected one of {}", words.join(", ")))
                }
            }
        }
    }
}

/// What a workload hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub checksum: u64,
    pub tasks_ok: u64,
}

/// The wrapping sum of the values the tasks handed back, and how many were
/// collected.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Collected {
    pub sum: u64,
    pub ok: u64,
}

impl Collected {
    pub fn add(&mut self, value: u64) {
        self.sum = self.sum.wrapping_add(value);
        self.ok += 1;
    }
}

/// Everything a workload run may use.
pub struct Ctx {
    /// `--n`
    pub n: u64,
    /// Effective variant (the default when `--variant` was absent).
    pub variant: &'static str,
    /// `--threads`; `None` when it was absent (see `threads`).
    requested_threads: Option<usize>,
    data_dir: Option<PathBuf>,
    dsn: Option<String>,
    /// Every param of the workload, defaults included.
    pub params: BTreeMap<String, String>,
    pub timer: Timer,
    extra: Map<String, Value>,
    flavour: Flavour,
    reported_threads: usize,
}

impl Ctx {
    /// Value of a declared param (defaults are filled in before the run).
    pub fn param(&self, key: &str) -> Result<&str, BenchError> {
        self.params
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| BenchError::runtime(format!("param '{key}' is not declared")))
    }

    /// A declared param parsed as an integer.
    pub fn param_u64(&self, key: &str) -> Result<u64, BenchError> {
        let value = self.param(key)?;
        parse_uint(value).ok_or_else(|| {
            BenchError::runtime(format!("param '{key}' is not an integer: '{value}'"))
        })
    }

    /// The OS threads that run tasks: `--threads`, or when it was absent the
    /// runtime's documented default. For tokio that is `worker_threads`'
    /// default, "the number of cores available to the system", which tokio
    /// takes from `std::thread::available_parallelism` (the `Builder::
    /// worker_threads` documentation); the OS-thread variants use the same
    /// function, which std documents as "an estimate of the default amount
    /// of parallelism a program should use". `runtime` leaves the count to
    /// tokio itself when `--threads` was absent.
    pub fn threads(&self) -> usize {
        self.requested_threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }

    /// Where `threads` came from, for the result line: `--threads`, or
    /// `default` (the runtime's).
    pub fn threads_source(&self) -> &'static str {
        match self.requested_threads {
            Some(_) => "--threads",
            None => "default",
        }
    }

    /// `--n` as a usize (it is a count of things held in memory).
    pub fn n_usize(&self) -> Result<usize, BenchError> {
        usize::try_from(self.n)
            .map_err(|_| BenchError::usage(format!("--n {} is too large", self.n)))
    }

    /// `--data-dir` (present whenever the spec says `needs_data_dir`).
    #[allow(dead_code, reason = "used by the file and sqlite workloads")]
    pub fn data_dir(&self) -> Result<&Path, BenchError> {
        self.data_dir
            .as_deref()
            .ok_or_else(|| BenchError::usage("this workload needs --data-dir"))
    }

    /// The server's URL from BENCH_DSN (present whenever the spec says
    /// `needs_dsn`).
    pub fn dsn(&self) -> Result<&str, BenchError> {
        self.dsn
            .as_deref()
            .ok_or_else(|| BenchError::usage(format!("this workload needs {}", DSN_ENV)))
    }

    /// Add a workload-specific key to the result line.
    pub fn set_extra(&mut self, key: &str, value: impl Into<Value>) {
        self.extra.insert(key.to_string(), value.into());
    }

    /// Record what ran the tasks when no tokio runtime is involved
    /// (`flavour` "none"): `threads` OS threads.
    pub fn set_no_runtime(&mut self, threads: usize) {
        self.flavour = Flavour::None;
        self.reported_threads = threads;
    }

    /// Build a tokio runtime of the given flavour (all drivers enabled) and
    /// record it for the result line. A multi-thread runtime gets
    /// `--threads` workers, or tokio's default number when it was absent;
    /// a current-thread runtime counts as 1 thread. Call this during setup,
    /// before `timer.start()`.
    pub fn runtime(&mut self, flavour: Flavour) -> Result<tokio::runtime::Runtime, BenchError> {
        let mut builder = match flavour {
            Flavour::MultiThread => {
                let mut b = tokio::runtime::Builder::new_multi_thread();
                if let Some(threads) = self.requested_threads {
                    b.worker_threads(threads);
                }
                b
            }
            Flavour::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            Flavour::None => {
                return Err(BenchError::runtime(
                    "a tokio runtime needs a multi_thread or current_thread flavour",
                ));
            }
        };
        let runtime = builder
            .enable_all()
            .build()
            .map_err(|e| BenchError::runtime(format!("building the tokio runtime: {e}")))?;
        self.flavour = flavour;
        self.reported_threads = runtime.metrics().num_workers();
        Ok(runtime)
    }
}

/// Check the command line against `spec` and build the context. All
/// failures here are usage errors (exit status 2).
pub fn prepare(
    spec: &'static WorkloadSpec,
    args: &RunArgs,
    process_start: u64,
) -> Result<Ctx, BenchError> {
    let variant = match &args.variant {
        None => spec.default_variant,
        Some(v) => spec
            .variants
            .iter()
            .copied()
            .find(|known| known == v)
            .ok_or_else(|| {
                BenchError::usage(format!(
                    "unknown variant '{v}' for {} (known: {})",
                    spec.name,
                    spec.variants.join(", ")
                ))
            })?,
    };

    let mut params: BTreeMap<String, String> = spec
        .params
        .iter()
        .map(|p| (p.key.to_string(), p.default.to_string()))
        .collect();
    for (key, value) in &args.params {
        let param = spec.params.iter().find(|p| p.key == key).ok_or_else(|| {
            let keys: Vec<&str> = spec.params.iter().map(|p| p.key).collect();
            BenchError::usage(format!(
                "unknown param '{key}' for {} (known: {})",
                spec.name,
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                }
            ))
        })?;
        param.check.validate(value).map_err(|why| {
            BenchError::usage(format!("bad value '{value}' for --param {key}: {why}"))
        })?;
        params.insert(key.clone(), value.clone());
    }

    if spec.needs_data_dir && args.data_dir.is_none() {
        return Err(BenchError::usage(format!("{} needs --data-dir", spec.name)));
    }
    if spec.needs_dsn && args.dsn.is_none() {
        return Err(BenchError::usage(format!(
            "{} needs a database server: set the environment variable {} to its URL \
             ({}://user:password@host:port/database)",
            spec.name, DSN_ENV, spec.name
        )));
    }
    if !spec.needs_data_dir && args.data_dir.is_some() {
        return Err(BenchError::usage(format!(
            "{} does not take --data-dir",
            spec.name
        )));
    }

    let ctx = Ctx {
        n: args.n,
        variant,
        requested_threads: args.threads,
        data_dir: args.data_dir.clone(),
        // A workload without a server ignores BENCH_DSN.
        dsn: args.dsn.clone().filter(|_| spec.needs_dsn),
        params,
        timer: Timer::new(process_start),
        extra: Map::new(),
        flavour: Flavour::None,
        reported_threads: 1,
    };
    Ok(ctx)
}

/// Run a prepared workload and assemble its result line.
pub fn execute(spec: &WorkloadSpec, mut ctx: Ctx) -> Result<Report, BenchError> {
    // The CPU set the program was started on (the launcher's --cpus sets it),
    // read before the workload starts any thread.
    let cpus = allowed_cpus()?;
    let outcome = (spec.run)(&mut ctx)?;
    let (t0_mono_ns, setup_ns, elapsed_ns, spawned_ns) = ctx.timer.finish()?;
    Report {
        lang: "rust",
        workload: spec.name.to_string(),
        variant: ctx.variant.to_string(),
        n: ctx.n,
        threads: ctx.reported_threads,
        threads_source: ctx.threads_source(),
        cpus,
        elapsed_ns,
        setup_ns,
        checksum: checksum_hex(outcome.checksum),
        tasks_ok: outcome.tasks_ok,
        params: ctx.params,
        runtime: RuntimeInfo {
            version: RUSTC_VERSION,
            tokio: TOKIO_VERSION,
            flavour: ctx.flavour,
        },
        t0_mono_ns,
        spawned_ns,
        extra: Map::new(),
    }
    .with_extra(ctx.extra)
}

/// Prepare and run in one step.
#[cfg(test)]
pub fn run(
    spec: &'static WorkloadSpec,
    args: &RunArgs,
    process_start: u64,
) -> Result<Report, BenchError> {
    let ctx = prepare(spec, args, process_start)?;
    execute(spec, ctx)
}

/// Command line for a run of `spec` in tests (2 worker threads).
#[cfg(test)]
pub(crate) fn test_args(
    spec: &WorkloadSpec,
    n: u64,
    variant: Option<&str>,
    params: &[(&str, &str)],
) -> RunArgs {
    RunArgs {
        workload: spec.name.to_string(),
        n,
        variant: variant.map(str::to_string),
        threads: Some(2),
        data_dir: None,
        dsn: None,
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// Run `spec` in a test with `test_args`, panicking on an error.
#[cfg(test)]
pub(crate) fn test_run(
    spec: &'static WorkloadSpec,
    n: u64,
    variant: Option<&str>,
    params: &[(&str, &str)],
) -> Report {
    let args = test_args(spec, n, variant, params);
    run(spec, &args, crate::cli::timer::mono_ns()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collected_sums_wrapping_and_counts() {
        let mut collected = Collected::default();
        for value in [u64::MAX, 2, 5] {
            collected.add(value);
        }
        assert_eq!(collected, Collected { sum: 6, ok: 3 });
    }

    #[test]
    fn any_uint_takes_every_u64_and_says_so() {
        for value in ["0", "1000", "18446744073709551615"] {
            assert_eq!(Check::ANY_UINT.validate(value), Ok(()), "{value}");
        }
        for value in ["-1", "x", "18446744073709551616"] {
            assert_eq!(
                Check::ANY_UINT.validate(value),
                Err("expected an integer >= 0".to_string()),
                "{value}"
            );
        }
    }
}
