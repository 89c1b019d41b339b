//! `cpu_loops`: the billion-loop test. No tokio, no tasks: an array `a` of N
//! u32; for every i, `inner` times `a[i] += j % u`, then `a[i] += r`, with
//! `r = lcg(42)[0] % N`. Checksum: the wrapping 64-bit sum of every `a[i]`, so
//! that each element must hold its loop's result.

use super::spec::{Check, Ctx, Outcome, ParamSpec, WorkloadSpec};
use crate::cli::error::BenchError;
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

/// Accumulate the inner loop in a local starting at 0, add it to `a[i]`
/// once, then add `r`.
#[allow(
    clippy::needless_range_loop,
    reason = "indexing a[i] is part of the loop being measured"
)]
pub fn local(a: &mut [u32], inner: u32, u: u32, r: u32) {
    for i in 0..a.len() {
        let mut s = 0u32;
        for j in 0..inner {
            s = s.wrapping_add(j % u);
        }
        a[i] = a[i].wrapping_add(s);
        a[i] = a[i].wrapping_add(r);
    }
}

/// `local` with the inner loop unrolled by 4, then the remaining
/// `inner % 4` iterations one by one.
#[allow(
    clippy::needless_range_loop,
    reason = "indexing a[i] is part of the loop being measured"
)]
pub fn unrolled(a: &mut [u32], inner: u32, u: u32, r: u32) {
    let bulk = inner - inner % 4;
    for i in 0..a.len() {
        let mut s = 0u32;
        let mut j = 0u32;
        while j < bulk {
            s = s.wrapping_add(j % u);
            s = s.wrapping_add((j + 1) % u);
            s = s.wrapping_add((j + 2) % u);
            s = s.wrapping_add((j + 3) % u);
            j += 4;
        }
        while j < inner {
            s = s.wrapping_add(j % u);
            j += 1;
        }
        a[i] = a[i].wrapping_add(s);
        a[i] = a[i].wrapping_add(r);
    }
}

/// Elements per chunk of `parallel`: ceil(len / threads).
pub fn chunk_len(len: usize, threads: usize) -> usize {
    len.div_ceil(threads.max(1)).max(1)
}

/// Workers of `parallel`: one per non-empty chunk of `chunk_len` elements.
pub fn parallel_threads(len: usize, threads: usize) -> usize {
    len.div_ceil(chunk_len(len, threads))
}

/// `plain` over contiguous chunks of ceil(len / threads) elements, one
/// scoped thread per non-empty chunk (the last may be shorter).
pub fn parallel(
    a: &mut [u32],
    inner: u32,
    u: u32,
    r: u32,
    threads: usize,
) -> Result<(), BenchError> {
    let chunk = chunk_len(a.len(), threads);
    std::thread::scope(|scope| -> Result<(), BenchError> {
        let mut handles = Vec::with_capacity(parallel_threads(a.len(), threads));
        for (w, part) in a.chunks_mut(chunk).enumerate() {
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
        "parallel" => parallel_threads(n, ctx.threads()),
        _ => 1,
    };
    ctx.set_no_runtime(threads);

    ctx.timer.start();
    match variant {
        "plain" => plain(&mut a, inner, u, r),
        "local" => local(&mut a, inner, u, r),
        "unrolled" => unrolled(&mut a, inner, u, r),
        "parallel" => parallel(&mut a, inner, u, r, ctx.threads())?,
        other => return Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
    }
    // every write to `a` is done before the timer stops
    std::hint::black_box(&a);
    ctx.timer.stop();
    let checksum = a.iter().fold(0u64, |sum, &v| sum.wrapping_add(u64::from(v)));

    Ok(Outcome {
        checksum,
        tasks_ok: ctx.n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::RunArgs;
    use crate::cli::result::Flavour;
    use crate::cli::timer::mono_ns;
    use crate::workloads::spec::{run as run_workload, test_args};

    fn checksum(n: u64, variant: &str, params: &[(&str, &str)], threads: usize) -> String {
        let args = RunArgs {
            threads: Some(threads),
            ..test_args(&SPEC, n, Some(variant), params)
        };
        let report = run_workload(&SPEC, &args, mono_ns()).unwrap();
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
                    "000000000006ee38", // 100 x 0x11be: every element holds the same value
                    "{variant}"
                );
                let params = [("inner", "1000"), ("u", "7")];
                assert_eq!(
                    checksum(1000, variant, &params, threads),
                    "00000000002e5f18", // 1,000 x 0xbdf
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
        assert_eq!(checksum(10_000, "parallel", &[], 4), "000000010c3ef5a0"); // 10,000 x 0x6ddfa
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
    fn chunks_are_ceil_len_over_threads() {
        assert_eq!(chunk_len(10, 4), 3);
        assert_eq!(chunk_len(9, 4), 3);
        assert_eq!(chunk_len(3, 8), 1);
        assert_eq!(chunk_len(100, 4), 25);
        for len in 1..60 {
            for t in 1..=70 {
                let chunk = chunk_len(len, t);
                let workers = parallel_threads(len, t);
                assert_eq!(chunk, len.div_ceil(t), "len={len} t={t}");
                assert!(workers <= t && workers >= 1, "len={len} t={t}");
                // Every chunk but the last is full and the last is not empty.
                assert!((workers - 1) * chunk < len && workers * chunk >= len);
            }
        }
    }

    #[test]
    fn loops_agree_from_a_nonzero_start() {
        // The workload's array starts at zero; the loops also agree from
        // any start, with wrapping.
        for inner in [0u32, 3, 4, 9] {
            let start = vec![u32::MAX - 5, 7, 0];
            let mut p = start.clone();
            plain(&mut p, inner, 3, 2);
            let mut l = start.clone();
            local(&mut l, inner, 3, 2);
            let mut un = start.clone();
            unrolled(&mut un, inner, 3, 2);
            assert_eq!(l, p, "inner={inner}");
            assert_eq!(un, p, "inner={inner}");
        }
    }

    #[test]
    fn parallel_thread_count() {
        let threads = |n: u64, t: usize| {
            let args = RunArgs {
                threads: Some(t),
                ..test_args(&SPEC, n, Some("parallel"), &[("inner", "1")])
            };
            run_workload(&SPEC, &args, mono_ns()).unwrap().threads
        };
        assert_eq!(threads(100, 4), 4);
        assert_eq!(threads(3, 8), 3);
        assert_eq!(threads(10, 4), 4);
        // ceil(9 / 4) = 3 elements per chunk: three workers, as in Go.
        assert_eq!(threads(9, 4), 3);
        assert_eq!(threads(5, 4), 3);
        let args = test_args(&SPEC, 10, Some("plain"), &[("inner", "1")]);
        assert_eq!(run_workload(&SPEC, &args, mono_ns()).unwrap().threads, 1);
    }
}
