//! `files_read`: N tokio tasks; task i reads fixture file `lcg(42)[i] % 20`
//! whole and computes its 64-bit FNV-1a digest (`digest=on`).
//! Checksum: wrapping sum over tasks of (digest + bytes read); with
//! `digest=off`, of the bytes read.

use super::fsshared::{self, DIGEST, RETAIN, VARIANTS};
use super::spec::{Ctx, Outcome, WorkloadSpec};
use crate::cli::error::BenchError;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "files_read",
    variants: VARIANTS,
    default_variant: "spawn-blocking",
    params: &[RETAIN, DIGEST],
    needs_data_dir: true,
    needs_dsn: false,
    run,
};

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let totals = fsshared::run_file_tasks(ctx, false)?;
    Ok(Outcome {
        checksum: totals.digest_sum,
        tasks_ok: totals.tasks_ok,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::RunArgs;
    use crate::cli::result::Report;
    use crate::cli::timer::mono_ns;
    use crate::workloads::fsshared::{scratch_dir, write_fixture};
    use crate::workloads::spec::{run as run_workload, test_args};

    fn files_read(dir: &std::path::Path, n: u64, variant: &str, params: &[(&str, &str)]) -> Report {
        let args = RunArgs {
            data_dir: Some(dir.to_path_buf()),
            ..test_args(&SPEC, n, Some(variant), params)
        };
        run_workload(&SPEC, &args, mono_ns()).unwrap()
    }

    /// tests/reference.py: with digest=off the checksum is the bytes read.
    const EXPECTED: &[(&str, u64, &str)] = &[
        ("on", 10, "c83d885177b2f53f"),
        ("on", 1000, "3ee62239fbe5c46b"),
        ("on", 10_000, "747ebf5186eb7821"),
        ("off", 10, "0000000000005280"),
        ("off", 1000, "00000000001ea500"),
        ("off", 10_000, "0000000001330080"),
    ];

    #[test]
    fn every_variant_gives_the_reference_checksums() {
        let dir = scratch_dir("files-read");
        write_fixture(&dir).unwrap();
        for variant in SPEC.variants {
            for retain in ["digest", "content"] {
                for &(digest, n, expected) in EXPECTED {
                    let params = [("retain", retain), ("digest", digest)];
                    let report = files_read(&dir, n, variant, &params);
                    assert_eq!(
                        report.checksum, expected,
                        "{variant} {retain} {digest} N={n}"
                    );
                    assert_eq!(report.tasks_ok, n);
                    assert_eq!(report.variant, *variant);
                    let kept = if retain == "content" { n } else { 0 };
                    assert_eq!(report.extra["retained_files"], kept);
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_is_a_runtime_error() {
        let dir = scratch_dir("files-read-missing");
        let args = RunArgs {
            data_dir: Some(dir.clone()),
            ..test_args(&SPEC, 3, None, &[])
        };
        match run_workload(&SPEC, &args, mono_ns()) {
            Err(err) => {
                assert_eq!(err.exit_code(), 1);
                assert!(err.message().contains("2.txt"), "{}", err.message());
            }
            Ok(report) => panic!("expected an error, got {report:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
