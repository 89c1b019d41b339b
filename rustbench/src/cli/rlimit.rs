//! The open-file limit: raised once at start, read by the workloads that
//! bound how many files they hold open.

use rlimit::Resource;

use crate::cli::args::parse_uint;
use crate::cli::error::BenchError;

/// Raise the soft RLIMIT_NOFILE to the hard limit. Returns the new soft limit.
pub fn raise_nofile_limit() -> Result<u64, BenchError> {
    let (soft, hard) = Resource::NOFILE
        .get()
        .map_err(|e| BenchError::runtime(format!("getrlimit(RLIMIT_NOFILE): {e}")))?;
    if soft == hard {
        return Ok(soft);
    }
    let first = match Resource::NOFILE.set(hard, hard) {
        Ok(()) => return Ok(hard),
        Err(err) => err,
    };
    // Linux refuses an unlimited RLIMIT_NOFILE (the ceiling is fs.nr_open);
    // with an unlimited hard limit, use that ceiling instead.
    if hard == rlimit::INFINITY {
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|s| parse_uint(s.trim()));
        if let Some(nr_open) = nr_open
            && Resource::NOFILE.set(nr_open, nr_open).is_ok()
        {
            return Ok(nr_open);
        }
    }
    Err(BenchError::runtime(format!(
        "setrlimit(RLIMIT_NOFILE, {hard}): {first}"
    )))
}

/// The soft RLIMIT_NOFILE as it stands.
pub fn nofile_soft_limit() -> Result<u64, BenchError> {
    let (soft, _) = Resource::NOFILE
        .get()
        .map_err(|e| BenchError::runtime(format!("getrlimit(RLIMIT_NOFILE): {e}")))?;
    Ok(soft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nofile_limit_is_raised_to_hard_limit() {
        let soft = raise_nofile_limit().unwrap();
        assert_eq!(nofile_soft_limit().unwrap(), soft);
        let (_, hard) = Resource::NOFILE.get().unwrap();
        assert!(soft == hard || hard == rlimit::INFINITY, "{soft} {hard}");
    }
}
