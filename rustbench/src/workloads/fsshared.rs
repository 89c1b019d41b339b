//! What `files_read` and `files_rw` share: the fixture layout, the FNV-1a
//! digest, the ways of doing file I/O from a tokio task, and the task loop
//! itself.
//!
//! Each piece of work the 2022 programs skipped has a parameter that turns it
//! off (`digest`, and `flush` for the appends), so that its cost can be
//! measured; the defaults do the whole work of the specification.
//!
//! Fixture: `DIR/0.txt` .. `DIR/19.txt`; file k has `3 * (k + 1)` lines and
//! line j is 63 copies of `'a' + (k + j) % 26` followed by `'\n'`.

use std::io::Write;
use std::os::fd::IntoRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use super::spec::{Check, Ctx, ParamSpec};
use crate::cli::error::BenchError;
use crate::cli::result::Flavour;
use crate::cli::rlimit::nofile_soft_limit;
use crate::lcg;

/// Number of fixture files.
pub const FILES: usize = 20;

/// What an appending task writes.
pub const APPENDED: &[u8] = b"Appended string\n";

/// Variants shared by both file workloads; the first is the default.
pub const VARIANTS: &[&str] = &[
    "spawn-blocking",
    "spawn-blocking-digest",
    "tokio-fs",
    "blocking-in-task",
];

/// `retain`: keep only each task's digest and size, or (as the article did)
/// every file's content until all tasks ended.
pub const RETAIN: ParamSpec = ParamSpec {
    key: "retain",
    default: "digest",
    check: Check::OneOf(&["digest", "content"]),
};

/// `digest`: FNV-1a over every file read (`on`), or only its size (`off`, the
/// article's programs computed nothing from what they read).
pub const DIGEST: ParamSpec = ParamSpec {
    key: "digest",
    default: "on",
    check: Check::OneOf(&["on", "off"]),
};

/// `flush` (files_rw): wait until each append has reached the file and check
/// its close (`on`), or drop the file right after `write_all` (`off`, the
/// article's Rust: tokio then writes and closes it on its blocking pool, and
/// the same task's read may not see the append).
pub const FLUSH: ParamSpec = ParamSpec {
    key: "flush",
    default: "on",
    check: Check::OneOf(&["on", "off"]),
};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// 64-bit FNV-1a.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_more(FNV_OFFSET, bytes)
}

/// Continue the FNV-1a hash `h` over `bytes`: `fnv1a64_more(fnv1a64(a), b)`
/// is `fnv1a64` of `a` followed by `b`.
pub fn fnv1a64_more(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME))
}

/// How a task does its file I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// `tokio::fs` (each call is a `spawn_blocking` inside tokio).
    TokioFs,
    /// `std::fs` inside one `tokio::task::spawn_blocking` per task.
    SpawnBlocking,
    /// As `SpawnBlocking`, with the digest computed inside the
    /// `spawn_blocking` closure too.
    SpawnBlockingDigest,
    /// `std::fs` called directly in the async task, blocking its worker.
    BlockingInTask,
}

impl Io {
    fn from_variant(variant: &str) -> Result<Self, BenchError> {
        match variant {
            "tokio-fs" => Ok(Io::TokioFs),
            "spawn-blocking" => Ok(Io::SpawnBlocking),
            "spawn-blocking-digest" => Ok(Io::SpawnBlockingDigest),
            "blocking-in-task" => Ok(Io::BlockingInTask),
            other => Err(BenchError::runtime(format!("unhandled variant '{other}'"))),
        }
    }
}

/// `DIR/0.txt` .. `DIR/19.txt`.
pub fn fixture_paths(dir: &Path) -> Vec<PathBuf> {
    (0..FILES).map(|k| dir.join(format!("{k}.txt"))).collect()
}

/// File index of every task: `lcg(42)[i] % 20`.
pub fn file_indices(n: usize) -> Vec<usize> {
    lcg::sequence(42, n, FILES as u64)
        .into_iter()
        .map(|k| k as usize)
        .collect()
}

/// Content of fixture file k.
#[cfg(test)]
pub fn fixture_content(k: usize) -> Vec<u8> {
    let mut content = Vec::with_capacity(3 * (k + 1) * 64);
    for j in 0..3 * (k + 1) {
        let letter = b'a' + ((k + j) % 26) as u8;
        content.extend(std::iter::repeat_n(letter, 63));
        content.push(b'\n');
    }
    content
}

/// Write (or restore) the 20 fixture files in `dir`.
#[cfg(test)]
pub fn write_fixture(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for k in 0..FILES {
        std::fs::write(dir.join(format!("{k}.txt")), fixture_content(k))?;
    }
    Ok(())
}

/// A fresh, empty directory under the system temp dir.
#[cfg(test)]
pub fn scratch_dir(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rustbench-test-{tag}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Close a file and report the error `close(2)` returns, which dropping a
/// `File` would silently discard.
pub fn close_checked(file: std::fs::File) -> std::io::Result<()> {
    let fd = file.into_raw_fd();
    // SAFETY: `fd` was just released by `into_raw_fd`, so this is its only
    // owner and it is closed exactly once.
    if unsafe { libc::close(fd) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn io_error(what: &str, path: &Path, err: std::io::Error) -> BenchError {
    BenchError::runtime(format!("{what} {}: {err}", path.display()))
}

/// Append `APPENDED` with `std::fs`: open write-only + append + create
/// (mode 0644), write it completely (a `std::fs::File` is unbuffered: the
/// bytes are in the file when `write_all` returns), close. With `flush` the
/// close is checked; without, the file is dropped, which closes it unchecked.
fn append_std(path: &Path, flush: bool) -> Result<(), BenchError> {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .open(path)
        .map_err(|e| io_error("opening for append", path, e))?;
    file.write_all(APPENDED)
        .map_err(|e| io_error("appending to", path, e))?;
    if flush {
        close_checked(file).map_err(|e| io_error("closing", path, e))?;
    }
    Ok(())
}

/// Append `APPENDED` with `tokio::fs`. `write_all` only hands the bytes to a
/// blocking-pool write; with `flush` the task waits for that write (so the
/// append has reached the file before its read) and checks the close.
/// Without, the file is dropped at once: tokio finishes the write and closes
/// the file on its blocking pool, unchecked (the article's code). A lost
/// append would still show: the checksum counts the files' final sizes.
async fn append_tokio(path: &Path, flush: bool) -> Result<(), BenchError> {
    let mut file = tokio::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .open(path)
        .await
        .map_err(|e| io_error("opening for append", path, e))?;
    file.write_all(APPENDED)
        .await
        .map_err(|e| io_error("appending to", path, e))?;
    if flush {
        file.flush()
            .await
            .map_err(|e| io_error("flushing", path, e))?;
        let file = file.into_std().await;
        close_checked(file).map_err(|e| io_error("closing", path, e))?;
    }
    Ok(())
}

fn read_std(path: &Path) -> Result<Vec<u8>, BenchError> {
    std::fs::read(path).map_err(|e| io_error("reading", path, e))
}

/// What one task hands back.
struct Read {
    digest: u64,
    len: u64,
    appended: bool,
    /// The first byte read (0 if none), which files_rw checks against the
    /// file's letter; it sits in what was `appended`'s padding, so a `Read`
    /// is as large as without it.
    first: u8,
    content: Option<Vec<u8>>,
}

/// The params, as a task needs them.
#[derive(Debug, Clone, Copy)]
struct Options {
    /// retain=content
    keep: bool,
    /// digest=on
    digest: bool,
    /// flush=on (files_rw; files_read never appends)
    flush: bool,
}

/// What every task shares.
struct Shared {
    paths: Vec<PathBuf>,
    opts: Options,
    /// tokio-fs appends only: bounds the append handles open at once.
    append_handles: Option<Semaphore>,
}

impl Options {
    /// What a task hands back for the `content` it read: its digest (0 with
    /// digest=off), size and first byte, and the content itself with
    /// `retain=content`.
    fn digested(self, content: Vec<u8>, appended: bool) -> Read {
        Read {
            digest: if self.digest { fnv1a64(&content) } else { 0 },
            len: content.len() as u64,
            appended,
            first: content.first().copied().unwrap_or(0),
            content: self.keep.then_some(content),
        }
    }
}

// One async fn per way of doing the I/O, and for tokio-fs one without the
// append, so that a spawned task holds only its own state machine: a task
// cell is rounded up to 128 bytes, and the tokio-fs append's state machine
// (about 440 bytes) made every files_read task cell 640 bytes instead of 256.

/// tokio-fs, no append: read file `k` whole with `tokio::fs::read`, then
/// digest it.
async fn tokio_fs_read(shared: Arc<Shared>, k: usize) -> Result<Read, BenchError> {
    let path = &shared.paths[k];
    let content = tokio::fs::read(path)
        .await
        .map_err(|e| io_error("reading", path, e))?;
    Ok(shared.opts.digested(content, false))
}

/// tokio-fs with the append: append to file `k` with `tokio::fs`, then read
/// it whole with `tokio::fs::read` and digest it.
async fn tokio_fs_append_read(shared: Arc<Shared>, k: usize) -> Result<Read, BenchError> {
    let path = &shared.paths[k];
    {
        let _permit = match &shared.append_handles {
            Some(handles) => Some(handles.acquire().await?),
            None => None,
        };
        append_tokio(path, shared.opts.flush).await?;
    }
    let content = tokio::fs::read(path)
        .await
        .map_err(|e| io_error("reading", path, e))?;
    Ok(shared.opts.digested(content, true))
}

/// spawn-blocking: the append and the read with `std::fs` inside one
/// `spawn_blocking`, then the digest.
async fn spawn_blocking_task(
    shared: Arc<Shared>,
    k: usize,
    append: bool,
) -> Result<Read, BenchError> {
    let opts = shared.opts;
    let content = tokio::task::spawn_blocking(move || {
        let path = &shared.paths[k];
        if append {
            append_std(path, opts.flush)?;
        }
        read_std(path)
    })
    .await??;
    Ok(opts.digested(content, append))
}

/// spawn-blocking-digest: the append, the read and the digest inside one
/// `spawn_blocking`, which hands back the digest and the size (and the
/// content only with `retain=content`) instead of every content read: a
/// content no longer waits behind the `JoinHandle` for the task's next poll.
async fn spawn_blocking_digest_task(
    shared: Arc<Shared>,
    k: usize,
    append: bool,
) -> Result<Read, BenchError> {
    tokio::task::spawn_blocking(move || {
        let path = &shared.paths[k];
        if append {
            append_std(path, shared.opts.flush)?;
        }
        let content = read_std(path)?;
        Ok::<_, BenchError>(shared.opts.digested(content, append))
    })
    .await?
}

/// blocking-in-task: the append and the read with `std::fs` called directly
/// in the task, blocking its worker, then the digest.
async fn blocking_in_task(shared: Arc<Shared>, k: usize, append: bool) -> Result<Read, BenchError> {
    let path = &shared.paths[k];
    if append {
        append_std(path, shared.opts.flush)?;
    }
    let content = read_std(path)?;
    Ok(shared.opts.digested(content, append))
}

/// File descriptors kept free of tokio-fs append handles: one per tokio
/// blocking thread (512 by default, each may hold a file open for a read)
/// plus stdio and the runtime's own descriptors.
const FD_RESERVE: u64 = 576;

/// How many tokio-fs append handles may be open at once: the soft
/// open-file limit (already raised to the hard limit) minus `FD_RESERVE`.
///
/// A tokio-fs append crosses the blocking pool's FIFO queue twice with the
/// file open (open, then write), so with many tasks nearly every file gets
/// opened before the first write runs, and at N = 100,000 the program would
/// die with EMFILE. The bound only takes effect where that would happen.
fn append_handle_bound() -> Result<usize, BenchError> {
    let soft = nofile_soft_limit()?;
    let bound = soft.saturating_sub(FD_RESERVE).max(16);
    Ok(usize::try_from(bound)
        .unwrap_or(usize::MAX)
        .min(Semaphore::MAX_PERMITS))
}

/// The size, digest (0 with `digest=off`) and first byte (0 if none) of one
/// task's read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TaskRead {
    pub len: u64,
    pub digest: u64,
    pub first: u8,
}

/// Totals over all tasks.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Totals {
    /// Wrapping sum over tasks of `digest + bytes read`.
    pub digest_sum: u64,
    /// Number of appends done.
    pub appends: u64,
    /// Tasks collected.
    pub tasks_ok: u64,
    /// files_rw only (empty for files_read): every task's read, in task
    /// order, to be checked after the timer against what the file held.
    pub reads: Vec<TaskRead>,
}

/// An on/off param as a bool.
fn switch(ctx: &Ctx, key: &str) -> Result<bool, BenchError> {
    match ctx.param(key)? {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(BenchError::runtime(format!("unhandled {key} '{other}'"))),
    }
}

/// Run N file tasks on a multi-thread runtime. With `append_even`, a task
/// whose file index is even appends before reading (files_rw, which declares
/// `flush`). Spawns every task, awaits the handles in spawn order; with
/// `retain=content` every file content is kept until after the timer has
/// stopped. With `append_even`, every task's size, digest and first byte are
/// kept too (`Totals::reads`, 24 bytes per task with alignment, allocated
/// before the timer), as gobench keeps every task's result.
pub fn run_file_tasks(ctx: &mut Ctx, append_even: bool) -> Result<Totals, BenchError> {
    let n = ctx.n_usize()?;
    let io = Io::from_variant(ctx.variant)?;
    let keep = match ctx.param("retain")? {
        "digest" => false,
        "content" => true,
        other => return Err(BenchError::runtime(format!("unhandled retain '{other}'"))),
    };
    let digest = switch(ctx, "digest")?;
    let flush = if append_even {
        switch(ctx, "flush")?
    } else {
        true
    };
    let append_handles = if append_even && io == Io::TokioFs {
        let bound = append_handle_bound()?;
        ctx.set_extra("append_handle_bound", bound as u64);
        Some(Semaphore::new(bound))
    } else {
        None
    };
    let shared = Arc::new(Shared {
        paths: fixture_paths(ctx.data_dir()?),
        opts: Options {
            keep,
            digest,
            flush,
        },
        append_handles,
    });
    let indices = file_indices(n);
    let mut kept: Vec<Vec<u8>> = Vec::with_capacity(if keep { n } else { 0 });

    let runtime = ctx.runtime(Flavour::MultiThread)?;
    let timer = &mut ctx.timer;
    let totals = runtime.block_on(async {
        let mut handles = Vec::with_capacity(n);
        let mut totals = Totals {
            reads: Vec::with_capacity(if append_even { n } else { 0 }),
            ..Totals::default()
        };
        timer.start();
        for &k in &indices {
            let append = append_even && k % 2 == 0;
            let shared = Arc::clone(&shared);
            handles.push(match (io, append) {
                (Io::TokioFs, false) => tokio::spawn(tokio_fs_read(shared, k)),
                (Io::TokioFs, true) => tokio::spawn(tokio_fs_append_read(shared, k)),
                (Io::SpawnBlocking, _) => tokio::spawn(spawn_blocking_task(shared, k, append)),
                (Io::SpawnBlockingDigest, _) => {
                    tokio::spawn(spawn_blocking_digest_task(shared, k, append))
                }
                (Io::BlockingInTask, _) => tokio::spawn(blocking_in_task(shared, k, append)),
            });
        }
        timer.mark_spawned();
        for handle in handles {
            let read = handle.await??;
            totals.digest_sum = totals
                .digest_sum
                .wrapping_add(read.digest)
                .wrapping_add(read.len);
            totals.appends += u64::from(read.appended);
            if append_even {
                totals.reads.push(TaskRead {
                    len: read.len,
                    digest: read.digest,
                    first: read.first,
                });
            }
            totals.tasks_ok += 1;
            if let Some(content) = read.content {
                kept.push(content);
            }
        }
        timer.stop();
        Ok::<_, BenchError>(totals)
    })?;
    drop(runtime);
    ctx.set_extra("retained_files", kept.len() as u64);
    drop(kept);
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn fixture_layout() {
        let c0 = fixture_content(0);
        assert_eq!(c0.len(), 3 * 64);
        assert_eq!(&c0[..63], &[b'a'; 63][..]);
        assert_eq!(c0[63], b'\n');
        assert_eq!(c0[64], b'b');
        let c19 = fixture_content(19);
        assert_eq!(c19.len(), 60 * 64);
        // line 7 of file 19: 'a' + 26 % 26
        assert_eq!(c19[7 * 64], b'a');
        let total: usize = (0..FILES).map(|k| fixture_content(k).len()).sum();
        assert_eq!(total, 40_320);
    }

    #[test]
    fn a_task_holds_only_its_own_state_machine() {
        let shared = Arc::new(Shared {
            paths: fixture_paths(Path::new("/nonexistent")),
            opts: Options {
                keep: false,
                digest: true,
                flush: true,
            },
            append_handles: None,
        });
        let blocking = std::mem::size_of_val(&spawn_blocking_task(Arc::clone(&shared), 0, false));
        let in_closure =
            std::mem::size_of_val(&spawn_blocking_digest_task(Arc::clone(&shared), 0, false));
        let read = std::mem::size_of_val(&tokio_fs_read(Arc::clone(&shared), 0));
        let append = std::mem::size_of_val(&tokio_fs_append_read(Arc::clone(&shared), 0));
        assert!(blocking <= 128, "spawn-blocking task of {blocking} bytes");
        assert!(
            in_closure <= 128,
            "spawn-blocking-digest task of {in_closure} bytes"
        );
        // files_read's tokio-fs task does not carry the append's state machine
        assert!(read <= 128, "tokio-fs read task of {read} bytes");
        assert!(read < append, "{read} vs {append}");
        // A task's first byte sits in padding: what a task hands back is no
        // larger than its digest, size, append flag and content alone.
        assert_eq!(std::mem::size_of::<Read>(), 48);
    }

    #[test]
    fn indices_follow_the_lcg() {
        assert_eq!(file_indices(4), vec![2, 2, 7, 17]);
    }

    #[test]
    fn both_ways_of_closing_keep_the_data() {
        let dir = scratch_dir("close");
        let path = dir.join("x");
        append_std(&path, true).unwrap();
        append_std(&path, false).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [APPENDED, APPENDED].concat());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
