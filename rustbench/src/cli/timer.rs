//! The monotonic clock and the workload timer.

use crate::cli::error::BenchError;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
