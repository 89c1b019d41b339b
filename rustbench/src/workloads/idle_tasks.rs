//! `idle_tasks`: the memory of N concurrent tasks. N tasks each sleep
//! `duration_ms` and finish. Checksum: tasks completed (N).
//!
//! After the timer stops the process stays alive for `linger_ms` (the tokio
//! runtime too: the linger is a sleep inside the same `block_on`), so that a
//! memory timeline shows what the runtime gives back, and only then is the
//! result line printed. Extra keys: `finished_ns` (= `elapsed_ns`) and
//! `linger_end_ns`, both offsets from the timer start (`t0_mono_ns`).
//!
//! Variants: `spawn` (`tokio::spawn` on the multi-thread runtime, handles
//! awaited in spawn order), `current-thread` (the same on a current-thread
//! runtime), `join-all` (N `tokio::time::sleep` futures polled by
//! `futures::future::join_all`, nothing spawned), `threads` (one
//! `std::thread` per task with `std::thread::sleep`).

use std::time::Duration;

use super::threads_vs_tasks::run_threads;
use super::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::{BenchError, Flavour, Timer, mono_ns};

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "idle_tasks",
    variants: &["spawn", "current-thread", "join-all", "threads"],
    default_variant: "spawn",
    params: &[
        ParamSpec {
            key: "duration_ms",
            default: "1000",
            check: Check::UInt {
                min: 0,
                max: u64::MAX,
            },
        },
        ParamSpec {
            key: "linger_ms",
            default: "0",
            check: Check::UInt {
                min: 0,
                max: u64::MAX,
            },
        },
    ],
    needs_data_dir: false,
    needs_dsn: false,
    run,
};

/// Nanoseconds from the timer start to now (the timer must have stopped).
fn since_start(timer: &Timer) -> Result<u64, BenchError> {
    let (t0, _, _, _) = timer.finish()?;
    Ok(mono_ns().saturating_sub(t0))
}

/// Spawn N sleeping tasks, await the handles in spawn order.
async fn spawn_all(n: usize, duration: Duration, timer: &mut Timer) -> Result<u64, BenchError> {
    let mut handles = Vec::with_capacity(n);
    let mut done = 0u64;
    timer.start();
    for _ in 0..n {
        handles.push(tokio::spawn(async move {
            tokio::time::sleep(duration).await;
        }));
    }
    timer.mark_spawned();
    for handle in handles {
        handle.await?;
        done += 1;
    }
    timer.stop();
    Ok(done)
}

/// Create N sleep futures and poll them all with `join_all`, no spawning.
async fn join_all(n: usize, duration: Duration, timer: &mut Timer) -> Result<u64, BenchError> {
    let mut sleeps = Vec::with_capacity(n);
    timer.start();
    for _ in 0..n {
        sleeps.push(tokio::time::sleep(duration));
    }
    timer.mark_spawned();
    let outputs = futures::future::join_all(sleeps).await;
    timer.stop();
    Ok(outputs.len() as u64)
}

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let n = ctx.n_usize()?;
    let duration = Duration::from_millis(ctx.param_u64("duration_ms")?);
    let linger = Duration::from_millis(ctx.param_u64("linger_ms")?);

    let variant = ctx.variant;
    let (done, linger_end_ns) = match variant {
        "spawn" | "current-thread" | "join-all" => {
            let flavour = match variant {
                "current-thread" => Flavour::CurrentThread,
                _ => Flavour::MultiThread,
            };
            let runtime = ctx.runtime(flavour)?;
            let timer = &mut ctx.timer;
            let result = runtime.block_on(async {
                let done = match variant {
                    "join-all" => join_all(n, duration, timer).await?,
                    _ => spawn_all(n, duration, timer).await?,
                };
                if !linger.is_zero() {
                    tokio::time::sleep(linger).await;
                }
                Ok::<_, BenchError>((done, since_start(timer)?))
            })?;
            drop(runtime);
            result
        }
        "threads" => {
            ctx.set_no_runtime(n);
            let collected = run_threads(n, &mut ctx.timer, move |_| {
                std::thread::sleep(duration);
                Ok(1)
            })?;
            if !linger.is_zero() {
                std::thread::sleep(linger);
            }
            (collected.sum, since_start(&ctx.timer)?)
        }
        other => return Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
    };

    let (_, _, finished_ns, _) = ctx.timer.finish()?;
    ctx.set_extra("finished_ns", finished_ns);
    ctx.set_extra("linger_end_ns", linger_end_ns);
    Ok(Outcome {
        checksum: done,
        tasks_ok: done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Report;
    use crate::workloads::{test_args, test_run};

    fn extra(report: &Report, key: &str) -> u64 {
        report.extra[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key} is an unsigned integer"))
    }

    #[test]
    fn every_variant_gives_the_reference_checksum() {
        for variant in SPEC.variants {
            let report = test_run("idle_tasks", 50, Some(variant), &[("duration_ms", "10")]);
            assert_eq!(report.checksum, "0000000000000032", "{variant}");
            assert_eq!(report.tasks_ok, 50, "{variant}");
            assert_eq!(report.variant, *variant);
            let (flavour, threads) = match *variant {
                "current-thread" => (Flavour::CurrentThread, 1),
                "threads" => (Flavour::None, 50),
                _ => (Flavour::MultiThread, 2),
            };
            assert_eq!(report.runtime.flavour, flavour, "{variant}");
            assert_eq!(report.threads, threads, "{variant}");
            assert!(report.elapsed_ns >= 10_000_000, "{variant}");
            let spawned = report.spawned_ns.expect("spawned_ns is set");
            assert!(spawned <= report.elapsed_ns, "{variant}");
            assert_eq!(
                extra(&report, "finished_ns"),
                report.elapsed_ns,
                "{variant}"
            );
            assert!(
                extra(&report, "linger_end_ns") >= report.elapsed_ns,
                "{variant}"
            );
        }
    }

    #[test]
    fn linger_keeps_the_process_alive_after_the_timer() {
        for variant in SPEC.variants {
            let report = test_run(
                "idle_tasks",
                5,
                Some(variant),
                &[("duration_ms", "10"), ("linger_ms", "30")],
            );
            assert_eq!(report.checksum, "0000000000000005", "{variant}");
            let finished = extra(&report, "finished_ns");
            let linger_end = extra(&report, "linger_end_ns");
            assert_eq!(finished, report.elapsed_ns, "{variant}");
            assert!(
                linger_end >= finished + 30_000_000,
                "{variant}: finished {finished} linger_end {linger_end}"
            );
        }
    }

    #[test]
    fn zero_duration_and_defaults() {
        for variant in SPEC.variants {
            let report = test_run("idle_tasks", 3, Some(variant), &[("duration_ms", "0")]);
            assert_eq!(report.checksum, "0000000000000003", "{variant}");
        }
        let report = test_run("idle_tasks", 2, None, &[("duration_ms", "1")]);
        assert_eq!(report.variant, "spawn");
        assert_eq!(
            report.params.get("linger_ms").map(String::as_str),
            Some("0")
        );
        let (_, ctx) =
            crate::workloads::prepare(&test_args("idle_tasks", 1, None, &[]), 0).unwrap();
        assert_eq!(
            ctx.params.get("duration_ms").map(String::as_str),
            Some("1000")
        );
    }
}
