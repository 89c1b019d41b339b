//! `files_rw`: N tokio tasks; task i picks fixture file `k = lcg(42)[i] % 20`;
//! if k is even it appends `Appended string\n` (open write-only + append +
//! create, write completely, flush, close; `flush=off` drops the file after
//! the write as the article did), then every task reads file k whole and
//! digests it (`digest=on`). Checksum: number of appends plus the total size
//! of the 20 files, measured after the timer has stopped; neither param
//! changes it.

use super::fsshared::{self, DIGEST, FLUSH, RETAIN, VARIANTS};
use super::spec::{Ctx, Outcome, WorkloadSpec};
use crate::cli::error::BenchError;

pub const SPEC: WorkloadSpec = WorkloadSpec {
    name: "files_rw",
    variants: VARIANTS,
    default_variant: "spawn-blocking",
    params: &[RETAIN, DIGEST, FLUSH],
    needs_data_dir: true,
    needs_dsn: false,
    run,
};

fn run(ctx: &mut Ctx) -> Result<Outcome, BenchError> {
    let totals = fsshared::run_file_tasks(ctx, true)?;
    let size = fsshared::fixture_size(ctx.data_dir()?)?;
    ctx.set_extra("appends", totals.appends);
    Ok(Outcome {
        checksum: totals.appends.wrapping_add(size),
        tasks_ok: totals.tasks_ok,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::RunArgs;
    use crate::cli::result::Report;
    use crate::cli::timer::mono_ns;
    use crate::workloads::fsshared::{APPENDED, scratch_dir, write_fixture};
    use crate::workloads::spec::{run as run_workload, test_args};

    /// One run on a freshly written fixture.
    fn files_rw(dir: &std::path::Path, n: u64, variant: &str, params: &[(&str, &str)]) -> Report {
        write_fixture(dir).unwrap();
        let args = RunArgs {
            data_dir: Some(dir.to_path_buf()),
            ..test_args(&SPEC, n, Some(variant), params)
        };
        run_workload(&SPEC, &args, mono_ns()).unwrap()
    }

    #[test]
    fn every_variant_gives_the_reference_checksums() {
        let dir = scratch_dir("files-rw");
        for variant in SPEC.variants {
            for retain in ["digest", "content"] {
                for (digest, flush) in [("on", "on"), ("off", "on"), ("on", "off"), ("off", "off")]
                {
                    for (n, expected) in [
                        (10, "0000000000009dc4"),
                        (1000, "000000000000c0b2"),
                        (10_000, "000000000001e9cc"),
                    ] {
                        let params = [("retain", retain), ("digest", digest), ("flush", flush)];
                        let report = files_rw(&dir, n, variant, &params);
                        let what =
                            format!("{variant} {retain} digest={digest} flush={flush} N={n}");
                        assert_eq!(report.checksum, expected, "{what}");
                        assert_eq!(report.tasks_ok, n, "{what}");
                    }
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn appends_really_land_in_the_files() {
        let dir = scratch_dir("files-rw-appends");
        for (variant, flush) in SPEC.variants.iter().flat_map(|v| [(v, "on"), (v, "off")]) {
            let report = files_rw(&dir, 10, variant, &[("flush", flush)]);
            // Tasks 0 and 1 both pick file 2 (even): it gets their appends.
            let appends = report.extra["appends"].as_u64().unwrap();
            assert_eq!(appends, 4, "{variant} flush={flush}");
            let content = std::fs::read(dir.join("2.txt")).unwrap();
            let tail = &content[content.len() - APPENDED.len()..];
            assert_eq!(tail, APPENDED, "{variant} flush={flush}");
            // file 7 (odd) is untouched
            assert_eq!(std::fs::metadata(dir.join("7.txt")).unwrap().len(), 8 * 192);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
