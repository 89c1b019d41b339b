//! `threads_vs_tasks`: N workers; worker i first sleeps
//! `((i * 2654435761) mod 2^32) mod 200000` microseconds, then `iterations`
//! times sleeps 10 ms. Checksum: total iterations done (N * iterations).
//!
//! Variants: `tokio` (the default: `tokio::spawn` + `tokio::time::sleep` on
//! the multi-thread runtime), `thread` (one `std::thread` per worker,
//! `std::thread::sleep`), `thread-pinned` (the same, each thread pinned to
//! CPU `i % ncpus` of the CPUs the process may run on, with
//! `sched_setaffinity`).

use std::time::Duration;

use super::osthreads::run_threads;
use super::spec::{Check, Collected, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::affinity::{allowed_cpus, pin_current_thread};
use crate::cli::error::BenchError;
use crate::cli::result::Flavour;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "threads_vs_tasks",
    variants: &["tokio", "thread", "thread-pinned"],
    default_variant: "tokio",
    params: &[ParamSpec {
        key: "iterations",
        default: "100",
        check: Check::ANY_UINT,
    }],
    needs_data_dir: false,
    needs_dsn: false,
    run,
};

/// Length of each of the `iterations` sleeps.
const TICK: Duration = Duration::from_millis(10);

/// Worker i's first sleep in microseconds:
/// `((i * 2654435761) mod 2^32) mod 200000`. The product is taken modulo
/// 2^64 first, which leaves its value modulo 2^32 unchanged.
pub fn first_sleep_us(i: u64) -> u64 {
    (i.wrapping_mul(2_654_435_761) & 0xffff_ffff) % 200_000
}

/// What one worker does, on a thread or in a task: the staggered first
/// sleep, then `iterations` ticks. Returns the iterations done.
fn thread_worker(i: u64, iterations: u64) -> u64 {
    std::thread::sleep(Duration::from_micros(first_sleep_us(i)));
    let mut done = 0u64;
    for _ in 0..iterations {
        std::thread::sleep(TICK);
        done += 1;
    }
    done
}

async fn task_worker(i: u64, iterations: u64) -> u64 {
    tokio::time::sleep(Duration::from_micros(first_sleep_us(i))).await;
    let mut done = 0u64;
    for _ in 0..iterations {
        tokio::time::sleep(TICK).await;
        done += 1;
    }
    done
}

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let n = ctx.n_usize()?;
    let iterations = ctx.param_u64("iterations")?;

    let collected = match ctx.variant {
        "thread" => {
            ctx.set_no_runtime(n);
            run_threads(n, &mut ctx.timer, move |i| Ok(thread_worker(i, iterations)))?
        }
        "thread-pinned" => {
            let cpus = allowed_cpus()?;
            ctx.set_no_runtime(n);
            run_threads(n, &mut ctx.timer, move |i| {
                pin_current_thread(cpus[(i % cpus.len() as u64) as usize])?;
                Ok(thread_worker(i, iterations))
            })?
        }
        "tokio" => {
            let runtime = ctx.runtime(Flavour::MultiThread)?;
            let timer = &mut ctx.timer;
            let collected = runtime.block_on(async {
                let mut handles = Vec::with_capacity(n);
                let mut collected = Collected::default();
                timer.start();
                for i in 0..n {
                    handles.push(tokio::spawn(task_worker(i as u64, iterations)));
                }
                timer.mark_spawned();
                for handle in handles {
                    collected.add(handle.await?);
                }
                timer.stop();
                Ok::<_, BenchError>(collected)
            })?;
            drop(runtime);
            collected
        }
        other => return Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
    };

    Ok(Outcome {
        checksum: collected.sum,
        tasks_ok: collected.ok,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::result::Report;
    use crate::cli::timer::mono_ns;
    use crate::workloads::spec::{run as run_workload, test_args};

    fn tvt_run(n: u64, variant: Option<&str>, params: &[(&str, &str)]) -> Report {
        run_workload(&SPEC, &test_args(&SPEC, n, variant, params), mono_ns()).unwrap()
    }

    #[test]
    fn first_sleep_values() {
        assert_eq!(first_sleep_us(0), 0);
        assert_eq!(first_sleep_us(1), 35_761);
        assert_eq!(first_sleep_us(2), 104_226);
        // (2654435761 * 9999) mod 2^32 = 3100252255
        assert_eq!(first_sleep_us(9_999), 52_255);
        // Multiples of 2^32 wrap to 0.
        assert_eq!(first_sleep_us(1 << 32), 0);
        assert_eq!(first_sleep_us((1 << 32) + 1), 35_761);
        for i in 0..100_000 {
            assert!(first_sleep_us(i) < 200_000);
        }
    }

    #[test]
    fn every_variant_gives_the_reference_checksum() {
        for variant in SPEC.variants {
            let report = tvt_run(20, Some(variant), &[("iterations", "2")]);
            assert_eq!(report.checksum, "0000000000000028", "{variant}");
            assert_eq!(report.tasks_ok, 20, "{variant}");
            assert_eq!(report.variant, *variant);
            let (flavour, threads) = match *variant {
                "tokio" => (Flavour::MultiThread, 2),
                _ => (Flavour::None, 20),
            };
            assert_eq!(report.runtime.flavour, flavour, "{variant}");
            assert_eq!(report.threads, threads, "{variant}");
            let spawned = report.spawned_ns.expect("spawned_ns is set");
            assert!(spawned <= report.elapsed_ns);
            // Worker 2 sleeps 104.226 ms, then two ticks.
            assert!(report.elapsed_ns >= 124_000_000, "{variant}");
        }
    }

    #[test]
    fn zero_iterations_and_default() {
        for variant in SPEC.variants {
            let report = tvt_run(3, Some(variant), &[("iterations", "0")]);
            assert_eq!(report.checksum, "0000000000000000", "{variant}");
            assert_eq!(report.tasks_ok, 3, "{variant}");
        }
        let report = tvt_run(1, None, &[]);
        assert_eq!(report.variant, "tokio");
        assert_eq!(
            report.params.get("iterations").map(String::as_str),
            Some("100")
        );
        assert_eq!(report.checksum, "0000000000000064");
    }
}
