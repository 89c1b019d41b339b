//! `files_rw`: N tokio tasks; task i picks fixture file `k = lcg(42)[i] % 20`;
//! if k is even it appends `Appended string\n` (open write-only + append +
//! create, write completely, flush, close; `flush=off` drops the file after
//! the write as the article did), then every task reads file k whole and
//! digests it (`digest=on`). After the timer has stopped, every task's read
//! is checked against the contents its file can have had (`History`), and
//! its first byte against file k's first letter. Checksum: number of appends
//! plus the total size of the 20 files, plus for every read its fixture bytes
//! (its size less the appended strings it held) and its first byte; no param
//! changes it.

use std::path::Path;

use super::fsshared::{
    self, APPENDED, DIGEST, FLUSH, RETAIN, TaskRead, VARIANTS, fnv1a64, fnv1a64_more,
};
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
    let digest = ctx.param("digest")? == "on";
    // With flush=off a tokio-fs task's read may come before its own append.
    let own_append_seen = ctx.param("flush")? == "on";
    let dir = ctx.data_dir()?;
    let paths = fsshared::fixture_paths(dir);
    let indices = fsshared::file_indices(ctx.n_usize()?);
    if totals.reads.len() != indices.len() {
        return Err(BenchError::runtime(format!(
            "{} reads collected for {} tasks",
            totals.reads.len(),
            indices.len()
        )));
    }
    let histories = histories(&paths, &indices)?;
    let mut checksum = histories
        .iter()
        .fold(totals.appends, |sum, h| sum.wrapping_add(h.size()));
    for (i, (read, &k)) in totals.reads.iter().zip(&indices).enumerate() {
        let appended = k % 2 == 0;
        let part = histories[k]
            .check(*read, appended && own_append_seen, digest)
            .map_err(|why| {
                BenchError::runtime(format!("task {i}, {}: {why}", paths[k].display()))
            })?;
        checksum = checksum.wrapping_add(part);
    }
    ctx.set_extra("appends", totals.appends);
    Ok(Outcome {
        checksum,
        tasks_ok: totals.tasks_ok,
    })
}

/// Every content a file of files_rw can have held during a run: its fixture
/// content followed by m appended strings, m = 0 ..= appends, in that order
/// (an append adds the whole string or nothing: one write of 16 bytes, which
/// never straddles a page since every size is a multiple of 16).
#[derive(Debug, Clone, PartialEq, Eq)]
struct History {
    /// Size of the fixture content.
    base: u64,
    /// First byte of file k's fixture content: `fixture_letter(k)`.
    letter: u8,
    /// Tasks that appended to the file.
    appends: u64,
    /// `digests[m]`: FNV-1a of the content after m appends.
    digests: Vec<u64>,
}

const STEP: u64 = APPENDED.len() as u64;

/// The first byte of fixture file k: its line 0 is made of the letter
/// `'a' + k % 26`.
fn fixture_letter(k: usize) -> u8 {
    b'a' + (k % 26) as u8
}

impl History {
    fn size(&self) -> u64 {
        self.base + self.appends * STEP
    }

    /// The first byte of the file's content at `len` bytes: the fixture's
    /// letter, or with no fixture content (a file the appends created) the
    /// appended string's, or 0 for nothing.
    fn first(&self, len: u64) -> u8 {
        if self.base > 0 {
            self.letter
        } else if len > 0 {
            APPENDED[0]
        } else {
            0
        }
    }

    /// What one task's read adds to the checksum: its fixture bytes (its
    /// size less the appended strings it held) plus its first byte. Or why
    /// no content of the file's history has that size (and, with `digest`,
    /// that digest), why the read does not begin with the file's first byte
    /// (a read of another file), or why a task that appended (`own_append`)
    /// read the file without its own append.
    fn check(&self, read: TaskRead, own_append: bool, digest: bool) -> Result<u64, String> {
        let extra = read.len.checked_sub(self.base);
        let m = match extra {
            Some(extra) if extra % STEP == 0 && extra / STEP <= self.appends => extra / STEP,
            _ => {
                return Err(format!(
                    "read {} bytes, but the file only ever had {} + 16 m bytes, m = 0 ..= {}",
                    read.len, self.base, self.appends
                ));
            }
        };
        let first = self.first(read.len);
        if read.first != first {
            return Err(format!(
                "read {} bytes beginning with {:?}, but the file begins with {:?}",
                read.len,
                char::from(read.first),
                char::from(first)
            ));
        }
        if own_append && m == 0 {
            return Err(format!(
                "read {} bytes, the file without the task's own append",
                read.len
            ));
        }
        let want = self.digests[m as usize];
        if digest && read.digest != want {
            return Err(format!(
                "read {} bytes with digest {:016x}, but the file had digest {want:016x} at that size",
                read.len, read.digest
            ));
        }
        Ok(self.base + u64::from(read.first))
    }
}

/// Read the 20 files after the tasks (outside the timer) and return the
/// history of each: the final file must end in exactly one appended string
/// per appending task, and what comes before them is the fixture content.
fn histories(paths: &[std::path::PathBuf], indices: &[usize]) -> Result<Vec<History>, BenchError> {
    let mut appends = vec![0u64; paths.len()];
    for &k in indices.iter().filter(|&&k| k % 2 == 0) {
        appends[k] += 1;
    }
    paths
        .iter()
        .zip(appends)
        .enumerate()
        .map(|(k, (path, appends))| history(path, fixture_letter(k), appends))
        .collect()
}

fn history(path: &Path, letter: u8, appends: u64) -> Result<History, BenchError> {
    let bytes = std::fs::read(path)
        .map_err(|e| BenchError::runtime(format!("reading {}: {e}", path.display())))?;
    let tail = appends * STEP;
    let base = (bytes.len() as u64).checked_sub(tail).ok_or_else(|| {
        BenchError::runtime(format!(
            "{}: {} bytes after {appends} appends of {STEP} bytes",
            path.display(),
            bytes.len()
        ))
    })?;
    let mut digests = Vec::with_capacity(appends as usize + 1);
    digests.push(fnv1a64(&bytes[..base as usize]));
    for (m, chunk) in bytes[base as usize..].chunks(APPENDED.len()).enumerate() {
        if chunk != APPENDED {
            return Err(BenchError::runtime(format!(
                "{}: append {} of {appends} is {:?}",
                path.display(),
                m + 1,
                String::from_utf8_lossy(chunk)
            )));
        }
        digests.push(fnv1a64_more(digests[m], chunk));
    }
    Ok(History {
        base,
        letter,
        appends,
        digests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::RunArgs;
    use crate::cli::result::Report;
    use crate::cli::timer::mono_ns;
    use crate::workloads::fsshared::{fixture_content, scratch_dir, write_fixture};
    use crate::workloads::spec::{run as run_workload, test_args};

    /// One run on the fixture as it is in `dir`.
    fn try_files_rw(
        dir: &std::path::Path,
        n: u64,
        variant: &str,
        params: &[(&str, &str)],
    ) -> Result<Report, BenchError> {
        let args = RunArgs {
            data_dir: Some(dir.to_path_buf()),
            ..test_args(&SPEC, n, Some(variant), params)
        };
        run_workload(&SPEC, &args, mono_ns())
    }

    /// One run on a freshly written fixture.
    fn files_rw(dir: &std::path::Path, n: u64, variant: &str, params: &[(&str, &str)]) -> Report {
        write_fixture(dir).unwrap();
        try_files_rw(dir, n, variant, params).unwrap()
    }

    /// What a task hands back for `content` with digest=on.
    fn task_read(content: &[u8]) -> TaskRead {
        TaskRead {
            len: content.len() as u64,
            digest: fnv1a64(content),
            first: content.first().copied().unwrap_or(0),
        }
    }

    #[test]
    fn every_variant_gives_the_reference_checksums() {
        let dir = scratch_dir("files-rw");
        for variant in SPEC.variants {
            for retain in ["digest", "content"] {
                for (digest, flush) in [("on", "on"), ("off", "on"), ("on", "off"), ("off", "off")]
                {
                    // Each includes the fixture bytes and the first byte of
                    // every task's read (f044, 1f65b2 and 134ea4c without the
                    // first bytes; 9dc4, c0b2 and 1e9cc, the appends and final
                    // sizes alone, left the reads out).
                    for (n, expected) in [
                        (10, "000000000000f472"),
                        (1000, "000000000021058e"),
                        (10_000, "00000000014529a2"),
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
    fn every_read_is_checked_against_the_file_history() {
        let dir = scratch_dir("files-rw-history");
        write_fixture(&dir).unwrap();
        let paths = fsshared::fixture_paths(&dir);
        // N = 4 picks files 2, 2, 7, 17: two appends to file 2.
        let indices = fsshared::file_indices(4);
        for _ in 0..2 {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&paths[2])
                .unwrap();
            std::io::Write::write_all(&mut f, APPENDED).unwrap();
        }
        let hs = histories(&paths, &indices).unwrap();
        let h = &hs[2];
        let fixture = fixture_content(2);
        let base = fixture.len() as u64;
        assert_eq!(
            (h.base, h.letter, h.appends, h.size()),
            (base, b'c', 2, base + 32)
        );
        for m in 0..3 {
            let content = [fixture.clone(), APPENDED.repeat(m)].concat();
            let got = h.check(task_read(&content), m > 0, true);
            assert_eq!(got, Ok(base + u64::from(b'c')), "m={m}");
        }
        let full = [fixture.clone(), APPENDED.repeat(2)].concat();
        let read = |len: u64, digest: u64, first: u8| TaskRead { len, digest, first };
        let bad = [
            ("nothing read", read(0, 0, 0), false, false),
            ("short read", read(base + 8, 0, b'c'), false, false),
            (
                "more than the appends",
                read(base + 48, 0, b'c'),
                false,
                false,
            ),
            (
                "digest skipped",
                read(full.len() as u64, 0, b'c'),
                true,
                true,
            ),
            (
                "wrong content",
                read(base, fnv1a64(&fixture_content(3)[..base as usize]), b'd'),
                false,
                true,
            ),
            (
                "wrong first byte",
                read(full.len() as u64, 0, b'd'),
                true,
                false,
            ),
            (
                "first byte not handed",
                read(full.len() as u64, 0, 0),
                true,
                false,
            ),
            ("own append missing", task_read(&fixture), true, true),
        ];
        for (what, r, own, digest) in bad {
            assert!(h.check(r, own, digest).is_err(), "{what} accepted");
        }
        // digest=off: the size and the first byte alone are checked.
        assert_eq!(
            h.check(read(full.len() as u64, 0, b'c'), true, false),
            Ok(base + u64::from(b'c'))
        );

        // A file that does not end in its appends is refused.
        std::fs::write(
            &paths[4],
            [fixture_content(4), b"Appended strinG\n".to_vec()].concat(),
        )
        .unwrap();
        assert!(histories(&paths, &[4]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// File 1's fixture is file 0's plus 192 bytes, the size of 12 appends,
    /// so once file 0 got 12 appends a read of file 1 has a size of file 0's
    /// history. Its first byte (`b`, not `a`) refuses it, with digest=off
    /// too, where the size alone let it pass.
    #[test]
    fn a_read_of_the_next_file_is_refused() {
        let dir = scratch_dir("files-rw-next");
        write_fixture(&dir).unwrap();
        let paths = fsshared::fixture_paths(&dir);
        let indices = [0; 12]; // 12 tasks, all of file 0
        for _ in indices {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&paths[0])
                .unwrap();
            std::io::Write::write_all(&mut f, APPENDED).unwrap();
        }
        let h = &histories(&paths, &indices).unwrap()[0];
        let right = [fixture_content(0), APPENDED.repeat(12)].concat();
        let wrong = fixture_content(1);
        assert_eq!(wrong.len(), right.len());
        for digest in [false, true] {
            let got = h.check(task_read(&right), true, digest);
            assert_eq!(got, Ok(192 + u64::from(b'a')), "digest={digest}");
            let got = h.check(task_read(&wrong), true, digest);
            assert!(got.is_err(), "digest={digest}: file 1 read as file 0's");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A fixture whose 0.txt and 1.txt hold each other's content fails the
    /// run with digest=on and off alike: the histories, taken from the files
    /// themselves, fit every read, but the reads do not begin with the
    /// files' letters.
    #[test]
    fn swapped_files_fail_the_run() {
        let dir = scratch_dir("files-rw-swapped");
        for variant in SPEC.variants {
            for digest in ["on", "off"] {
                write_fixture(&dir).unwrap();
                std::fs::write(dir.join("0.txt"), fixture_content(1)).unwrap();
                std::fs::write(dir.join("1.txt"), fixture_content(0)).unwrap();
                let got = try_files_rw(&dir, 100, variant, &[("digest", digest)]);
                assert!(
                    got.is_err(),
                    "{variant} digest={digest}: swapped files accepted"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file missing from the fixture is created by its first append: its
    /// reads begin with the appended string's `A`.
    #[test]
    fn a_missing_even_file_is_created() {
        let dir = scratch_dir("files-rw-created");
        write_fixture(&dir).unwrap();
        // Task 0 picks file 2.
        std::fs::remove_file(dir.join("2.txt")).unwrap();
        let report = try_files_rw(&dir, 1, "spawn-blocking", &[]).unwrap();
        let others: u64 = (0..fsshared::FILES)
            .filter(|&k| k != 2)
            .map(|k| fixture_content(k).len() as u64)
            .sum();
        let want = 1 + others + STEP + u64::from(b'A');
        assert_eq!(report.checksum, format!("{want:016x}"));
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
