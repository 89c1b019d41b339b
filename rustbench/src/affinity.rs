//! The CPUs the program may run on (its affinity mask), read for the result
//! line's `cpus` and by the thread-pinned variant, which also pins threads.

use crate::cli::error::BenchError;

/// The CPUs the calling thread may run on (its affinity mask, which a new
/// thread inherits), in increasing order.
pub fn allowed_cpus() -> Result<Vec<usize>, BenchError> {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(BenchError::runtime(format!(
            "sched_getaffinity: {}",
            std::io::Error::last_os_error()
        )));
    }
    let total = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: every index is below the number of bits in the set.
    let cpus: Vec<usize> = (0..total)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect();
    if cpus.is_empty() {
        return Err(BenchError::runtime("sched_getaffinity returned no CPU"));
    }
    Ok(cpus)
}

/// Pin the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> Result<(), BenchError> {
    let total = 8 * std::mem::size_of::<libc::cpu_set_t>();
    if cpu >= total {
        return Err(BenchError::runtime(format!(
            "CPU {cpu} does not fit in a cpu_set_t of {total} CPUs"
        )));
    }
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below the number of bits in the set (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(BenchError::runtime(format!(
            "sched_setaffinity(CPU {cpu}): {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_keeps_the_thread_on_its_cpu() {
        let cpus = allowed_cpus().unwrap();
        let cpu = *cpus.last().unwrap();
        let seen = std::thread::spawn(move || {
            pin_current_thread(cpu)?;
            allowed_cpus()
        })
        .join()
        .unwrap()
        .unwrap();
        assert_eq!(seen, vec![cpu]);
        match pin_current_thread(1 << 20) {
            Err(BenchError::Runtime(msg)) => assert!(msg.contains("does not fit"), "{msg}"),
            other => panic!("expected a runtime error, got {other:?}"),
        }
    }
}
