//! Command line, errors, clocks, the workload timer and the result line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

pub const USAGE: &str = "usage: rustbench <workload> --n N [--variant V] [--threads T] \
[--data-dir DIR] [--param KEY=VALUE ...] | rustbench list \
(the mysql and postgres workloads read their server's URL from BENCH_DSN)";

/// The environment variable that holds the database server's URL
/// (`mysql://user:pass@host:port/db`, `postgres://...`). A URL with a
/// password never goes on the command line, where every local user can read
/// it.
pub const DSN_ENV: &str = "BENCH_DSN";

/// Version strings recorded by build.rs.
pub const RUSTC_VERSION: &str = env!("RUSTBENCH_RUSTC_VERSION");
pub const TOKIO_VERSION: &str = env!("RUSTBENCH_TOKIO_VERSION");

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Every failure ends the program: `Usage` with exit status 2 (bad command
/// line), `Runtime` with exit status 1 (anything that went wrong while running).
///
/// Any `std::error::Error` converts into a `Runtime` error, so workloads can
/// use `?` on I/O, join, driver and pool errors alike.
pub enum BenchError {
    Usage(String),
    Runtime(String),
}

impl BenchError {
    pub fn usage(msg: impl Into<String>) -> Self {
        BenchError::Usage(msg.into())
    }

    pub fn runtime(msg: impl Into<String>) -> Self {
        BenchError::Runtime(msg.into())
    }

    /// The message without the prefix `line` adds.
    pub fn message(&self) -> &str {
        match self {
            BenchError::Usage(msg) | BenchError::Runtime(msg) => msg,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            BenchError::Usage(_) => 2,
            BenchError::Runtime(_) => 1,
        }
    }

    /// The message as a single line, ready for stderr, with the password
    /// of BENCH_DSN redacted wherever a driver may have quoted it.
    pub fn line(&self) -> String {
        let text = match self {
            BenchError::Usage(msg) => format!("rustbench: {msg}; {USAGE}"),
            BenchError::Runtime(msg) => format!("rustbench: error: {msg}"),
        };
        scrub(&one_line(&text))
    }
}

impl<E: std::error::Error> From<E> for BenchError {
    fn from(err: E) -> Self {
        // Include the whole chain of causes: driver errors often hide the
        // useful part in `source()`.
        let mut msg = err.to_string();
        let mut source = err.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !msg.contains(&text) {
                msg.push_str(": ");
                msg.push_str(&text);
            }
            source = cause.source();
        }
        BenchError::Runtime(msg)
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Usage(msg) => write!(f, "usage error: {msg}"),
            BenchError::Runtime(msg) => write!(f, "runtime error: {msg}"),
        }
    }
}

impl fmt::Debug for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `text` with the password of the DSN in BENCH_DSN redacted (see
/// [`redact_password`]); `text` unchanged when BENCH_DSN holds none.
pub fn scrub(text: &str) -> String {
    match std::env::var(DSN_ENV) {
        Ok(dsn) => redact_password(text, &dsn),
        Err(_) => text.to_string(),
    }
}

/// The password of a `scheme://user:password@host/...` URL, if it has one.
pub fn dsn_password(dsn: &str) -> Option<&str> {
    let (_, rest) = dsn.split_once("://")?;
    // The authority ends at the first '/', '?' or '#'; its userinfo at the
    // last '@' inside it.
    let authority = rest.split(['/', '?', '#']).next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then_some(password)
}

/// The shortest password also redacted where it stands alone; a shorter
/// one cannot be told apart from ordinary words of a message and is only
/// redacted where it stands between `user:` and `@`.
const MIN_BARE_PASSWORD: usize = 4;

/// `text` with the password of `dsn` replaced by `***`: the whole DSN as
/// `scheme://user:***@host...`, any `:password@`, and (when it is at least
/// `MIN_BARE_PASSWORD` bytes long) the password itself, also in its
/// percent-decoded form.
pub fn redact_password(text: &str, dsn: &str) -> String {
    let Some(password) = dsn_password(dsn) else {
        return text.to_string();
    };
    let mut out = text.replace(&format!(":{password}@"), ":***@");
    let decoded = percent_decode(password);
    for secret in [password, decoded.as_str()] {
        if secret.len() >= MIN_BARE_PASSWORD {
            out = out.replace(secret, "***");
        }
    }
    out
}

/// `%XX` escapes decoded (invalid ones kept as they are).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The DSN in BENCH_DSN; `None` when it is unset or empty. A value that is
/// not UTF-8 is a usage error.
pub fn dsn_from_env() -> Result<Option<String>, BenchError> {
    match std::env::var(DSN_ENV) {
        Ok(dsn) if dsn.is_empty() => Ok(None),
        Ok(dsn) => Ok(Some(dsn)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(BenchError::usage(format!("{DSN_ENV} is not valid UTF-8")))
        }
    }
}

/// Collapse any line breaks so that an error always fits on one line.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `rustbench list`
    List,
    /// `rustbench --help`
    Help,
    /// `rustbench <workload> ...`
    Run(RunArgs),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunArgs {
    pub workload: String,
    pub n: u64,
    pub variant: Option<String>,
    pub threads: Option<usize>,
    pub data_dir: Option<PathBuf>,
    /// The database server's URL, from BENCH_DSN (never from the command
    /// line): `main` fills it in, tests set it directly.
    pub dsn: Option<String>,
    /// `--param KEY=VALUE` pairs in command-line order.
    pub params: Vec<(String, String)>,
}

/// Parse a non-negative decimal integer: ASCII digits only (no sign, no
/// spaces, no underscores), within u64.
pub fn parse_uint(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>().ok()
}

/// Parse the arguments after the program name.
pub fn parse_args<I, S>(args: I) -> Result<Command, BenchError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut args = args.into_iter().map(Into::into);
    let first = match args.next() {
        Some(first) => first,
        None => return Err(BenchError::usage("missing workload")),
    };
    match first.as_str() {
        "-h" | "--help" | "help" => {
            return match args.next() {
                None => Ok(Command::Help),
                Some(extra) => Err(BenchError::usage(format!("unexpected argument '{extra}'"))),
            };
        }
        "list" => {
            return match args.next() {
                None => Ok(Command::List),
                Some(extra) => Err(BenchError::usage(format!(
                    "unexpected argument '{extra}' after 'list'"
                ))),
            };
        }
        _ => {}
    }
    if first.starts_with('-') {
        return Err(BenchError::usage(format!(
            "expected a workload name first, got '{first}'"
        )));
    }

    let mut run = RunArgs {
        workload: first,
        ..RunArgs::default()
    };
    let mut n: Option<u64> = None;

    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(Command::Help);
        }
        let Some(body) = arg.strip_prefix("--") else {
            return Err(BenchError::usage(format!("unexpected argument '{arg}'")));
        };
        let (flag, inline) = match body.split_once('=') {
            Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
            None => (body.to_string(), None),
        };
        if flag == "dsn" {
            // Its value is never read, so it cannot end up in a message.
            return Err(BenchError::usage(format!(
                "--dsn is not accepted (a password on the command line is visible to every \
                 local user): set the environment variable {DSN_ENV} to the server's URL instead"
            )));
        }
        if !matches!(
            flag.as_str(),
            "n" | "variant" | "threads" | "data-dir" | "param"
        ) {
            return Err(BenchError::usage(format!("unknown flag '--{flag}'")));
        }
        let value = match inline {
            Some(value) => value,
            None => args
                .next()
                .ok_or_else(|| BenchError::usage(format!("flag '--{flag}' needs a value")))?,
        };
        let once = |present: bool| {
            if present {
                Err(BenchError::usage(format!("flag '--{flag}' given twice")))
            } else {
                Ok(())
            }
        };
        match flag.as_str() {
            "n" => {
                once(n.is_some())?;
                match parse_uint(&value) {
                    Some(v) if v > 0 => n = Some(v),
                    _ => {
                        return Err(BenchError::usage(format!(
                            "--n must be a positive integer, got '{value}'"
                        )));
                    }
                }
            }
            "variant" => {
                once(run.variant.is_some())?;
                run.variant = Some(value);
            }
            "threads" => {
                once(run.threads.is_some())?;
                match parse_uint(&value).and_then(|v| usize::try_from(v).ok()) {
                    Some(v) if v > 0 => run.threads = Some(v),
                    _ => {
                        return Err(BenchError::usage(format!(
                            "--threads must be a positive integer, got '{value}'"
                        )));
                    }
                }
            }
            "data-dir" => {
                once(run.data_dir.is_some())?;
                if value.is_empty() {
                    return Err(BenchError::usage("--data-dir must not be empty"));
                }
                run.data_dir = Some(PathBuf::from(value));
            }
            "param" => {
                let Some((key, val)) = value.split_once('=') else {
                    return Err(BenchError::usage(format!(
                        "--param expects KEY=VALUE, got '{value}'"
                    )));
                };
                if key.is_empty() {
                    return Err(BenchError::usage(format!(
                        "--param expects KEY=VALUE, got '{value}'"
                    )));
                }
                if run.params.iter().any(|(k, _)| k == key) {
                    return Err(BenchError::usage(format!("--param {key} given twice")));
                }
                run.params.push((key.to_string(), val.to_string()));
            }
            _ => unreachable!("flag names are checked above"),
        }
    }

    run.n = n.ok_or_else(|| BenchError::usage("missing --n"))?;
    Ok(Command::Run(run))
}

// ---------------------------------------------------------------------------
// Clock, timer, resource limits
// ---------------------------------------------------------------------------

/// CLOCK_MONOTONIC in nanoseconds: the clock an external sampler uses to
/// line its samples up with `t0_mono_ns`.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    // CLOCK_MONOTONIC is always supported on Linux and the pointer is valid,
    // so this cannot fail; a failure would make every time meaningless.
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC) failed");
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// Workload timer. All points are CLOCK_MONOTONIC nanoseconds.
#[derive(Debug, Clone)]
pub struct Timer {
    process_start: u64,
    start: Option<u64>,
    spawned: Option<u64>,
    stop: Option<u64>,
}

impl Timer {
    /// `process_start` is `mono_ns()` read on entry to `main`.
    pub fn new(process_start: u64) -> Self {
        Timer {
            process_start,
            start: None,
            spawned: None,
            stop: None,
        }
    }

    /// Call immediately before the first task is spawned.
    pub fn start(&mut self) {
        self.start = Some(mono_ns());
    }

    /// Call as soon as the last task has been spawned.
    pub fn mark_spawned(&mut self) {
        self.spawned = Some(mono_ns());
    }

    /// Call as soon as the last result has been collected.
    pub fn stop(&mut self) {
        self.stop = Some(mono_ns());
    }

    /// (t0_mono_ns, setup_ns, elapsed_ns, spawned_ns)
    pub fn finish(&self) -> Result<(u64, u64, u64, Option<u64>), BenchError> {
        let start = self
            .start
            .ok_or_else(|| BenchError::runtime("workload never started its timer"))?;
        let stop = self
            .stop
            .ok_or_else(|| BenchError::runtime("workload never stopped its timer"))?;
        if stop < start {
            return Err(BenchError::runtime("timer stopped before it was started"));
        }
        let spawned = match self.spawned {
            Some(t) if t < start || t > stop => {
                return Err(BenchError::runtime("spawn mark outside the timed interval"));
            }
            Some(t) => Some(t - start),
            None => None,
        };
        Ok((
            start,
            start.saturating_sub(self.process_start),
            stop - start,
            spawned,
        ))
    }
}

/// Raise the soft RLIMIT_NOFILE to the hard limit. Returns the new soft limit.
pub fn raise_nofile_limit() -> Result<u64, BenchError> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(BenchError::runtime(format!(
            "getrlimit(RLIMIT_NOFILE): {}",
            std::io::Error::last_os_error()
        )));
    }
    if lim.rlim_cur == lim.rlim_max {
        return Ok(lim.rlim_cur);
    }
    let wanted = libc::rlimit {
        rlim_cur: lim.rlim_max,
        rlim_max: lim.rlim_max,
    };
    // SAFETY: `wanted` is a valid rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &wanted) } == 0 {
        return Ok(wanted.rlim_cur);
    }
    let first = std::io::Error::last_os_error();
    // Linux refuses an unlimited RLIMIT_NOFILE (the ceiling is fs.nr_open);
    // with an unlimited hard limit, use that ceiling instead.
    if lim.rlim_max == libc::RLIM_INFINITY {
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|s| parse_uint(s.trim()));
        if let Some(nr_open) = nr_open {
            let capped = libc::rlimit {
                rlim_cur: nr_open as libc::rlim_t,
                rlim_max: nr_open as libc::rlim_t,
            };
            // SAFETY: `capped` is a valid rlimit.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &capped) } == 0 {
                return Ok(nr_open);
            }
        }
    }
    Err(BenchError::runtime(format!(
        "setrlimit(RLIMIT_NOFILE, {}): {first}",
        lim.rlim_max
    )))
}

// ---------------------------------------------------------------------------
// Result line
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flavour {
    MultiThread,
    CurrentThread,
    None,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuntimeInfo {
    pub version: &'static str,
    pub tokio: &'static str,
    pub flavour: Flavour,
}

/// The JSON object printed on the last line of stdout.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub lang: &'static str,
    pub workload: String,
    pub variant: String,
    pub n: u64,
    pub threads: usize,
    pub elapsed_ns: u64,
    pub setup_ns: u64,
    /// 16 lowercase hex digits.
    pub checksum: String,
    pub tasks_ok: u64,
    pub params: BTreeMap<String, String>,
    pub runtime: RuntimeInfo,
    pub t0_mono_ns: u64,
    pub spawned_ns: Option<u64>,
    /// Workload-specific keys.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Keys of `Report` that `extra` must not repeat.
pub const REPORT_KEYS: &[&str] = &[
    "lang",
    "workload",
    "variant",
    "n",
    "threads",
    "elapsed_ns",
    "setup_ns",
    "checksum",
    "tasks_ok",
    "params",
    "runtime",
    "t0_mono_ns",
    "spawned_ns",
];

pub fn checksum_hex(checksum: u64) -> String {
    format!("{checksum:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(args: &[&str]) -> Result<RunArgs, BenchError> {
        match parse_args(args.iter().copied())? {
            Command::Run(run) => Ok(run),
            other => panic!("expected a run command, got {other:?}"),
        }
    }

    #[test]
    fn parses_space_and_equals_forms() {
        let run = run_args(&[
            "sleep",
            "--n",
            "10",
            "--variant=joinset",
            "--threads",
            "3",
            "--param",
            "work=5",
            "--param=kernel=article",
            "--data-dir=/tmp/x",
        ])
        .unwrap();
        assert_eq!(run.workload, "sleep");
        assert_eq!(run.n, 10);
        assert_eq!(run.variant.as_deref(), Some("joinset"));
        assert_eq!(run.threads, Some(3));
        assert_eq!(run.data_dir, Some(PathBuf::from("/tmp/x")));
        assert_eq!(run.dsn, None);
        assert_eq!(
            run.params,
            vec![
                ("work".to_string(), "5".to_string()),
                ("kernel".to_string(), "article".to_string())
            ]
        );
        assert_eq!(run_args(&["sleep", "--n=7"]).unwrap().n, 7);
    }

    #[test]
    fn param_value_may_contain_equals() {
        let run = run_args(&["x", "--n", "1", "--param", "q=a=b"]).unwrap();
        assert_eq!(run.params, vec![("q".to_string(), "a=b".to_string())]);
    }

    #[test]
    fn bad_command_lines_are_usage_errors() {
        let bad: &[&[&str]] = &[
            &[],
            &["sleep"],
            &["sleep", "--n"],
            &["sleep", "--n", "0"],
            &["sleep", "--n", "-1"],
            &["sleep", "--n", "+5"],
            &["sleep", "--n", "1.5"],
            &["sleep", "--n", "abc"],
            &["sleep", "--n", "99999999999999999999999"],
            &["sleep", "--n", "1", "--n", "2"],
            &["sleep", "--n", "1", "--threads", "0"],
            &["sleep", "--n", "1", "--bogus", "1"],
            &["sleep", "--n", "1", "stray"],
            &["sleep", "--n", "1", "--param", "novalue"],
            &["sleep", "--n", "1", "--param", "=1"],
            &["sleep", "--n", "1", "--param", "a=1", "--param", "a=2"],
            &["--n", "1"],
            &["list", "extra"],
        ];
        for args in bad {
            match parse_args(args.iter().copied()) {
                Err(err) => assert_eq!(err.exit_code(), 2, "{args:?}"),
                Ok(cmd) => panic!("{args:?} parsed as {cmd:?}"),
            }
        }
    }

    #[test]
    fn dsn_flag_is_refused_without_reading_its_value() {
        for args in [
            &["mysql", "--n", "1", "--dsn", "mysql://u:hunter22@h/db"][..],
            &["mysql", "--n", "1", "--dsn=mysql://u:hunter22@h/db"][..],
            &["mysql", "--dsn"][..],
        ] {
            match parse_args(args.iter().copied()) {
                Err(err) => {
                    assert_eq!(err.exit_code(), 2, "{args:?}");
                    let line = err.line();
                    assert!(line.contains("BENCH_DSN"), "{line}");
                    assert!(line.contains("--dsn"), "{line}");
                    assert!(!line.contains("hunter22"), "{line}");
                }
                Ok(cmd) => panic!("{args:?} parsed as {cmd:?}"),
            }
        }
    }

    #[test]
    fn passwords_are_found_in_urls() {
        assert_eq!(dsn_password("mysql://u:pw@127.0.0.1:3306/db"), Some("pw"));
        assert_eq!(dsn_password("postgres://u:a@b@h/db"), Some("a@b"));
        assert_eq!(dsn_password("postgres://u:p%40ss@h/db?x=@"), Some("p%40ss"));
        assert_eq!(dsn_password("mysql://u@h/db"), None);
        assert_eq!(dsn_password("mysql://u:@h/db"), None);
        assert_eq!(dsn_password("mysql://h/db"), None);
        assert_eq!(dsn_password("u:p@tcp(h:1)/db"), None);
    }

    #[test]
    fn passwords_are_redacted() {
        let dsn = "mysql://bench:s3cret%21pw@127.0.0.1:3306/db";
        let text = format!("connecting to {dsn}: refused; password s3cret!pw; s3cret%21pw");
        let out = redact_password(&text, dsn);
        assert_eq!(
            out,
            "connecting to mysql://bench:***@127.0.0.1:3306/db: refused; password ***; ***"
        );
        // A short password is redacted only in its place in a URL.
        let out = redact_password("postgres://u:p@h/db: ping failed", "postgres://u:p@h/db");
        assert_eq!(out, "postgres://u:***@h/db: ping failed");
        // No password, nothing to do.
        assert_eq!(redact_password("x", "mysql://u@h/db"), "x");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%zz%41"), "%zzA");
    }

    #[test]
    fn list_and_help() {
        assert_eq!(parse_args(["list"]).unwrap(), Command::List);
        assert_eq!(parse_args(["--help"]).unwrap(), Command::Help);
    }

    #[test]
    fn strict_integers() {
        assert_eq!(parse_uint("0"), Some(0));
        assert_eq!(parse_uint("50000"), Some(50_000));
        assert_eq!(parse_uint(""), None);
        assert_eq!(parse_uint("+1"), None);
        assert_eq!(parse_uint(" 1"), None);
        assert_eq!(parse_uint("1_000"), None);
    }

    #[test]
    fn checksum_is_zero_padded_lowercase_hex() {
        assert_eq!(checksum_hex(0x71c), "000000000000071c");
        assert_eq!(checksum_hex(u64::MAX), "ffffffffffffffff");
    }

    #[test]
    fn errors_are_one_line_with_exit_codes() {
        let usage = BenchError::usage("bad\nthing");
        assert_eq!(usage.exit_code(), 2);
        assert!(!usage.line().contains('\n'));
        let io: BenchError = std::io::Error::other("disk\nfull").into();
        assert_eq!(io.exit_code(), 1);
        assert_eq!(io.line(), "rustbench: error: disk | full");
    }

    #[test]
    fn timer_reports_intervals() {
        let mut timer = Timer::new(mono_ns());
        assert!(timer.finish().is_err());
        timer.start();
        timer.mark_spawned();
        timer.stop();
        let (t0, _setup, elapsed, spawned) = timer.finish().unwrap();
        assert!(t0 > 0);
        assert!(spawned.unwrap() <= elapsed);
    }

    #[test]
    fn nofile_limit_is_raised_to_hard_limit() {
        let soft = raise_nofile_limit().unwrap();
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        assert_eq!(lim.rlim_cur, soft);
    }
}
