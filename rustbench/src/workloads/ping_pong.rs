//! `ping_pong`: the cost of a task switch. Two tasks exchange the values
//! 1..=N over two `tokio::sync::mpsc` channels (request, reply) of capacity
//! `buffer`; an echo task sends every request back unchanged.
//! Checksum: wrapping sum of the replies (N(N+1)/2). Extra key:
//! `round_trips_per_s`.
//!
//! `mode=lockstep`: the main task sends a value and waits for its reply
//! before sending the next. `mode=pipelined`: a sender task streams all N
//! requests, the echo task forwards each one, the main task counts and sums
//! the replies.
//!
//! The main task is itself a spawned tokio task (the `block_on` thread only
//! waits for it), like Go's main goroutine: every task of the exchange runs
//! on the runtime's workers. Variants: `multi-thread`, `current-thread`.

use tokio::sync::mpsc::{self, Receiver, Sender};
use tokio::task::JoinHandle;

use super::spec::{Check, Collected, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::error::BenchError;
use crate::cli::result::Flavour;
use crate::cli::timer::Timer;

/// The largest capacity a `tokio::sync::mpsc` channel accepts.
const MAX_BUFFER: u64 = tokio::sync::Semaphore::MAX_PERMITS as u64;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "ping_pong",
    variants: &["multi-thread", "current-thread"],
    default_variant: "multi-thread",
    params: &[
        ParamSpec {
            key: "buffer",
            default: "1",
            // From 1: tokio::sync::mpsc has no rendezvous (unbuffered) channel, so 0, which
            // Go's unbuffered channel takes, is refused here, and `list` says so.
            check: Check::UInt {
                min: 1,
                max: MAX_BUFFER,
            },
        },
        ParamSpec {
            key: "mode",
            default: "lockstep",
            check: Check::OneOf(&["lockstep", "pipelined"]),
        },
    ],
    needs_data_dir: false,
    needs_dsn: false,
    run,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Lockstep,
    Pipelined,
}

/// Both channels, made during setup.
struct Channels {
    req_tx: Sender<u64>,
    req_rx: Receiver<u64>,
    rep_tx: Sender<u64>,
    rep_rx: Receiver<u64>,
}

impl Channels {
    fn new(buffer: usize) -> Self {
        let (req_tx, req_rx) = mpsc::channel(buffer);
        let (rep_tx, rep_rx) = mpsc::channel(buffer);
        Channels {
            req_tx,
            req_rx,
            rep_tx,
            rep_rx,
        }
    }
}

/// Send every request back unchanged until the request channel closes.
/// Returns the number of values echoed.
async fn echo(mut requests: Receiver<u64>, replies: Sender<u64>) -> Result<u64, BenchError> {
    let mut echoed = 0u64;
    while let Some(value) = requests.recv().await {
        replies.send(value).await.map_err(|_| {
            BenchError::runtime(format!(
                "ping_pong: the reply channel closed after {echoed} replies"
            ))
        })?;
        echoed += 1;
    }
    Ok(echoed)
}

/// Stream the requests 1..=n. Returns the number sent.
async fn send_all(n: u64, requests: Sender<u64>) -> Result<u64, BenchError> {
    for value in 1..=n {
        requests.send(value).await.map_err(|_| {
            BenchError::runtime(format!(
                "ping_pong: the request channel closed after {} of {n} requests",
                value - 1
            ))
        })?;
    }
    Ok(n)
}

/// Await a helper task that should have ended with `expected` messages.
async fn finish(
    handle: JoinHandle<Result<u64, BenchError>>,
    what: &str,
    expected: u64,
) -> Result<(), BenchError> {
    let count = handle.await??;
    if count != expected {
        return Err(BenchError::runtime(format!(
            "ping_pong: the {what} task handled {count} of {expected} messages"
        )));
    }
    Ok(())
}

/// The main task: run the exchange and hand the timer back with the result.
async fn exchange(
    n: u64,
    mode: Mode,
    channels: Channels,
    mut timer: Timer,
) -> Result<(Timer, Collected), BenchError> {
    let Channels {
        req_tx,
        req_rx,
        rep_tx,
        mut rep_rx,
    } = channels;
    let mut collected = Collected::default();
    match mode {
        Mode::Lockstep => {
            timer.start();
            let echo_task = tokio::spawn(echo(req_rx, rep_tx));
            timer.mark_spawned();
            for value in 1..=n {
                let reply = match req_tx.send(value).await {
                    Ok(()) => rep_rx.recv().await,
                    Err(_) => None,
                };
                match reply {
                    Some(reply) => collected.add(reply),
                    None => {
                        // The echo task ended early: its own error says why.
                        finish(echo_task, "echo", n).await?;
                        return Err(BenchError::runtime(format!(
                            "ping_pong: the echo task stopped after {} of {n} round trips",
                            collected.ok
                        )));
                    }
                }
            }
            timer.stop();
            drop(req_tx);
            finish(echo_task, "echo", n).await?;
        }
        Mode::Pipelined => {
            timer.start();
            let sender_task = tokio::spawn(send_all(n, req_tx));
            let echo_task = tokio::spawn(echo(req_rx, rep_tx));
            timer.mark_spawned();
            while collected.ok < n {
                match rep_rx.recv().await {
                    Some(reply) => collected.add(reply),
                    None => break,
                }
            }
            if collected.ok == n {
                timer.stop();
            }
            finish(sender_task, "sender", n).await?;
            finish(echo_task, "echo", n).await?;
            if collected.ok != n {
                return Err(BenchError::runtime(format!(
                    "ping_pong: the reply channel closed after {} of {n} replies",
                    collected.ok
                )));
            }
        }
    }
    Ok((timer, collected))
}

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let buffer = ctx.param_u64("buffer")?;
    let buffer = usize::try_from(buffer)
        .map_err(|_| BenchError::usage(format!("--param buffer={buffer} is too large")))?;
    let mode = match ctx.param("mode")? {
        "lockstep" => Mode::Lockstep,
        "pipelined" => Mode::Pipelined,
        other => return Err(BenchError::runtime(format!("unhandled mode '{other}'"))),
    };
    let flavour = match ctx.variant {
        "multi-thread" => Flavour::MultiThread,
        "current-thread" => Flavour::CurrentThread,
        other => return Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
    };
    let n = ctx.n;
    let runtime = ctx.runtime(flavour)?;
    let channels = Channels::new(buffer);
    let timer = ctx.timer.clone();

    let (timer, collected) = runtime
        .block_on(async move { tokio::spawn(exchange(n, mode, channels, timer)).await })??;
    drop(runtime);
    ctx.timer = timer;

    let (_, _, elapsed_ns, _) = ctx.timer.finish()?;
    // A zero-length interval cannot happen with a monotonic clock and at
    // least one message; guard the division anyway.
    let round_trips_per_s = collected.ok as f64 / (elapsed_ns.max(1) as f64 / 1e9);
    ctx.set_extra("round_trips_per_s", round_trips_per_s);
    Ok(Outcome {
        checksum: collected.sum,
        tasks_ok: collected.ok,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::timer::mono_ns;
    use crate::workloads::spec::{prepare, test_args, test_run};

    #[test]
    fn every_variant_mode_and_buffer_gives_the_reference_checksum() {
        for variant in SPEC.variants {
            for mode in ["lockstep", "pipelined"] {
                for buffer in ["1", "64"] {
                    let what = format!("{variant} {mode} buffer={buffer}");
                    let report = test_run(
                        &SPEC,
                        1000,
                        Some(variant),
                        &[("mode", mode), ("buffer", buffer)],
                    );
                    assert_eq!(report.checksum, "000000000007a314", "{what}");
                    assert_eq!(report.tasks_ok, 1000, "{what}");
                    let rate = report.extra["round_trips_per_s"]
                        .as_f64()
                        .expect("round_trips_per_s is a number");
                    let expected = 1000.0 / (report.elapsed_ns as f64 / 1e9);
                    assert!((rate - expected).abs() <= expected * 1e-9, "{what}");
                    let spawned = report.spawned_ns.expect("spawned_ns is set");
                    assert!(spawned <= report.elapsed_ns, "{what}");
                    let (flavour, threads) = match *variant {
                        "current-thread" => (Flavour::CurrentThread, 1),
                        _ => (Flavour::MultiThread, 2),
                    };
                    assert_eq!(report.runtime.flavour, flavour, "{what}");
                    assert_eq!(report.threads, threads, "{what}");
                }
            }
        }
    }

    #[test]
    fn small_sizes_and_defaults() {
        let report = test_run(&SPEC, 1, None, &[]);
        assert_eq!(report.checksum, "0000000000000001");
        assert_eq!(report.variant, "multi-thread");
        assert_eq!(report.params.get("buffer").map(String::as_str), Some("1"));
        assert_eq!(
            report.params.get("mode").map(String::as_str),
            Some("lockstep")
        );
        // A buffer larger than N.
        let report = test_run(
            &SPEC,
            10,
            None,
            &[("mode", "pipelined"), ("buffer", "4096")],
        );
        assert_eq!(report.checksum, "0000000000000037");
    }

    #[test]
    fn buffer_zero_is_a_usage_error_and_the_listed_minimum_is_one() {
        // tokio::sync::mpsc has no rendezvous channel: 0 is refused with the other bad values,
        // so `list` (the check's limits) gives the least value that runs
        let args = test_args(&SPEC, 10, None, &[("buffer", "0")]);
        match prepare(&SPEC, &args, mono_ns()) {
            Err(BenchError::Usage(msg)) => {
                assert!(msg.contains("bad value '0' for --param buffer"), "{msg}");
                assert!(msg.contains("1..="), "{msg}");
            }
            Err(other) => panic!("expected a usage error, got {other}"),
            Ok(_) => panic!("buffer=0 was accepted"),
        }
        let buffer = SPEC.params.iter().find(|p| p.key == "buffer").unwrap();
        assert!(matches!(buffer.check, Check::UInt { min: 1, .. }));
    }

    #[test]
    fn bad_params_are_usage_errors() {
        for (key, value) in [
            ("mode", "burst"),
            ("buffer", "-1"),
            ("buffer", "x"),
            ("buffer", "2305843009213693952"),
        ] {
            let args = test_args(&SPEC, 10, None, &[(key, value)]);
            match prepare(&SPEC, &args, mono_ns()) {
                Err(BenchError::Usage(msg)) => assert!(msg.contains("bad value"), "{msg}"),
                Err(other) => panic!("{key}={value}: expected a usage error, got {other}"),
                Ok(_) => panic!("{key}={value} was accepted"),
            }
        }
    }
}
