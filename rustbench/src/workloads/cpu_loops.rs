//! `cpu_loops`: the billion-loop test. No tokio, no tasks: an array `a` of N
//! u32; for every i, `inner` times `a[i] += j % u`, then `a[i] += r`, with
//! `r = lcg(42)[0] % N`. Checksum: `a[r]`.

use super::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::BenchError;
use crate::lcg;

const U32_MAX: u64 = u32::MAX as u64;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "cpu_loops",
    variants: &["plain", "local", "unrolled", "parallel"],
    default_variant: "plain",
    params: &[
        ParamSpec {
            key: "u",
            default: "10",
            check: Check::UInt {
                min: 1,
                max: U32_MAX,
            },
        },
        ParamSpec {
            key: "inner",
            default: "100000",
            check: Check::UInt {
                min: 0,
                max: U32_MAX,
            },
        },
    ],
    needs_data_dir: false,
    needs_dsn: false,
    run,
};

/// The loop as written in the original test: update `a[i]` in place.
#[allow(
    clippy::needless_range_loop,
    reason = "indexing a[i] is part of the loop being measured"
)]
pub fn plain(a: &mut [u32], inner: u32, u: u32, r: u32) {
    for i in 0..a.len() {
        for j in 0..inner {
            a[i] = a[i].wrapping_add(j % u);
        }
        a[i] = a[i].wrapping_add(r);
    }
}

/// Load `a[i]` into a local, run the inner loop on the local, store once.
#[allow(
    clippy::needless_range_loop,
    reason = "indexing a[i] is part of the loop being measured"
)]
pub fn local(a: &mut [u32], inner: u32, u: u32, r: u32) {
    for i in 0..a.len() {
        let mut v = a[i];
        for j in 0..inner {
            v = v.wrapping_add(j % u);
        }
        a[i] = v.wrapping_add(r);
    }
}

/// `plain` with the inner loop unrolled by 4, then the remaining
/// `inner % 4` iterations one by one.
#[allow(
    clippy::needless_range_loop,
    reason = "indexing a[i] is part of the loop being measured"
)]
pub fn unrolled(a: &mut [u32], inner: u32, u: u32, r: u32) {
    let bulk = inner - inner % 4;
    for i in 0..a.len() {
        let mut j = 0u32;
        while j < bulk {
            a[i] = a[i].wrapping_add(j % u);
            a[i] = a[i].wrapping_add((j + 1) % u);
            a[i] = a[i].wrapping_add((j + 2) % u);
            a[i] = a[i].wrapping_add((j + 3) % u);
            j += 4;
        }
        while j < inner {
            a[i] = a[i].wrapping_add(j % u);
            j += 1;
        }
        a[i] = a[i].wrapping_add(r);
    }
}

/// Threads used by `parallel`: one per chunk, never more than elements.
pub fn parallel_threads(len: usize, threads: usize) -> usize {
    threads.min(len).max(1)
}

/// Start of chunk `w` of `t` over `len` elements: `w * len / t`. Chunk `w`
/// is `[bound(w), bound(w + 1))`, so chunk sizes differ by at most one.
fn bound(w: usize, len: usize, t: usize) -> usize {
    (w as u128 * len as u128 / t as u128) as usize
}

/// `plain` over contiguous chunks of the array, one scoped thread per chunk.
pub fn parallel(
    a: &mut [u32],
    inner: u32,
    u: u32,
    r: u32,
    threads: usize,
) -> Result<(), BenchError> {
    let len = a.len();
    let t = parallel_threads(len, threads);
    std::thread::scope(|scope| -> Result<(), BenchError> {
        let mut handles = Vec::with_capacity(t);
        let mut rest = a;
        for w in 0..t {
            let (part, tail) = rest.split_at_mut(bound(w + 1, len, t) - bound(w, len, t));
            rest = tail;
            let handle = std::thread::Builder::new()
                .name(format!("cpu_loops-{w}"))
                .spawn_scoped(scope, move || plain(part, inner, u, r))?;
            handles.push(handle);
        }
        for handle in handles {
            handle
                .join()
                .map_err(|_| BenchError::runtime("a cpu_loops worker thread panicked"))?;
        }
        Ok(())
    })
}

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    if ctx.n > U32_MAX {
        return Err(BenchError::usage(format!(
            "cpu_loops needs --n <= {U32_MAX}, got {}",
            ctx.n
        )));
    }
    let n = ctx.n_usize()?;
    let u = u32::try_from(ctx.param_u64("u")?)
        .map_err(|_| BenchError::runtime("param u does not fit in u32"))?;
    let inner = u32::try_from(ctx.param_u64("inner")?)
        .map_err(|_| BenchError::runtime("param inner does not fit in u32"))?;
    // r < N <= u32::MAX
    let r = lcg::element(42, 0, ctx.n) as u32;
    let mut a = vec![0u32; n];

    let variant = ctx.variant;
    let threads = match variant {
        "parallel" => parallel_threads(n, ctx.threads),
        _ => 1,
    };
    ctx.set_no_runtime(threads);

    ctx.timer.start();
    match variant {
        "plain" => plain(&mut a, inner, u, r),
        "local" => local(&mut a, inner, u, r),
        "unrolled" => unrolled(&mut a, inner, u, r),
        "parallel" => parallel(&mut a, inner, u, r, ctx.threads)?,
        other => return Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
    }
    let checksum = u64::from(a[r as usize]);
    ctx.timer.stop();

    Ok(Outcome {
        checksum,
        tasks_ok: ctx.n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Flavour, RunArgs, mono_ns};
    use crate::workloads::{run as run_workload, test_args};

    fn checksum(n: u64, variant: &str, params: &[(&str, &str)], threads: usize) -> String {
        let args = RunArgs {
            threads: Some(threads),
            ..test_args("cpu_loops", n, Some(variant), params)
        };
        let report = run_workload(&args, mono_ns()).unwrap();
        assert_eq!(report.tasks_ok, n);
        assert_eq!(report.runtime.flavour, Flavour::None);
        assert_eq!(report.spawned_ns, None);
        report.checksum
    }

    #[test]
    fn reference_checksums_for_every_variant() {
        for variant in SPEC.variants {
            for threads in [1, 2, 3, 7] {
                let params = [("inner", "1000"), ("u", "10")];
                assert_eq!(
                    checksum(100, variant, &params, threads),
                    "00000000000011be",
                    "{variant}"
                );
                let params = [("inner", "1000"), ("u", "7")];
                assert_eq!(
                    checksum(1000, variant, &params, threads),
                    "0000000000000bdf",
                    "{variant}"
                );
            }
        }
    }

    #[test]
    #[cfg_attr(
        debug_assertions,
        ignore = "a billion iterations: run with `cargo test --release`"
    )]
    fn full_size_reference_checksum() {
        // The billion-loop size; only the parallel variant, to keep the test quick.
        assert_eq!(checksum(10_000, "parallel", &[], 4), "000000000006ddfa");
    }

    #[test]
    fn kernels_agree_on_odd_sizes() {
        for inner in [0u32, 1, 2, 3, 4, 5, 7, 13] {
            for u in [1u32, 2, 3, 10] {
                let mut expect = vec![0u32; 9];
                for v in expect.iter_mut() {
                    *v = (0..inner).map(|j| j % u).sum::<u32>() + 4;
                }
                let mut a = vec![0u32; 9];
                plain(&mut a, inner, u, 4);
                assert_eq!(a, expect, "plain inner={inner} u={u}");
                let mut a = vec![0u32; 9];
                local(&mut a, inner, u, 4);
                assert_eq!(a, expect, "local inner={inner} u={u}");
                let mut a = vec![0u32; 9];
                unrolled(&mut a, inner, u, 4);
                assert_eq!(a, expect, "unrolled inner={inner} u={u}");
                for threads in 1..=12 {
                    let mut a = vec![0u32; 9];
                    parallel(&mut a, inner, u, 4, threads).unwrap();
                    assert_eq!(a, expect, "parallel inner={inner} u={u} threads={threads}");
                }
            }
        }
    }

    #[test]
    fn chunks_cover_the_array() {
        for len in 1..40 {
            for t in 1..=len {
                assert_eq!(bound(0, len, t), 0);
                assert_eq!(bound(t, len, t), len);
                for w in 0..t {
                    let size = bound(w + 1, len, t) - bound(w, len, t);
                    assert!(size == len / t || size == len / t + 1, "len={len} t={t}");
                }
            }
        }
    }

    #[test]
    fn parallel_thread_count() {
        let threads = |n: u64, t: usize| {
            let args = RunArgs {
                threads: Some(t),
                ..test_args("cpu_loops", n, Some("parallel"), &[("inner", "1")])
            };
            run_workload(&args, mono_ns()).unwrap().threads
        };
        assert_eq!(threads(100, 4), 4);
        assert_eq!(threads(3, 8), 3);
        assert_eq!(threads(10, 4), 4);
        assert_eq!(threads(9, 4), 4);
        let args = test_args("cpu_loops", 10, Some("plain"), &[("inner", "1")]);
        assert_eq!(run_workload(&args, mono_ns()).unwrap().threads, 1);
    }
}
