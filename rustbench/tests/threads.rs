//! The usable-CPUs rule as the built binary applies it when `--threads` is
//! absent: an affinity mask of one CPU, and a CPU quota of one CPU.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{BIN, last_json};

const SLEEP_ARGS: &[&str] = &["sleep", "--n", "10", "--param", "work=0"];

#[test]
fn one_cpu_in_the_affinity_mask_gives_one_thread() {
    let output = Command::new("taskset")
        .args(["-c", "0", BIN])
        .args(SLEEP_ARGS)
        .output()
        .expect("taskset runs (util-linux)");
    let v = last_json(&output);
    assert_eq!(v["threads"], 1, "{v}");
    assert_eq!(v["runtime"]["flavour"], "multi_thread");
}

#[test]
fn threads_flag_wins_over_the_mask() {
    let output = Command::new("taskset")
        .args(["-c", "0", BIN])
        .args(SLEEP_ARGS)
        .args(["--threads", "3"])
        .output()
        .expect("taskset runs (util-linux)");
    assert_eq!(last_json(&output)["threads"], 3);
}

#[test]
fn a_current_thread_runtime_reports_one_thread() {
    let output = Command::new(BIN)
        .args(SLEEP_ARGS)
        .args(["--variant", "current-thread"])
        .output()
        .expect("the rustbench binary runs");
    assert_eq!(last_json(&output)["threads"], 1);
}

/// A cgroup made for one test and removed when it ends.
struct Cgroup {
    dir: PathBuf,
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The process that ran in it has exited, so the cgroup is empty.
        if let Err(err) = std::fs::remove_dir(&self.dir) {
            eprintln!("cannot remove {}: {err}", self.dir.display());
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing '{text}' to {}: {e}", path.display()))
}

/// A new cgroup whose CPU bandwidth is `quota` per period of 100000 us:
/// cgroup v1 under `/sys/fs/cgroup/cpu/` where that is mounted, else a child
/// of the cgroup v2 root with the cpu controller enabled. Err says why none
/// could be made.
fn quota_cgroup(tag: &str, quota: u32) -> Result<Cgroup, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not running as root".into());
    }
    let name = format!("rustbench-test-{tag}-{}", std::process::id());
    let v1 = Path::new("/sys/fs/cgroup/cpu");
    if v1.join("cpu.cfs_quota_us").exists() {
        let dir = v1.join(&name);
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let cgroup = Cgroup { dir };
        write(&cgroup.dir.join("cpu.cfs_period_us"), "100000")?;
        write(&cgroup.dir.join("cpu.cfs_quota_us"), &quota.to_string())?;
        return Ok(cgroup);
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let controllers = std::fs::read_to_string(v2.join("cgroup.controllers"))
        .map_err(|e| format!("no cgroup v1 cpu hierarchy and no cgroup v2 root: {e}"))?;
    if !controllers.split_whitespace().any(|c| c == "cpu") {
        return Err("the cgroup v2 root offers no cpu controller".into());
    }
    write(&v2.join("cgroup.subtree_control"), "+cpu")?;
    let dir = v2.join(&name);
    std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    let cgroup = Cgroup { dir };
    write(&cgroup.dir.join("cpu.max"), &format!("{quota} 100000"))?;
    Ok(cgroup)
}

/// Run the sleep workload inside a cgroup with `quota` us per 100000 us
/// and return the threads it reports; None (with the reason printed) when
/// the cgroup cannot be made.
fn threads_under_quota(tag: &str, quota: u32) -> Option<u64> {
    let cgroup = match quota_cgroup(tag, quota) {
        Ok(cgroup) => cgroup,
        Err(why) => {
            println!("not checked: cannot make a cgroup with a CPU quota: {why}");
            return None;
        }
    };
    let script = format!(
        "echo $$ > '{}/cgroup.procs' && exec '{BIN}' {}",
        cgroup.dir.display(),
        SLEEP_ARGS.join(" ")
    );
    let output = Command::new("sh")
        .args(["-c", &script])
        .output()
        .expect("sh runs");
    let v = last_json(&output);
    drop(cgroup);
    Some(v["threads"].as_u64().expect("threads is an integer"))
}

/// CPUs in this process's affinity mask.
fn affinity() -> u64 {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    assert_eq!(rc, 0, "sched_getaffinity");
    // SAFETY: `set` was filled in by sched_getaffinity.
    unsafe { libc::CPU_COUNT(&set) as u64 }
}

#[test]
fn a_one_cpu_quota_gives_one_thread() {
    if let Some(threads) = threads_under_quota("one", 100_000) {
        assert_eq!(threads, 1);
    }
}

/// 1.5 CPUs round up to 2 (where the mask has 2 CPUs or more), as Go and
/// the harness count them.
#[test]
fn a_fractional_quota_rounds_up() {
    if let Some(threads) = threads_under_quota("half", 150_000) {
        assert_eq!(threads, affinity().min(2));
    }
}
