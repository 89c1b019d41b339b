//! The usable-CPUs rule, shared by rustbench, gobench and the harness: the
//! number of threads a program uses when `--threads` is absent.
//!
//! 1. A = the number of CPUs in the process's affinity mask.
//! 2. Q = the smallest CPU bandwidth limit, ceil(quota / period), over the
//!    process's own cgroup and every ancestor up to the root of its
//!    hierarchy (cgroup v2 `cpu.max`; cgroup v1 `cpu.cfs_quota_us` and
//!    `cpu.cfs_period_us`); no limit anywhere, or files that cannot be read:
//!    Q = infinity.
//! 3. T = max(1, min(A, Q)).
//!
//! `std::thread::available_parallelism()` is not used: it rounds a quota
//! down where Go rounds it up. The parsing is done by pure functions over
//! the text of `/proc/self/cgroup`, of `/proc/self/mountinfo` and a function
//! that reads a cgroup file, so that tests can feed them fixture text.

use std::path::{Path, PathBuf};

/// T for the running process.
pub fn usable() -> usize {
    let affinity = affinity();
    let quota = match (
        std::fs::read_to_string("/proc/self/cgroup"),
        std::fs::read_to_string("/proc/self/mountinfo"),
    ) {
        (Ok(cgroup), Ok(mountinfo)) => quota_limit(&cgroup, &mountinfo, |path| {
            std::fs::read_to_string(path).ok()
        }),
        _ => None,
    };
    threads(affinity, quota)
}

/// Step 3: `max(1, min(A, Q))`, with `None` for an infinite Q.
pub fn threads(affinity: usize, quota: Option<u64>) -> usize {
    let limited = match quota {
        Some(q) => affinity.min(usize::try_from(q).unwrap_or(usize::MAX)),
        None => affinity,
    };
    limited.max(1)
}

/// Step 1: the CPUs in the affinity mask (`sched_getaffinity`). Should the
/// call fail (a machine with more CPUs than a `cpu_set_t` holds), the
/// number of online CPUs.
pub fn affinity() -> usize {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc == 0 {
        // SAFETY: `set` was filled in by sched_getaffinity.
        let count = unsafe { libc::CPU_COUNT(&set) };
        if count > 0 {
            return count as usize;
        }
    }
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(online).unwrap_or(1).max(1)
}

/// One cgroup mount of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The directory of the hierarchy that is mounted (field 4).
    pub root: String,
    /// Where it is mounted (field 5).
    pub point: String,
    /// fstype `cgroup2`; otherwise a v1 hierarchy holding the cpu controller.
    pub v2: bool,
}

/// The cgroup2 mounts and the cgroup v1 mounts whose super options include
/// the `cpu` controller, in mountinfo order.
pub fn cgroup_mounts(mountinfo: &str) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for line in mountinfo.lines() {
        // ID parent major:minor root point options [optional...] - fstype source superoptions
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(sep) = fields
            .iter()
            .enumerate()
            .position(|(i, f)| i >= 6 && *f == "-")
        else {
            continue;
        };
        if fields.len() < sep + 4 {
            continue;
        }
        let (fstype, super_options) = (fields[sep + 1], fields[sep + 3]);
        let v2 = match fstype {
            "cgroup2" => true,
            "cgroup" if has_item(super_options, "cpu") => false,
            _ => continue,
        };
        mounts.push(Mount {
            root: unescape(fields[3]),
            point: unescape(fields[4]),
            v2,
        });
    }
    mounts
}

/// The process's cgroup path in the v2 hierarchy (the `0::/path` line) and
/// in the v1 hierarchy whose controller list contains `cpu`.
pub fn cgroup_paths(proc_cgroup: &str) -> (Option<String>, Option<String>) {
    let (mut v2, mut v1) = (None, None);
    for line in proc_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !path.starts_with('/') {
            continue;
        }
        if id == "0" && controllers.is_empty() {
            v2.get_or_insert_with(|| path.to_string());
        } else if has_item(controllers, "cpu") {
            v1.get_or_insert_with(|| path.to_string());
        }
    }
    (v2, v1)
}

/// The process's cgroup directories in one hierarchy: its own first, then
/// every ancestor up to the mount point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    pub v2: bool,
    pub dirs: Vec<PathBuf>,
}

/// For the v2 hierarchy and the v1 cpu hierarchy the process is in, the
/// chain of directories to read. The directory of a cgroup is the mount
/// point joined with the cgroup path taken relative to the mount's root; a
/// path outside the root of every mount of its kind is left out.
pub fn hierarchies(proc_cgroup: &str, mountinfo: &str) -> Vec<Hierarchy> {
    let (v2_path, v1_path) = cgroup_paths(proc_cgroup);
    let mounts = cgroup_mounts(mountinfo);
    let mut out = Vec::new();
    for (path, v2) in [(v2_path, true), (v1_path, false)] {
        let Some(path) = path else { continue };
        let found = mounts
            .iter()
            .filter(|m| m.v2 == v2)
            .find_map(|m| relative(&path, &m.root).map(|rel| (m, rel)));
        let Some((mount, rel)) = found else { continue };
        let mut dirs = Vec::new();
        let mut components: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
        loop {
            let mut dir = PathBuf::from(&mount.point);
            dir.extend(&components);
            dirs.push(dir);
            if components.pop().is_none() {
                break;
            }
        }
        out.push(Hierarchy { v2, dirs });
    }
    out
}

/// Step 2: the smallest `ceil(quota / period)` over every level of the
/// process's hierarchies; `None` (infinity) when no level has a limit or its
/// files cannot be read. `read` returns a file's content, `None` when it
/// cannot be read.
pub fn quota_limit<R>(proc_cgroup: &str, mountinfo: &str, read: R) -> Option<u64>
where
    R: Fn(&Path) -> Option<String>,
{
    let mut q: Option<u64> = None;
    for hierarchy in hierarchies(proc_cgroup, mountinfo) {
        for dir in &hierarchy.dirs {
            let limit = if hierarchy.v2 {
                v2_limit(dir, &read)
            } else {
                v1_limit(dir, &read)
            };
            if let Some(limit) = limit {
                q = Some(q.map_or(limit, |q| q.min(limit)));
            }
        }
    }
    q
}

/// `cpu.max`: `"<quota> <period>"`, or `"max <period>"` for no limit.
fn v2_limit<R: Fn(&Path) -> Option<String>>(dir: &Path, read: &R) -> Option<u64> {
    let text = read(&dir.join("cpu.max"))?;
    let mut fields = text.split_whitespace();
    let (quota, period) = (fields.next()?, fields.next()?);
    if fields.next().is_some() {
        return None;
    }
    ceil_div(quota, period)
}

/// `cpu.cfs_quota_us` (`-1` = no limit) and `cpu.cfs_period_us`.
fn v1_limit<R: Fn(&Path) -> Option<String>>(dir: &Path, read: &R) -> Option<u64> {
    let quota = read(&dir.join("cpu.cfs_quota_us"))?;
    let period = read(&dir.join("cpu.cfs_period_us"))?;
    ceil_div(quota.trim(), period.trim())
}

/// `ceil(quota / period)` for positive integers; anything else (`-1`,
/// `max`, garbage) is no limit.
fn ceil_div(quota: &str, period: &str) -> Option<u64> {
    let quota: i64 = quota.parse().ok()?;
    let period: i64 = period.parse().ok()?;
    if quota <= 0 || period <= 0 {
        return None;
    }
    Some((quota as u64).div_ceil(period as u64))
}

/// `path` relative to `root` as an absolute path (`/` for the root itself),
/// or `None` when `path` is not the root or below it.
fn relative(path: &str, root: &str) -> Option<String> {
    let clean = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .map(str::to_string)
            .collect()
    };
    let (path, root) = (clean(path), clean(root));
    let rest = path.strip_prefix(root.as_slice())?;
    Some(format!("/{}", rest.join("/")))
}

/// Whether the comma-separated `list` holds `item`.
fn has_item(list: &str, item: &str) -> bool {
    list.split(',').any(|s| s == item)
}

/// Undo mountinfo's octal escapes (`\040` for a space, ...).
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = |b: u8| (b'0'..=b'7').contains(&b);
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && octal(bytes[i + 1])
            && octal(bytes[i + 2])
            && octal(bytes[i + 3])
        {
            out.push(
                ((bytes[i + 1] - b'0') << 6) | ((bytes[i + 2] - b'0') << 3) | (bytes[i + 3] - b'0'),
            );
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A read function over a map of file contents.
    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let map: HashMap<PathBuf, String> = entries
            .iter()
            .map(|(p, c)| (PathBuf::from(p), c.to_string()))
            .collect();
        move |path: &Path| map.get(path).cloned()
    }

    const V1_MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    const V1_CGROUP: &str = "\
9:name=systemd:/user.slice
4:memory:/bench/job
3:cpuset:/
2:cpu,cpuacct:/bench/job
0::/user.slice
";

    const V2_MOUNTINFO: &str = "\
22 1 0:20 / / rw - ext4 /dev/sda1 rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

    const V2_CGROUP: &str = "0::/system.slice/bench.service\n";

    #[test]
    fn v1_quota_rounds_up() {
        let read = files(&[
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_quota_us",
                "150000\n",
            ),
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_period_us",
                "100000\n",
            ),
        ]);
        assert_eq!(quota_limit(V1_CGROUP, V1_MOUNTINFO, read), Some(2));
        assert_eq!(threads(8, Some(2)), 2);
    }

    #[test]
    fn v1_minus_one_is_no_limit() {
        let read = files(&[
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_quota_us",
                "-1\n",
            ),
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_period_us",
                "100000\n",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_quota_us", "-1\n"),
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_period_us",
                "100000\n",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
        ]);
        assert_eq!(quota_limit(V1_CGROUP, V1_MOUNTINFO, read), None);
        assert_eq!(threads(8, None), 8);
    }

    #[test]
    fn nested_limits_take_the_smallest_level() {
        // The parent allows 1.5 CPUs (2), the child 3.
        let read = files(&[
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_quota_us",
                "300000",
            ),
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_period_us",
                "100000",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_quota_us", "75000"),
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/cpu.cfs_period_us",
                "50000",
            ),
        ]);
        assert_eq!(quota_limit(V1_CGROUP, V1_MOUNTINFO, read), Some(2));

        let read = files(&[
            (
                "/sys/fs/cgroup/system.slice/bench.service/cpu.max",
                "max 100000\n",
            ),
            ("/sys/fs/cgroup/system.slice/cpu.max", "250000 100000\n"),
            ("/sys/fs/cgroup/cpu.max", "max 100000\n"),
        ]);
        assert_eq!(quota_limit(V2_CGROUP, V2_MOUNTINFO, read), Some(3));
    }

    #[test]
    fn v2_quota_and_max() {
        let read = files(&[(
            "/sys/fs/cgroup/system.slice/bench.service/cpu.max",
            "100000 100000\n",
        )]);
        assert_eq!(quota_limit(V2_CGROUP, V2_MOUNTINFO, read), Some(1));
        let read = files(&[(
            "/sys/fs/cgroup/system.slice/bench.service/cpu.max",
            "50000 100000\n",
        )]);
        assert_eq!(quota_limit(V2_CGROUP, V2_MOUNTINFO, read), Some(1));
        let read = files(&[(
            "/sys/fs/cgroup/system.slice/bench.service/cpu.max",
            "max 100000\n",
        )]);
        assert_eq!(quota_limit(V2_CGROUP, V2_MOUNTINFO, read), None);
    }

    #[test]
    fn missing_or_garbled_files_are_no_limit() {
        assert_eq!(quota_limit(V1_CGROUP, V1_MOUNTINFO, files(&[])), None);
        assert_eq!(quota_limit(V2_CGROUP, V2_MOUNTINFO, files(&[])), None);
        // A quota without its period cannot be read.
        let read = files(&[(
            "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_quota_us",
            "100000",
        )]);
        assert_eq!(quota_limit(V1_CGROUP, V1_MOUNTINFO, read), None);
        let read = files(&[(
            "/sys/fs/cgroup/system.slice/bench.service/cpu.max",
            "garbage",
        )]);
        assert_eq!(quota_limit(V2_CGROUP, V2_MOUNTINFO, read), None);
        let read = files(&[(
            "/sys/fs/cgroup/system.slice/bench.service/cpu.max",
            "100000 0",
        )]);
        assert_eq!(quota_limit(V2_CGROUP, V2_MOUNTINFO, read), None);
        // No cgroup text at all.
        assert_eq!(quota_limit("", "", files(&[])), None);
    }

    #[test]
    fn hybrid_reads_both_hierarchies() {
        // cgroup v1 cpu and the v2 unified hierarchy, as on this kind of
        // machine: the v1 limit counts, the v2 levels have no cpu.max.
        let read = files(&[
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_quota_us",
                "100000",
            ),
            (
                "/sys/fs/cgroup/cpu,cpuacct/bench/job/cpu.cfs_period_us",
                "100000",
            ),
        ]);
        let h = hierarchies(V1_CGROUP, V1_MOUNTINFO);
        assert_eq!(
            h,
            vec![
                Hierarchy {
                    v2: true,
                    dirs: vec![
                        PathBuf::from("/sys/fs/cgroup/unified/user.slice"),
                        PathBuf::from("/sys/fs/cgroup/unified"),
                    ],
                },
                Hierarchy {
                    v2: false,
                    dirs: vec![
                        PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/bench/job"),
                        PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/bench"),
                        PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"),
                    ],
                },
            ]
        );
        assert_eq!(quota_limit(V1_CGROUP, V1_MOUNTINFO, read), Some(1));
    }

    #[test]
    fn paths_are_taken_relative_to_the_mount_root() {
        // A container: the hierarchy's /docker/abc is mounted at /sys/fs/cgroup.
        let mountinfo = "\
40 30 0:35 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw
";
        let cgroup = "0::/docker/abc/inner\n";
        let read = files(&[
            ("/sys/fs/cgroup/inner/cpu.max", "max 100000"),
            ("/sys/fs/cgroup/cpu.max", "200000 100000"),
        ]);
        assert_eq!(quota_limit(cgroup, mountinfo, read), Some(2));
        // A path outside the mount's root has no directory.
        let read = files(&[("/sys/fs/cgroup/cpu.max", "100000 100000")]);
        assert_eq!(quota_limit("0::/elsewhere\n", mountinfo, read), None);
    }

    #[test]
    fn only_the_cpu_controller_counts_in_v1() {
        let mounts = cgroup_mounts(V1_MOUNTINFO);
        assert_eq!(
            mounts,
            vec![
                Mount {
                    root: "/".into(),
                    point: "/sys/fs/cgroup/cpu,cpuacct".into(),
                    v2: false
                },
                Mount {
                    root: "/".into(),
                    point: "/sys/fs/cgroup/unified".into(),
                    v2: true
                },
            ]
        );
        let (v2, v1) = cgroup_paths("5:cpuset:/a\n4:cpuacct:/b\n3:cpu:/c\n");
        assert_eq!((v2, v1), (None, Some("/c".to_string())));
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        let mountinfo = "50 31 0:29 / /mnt/cg\\040cpu rw - cgroup cgroup rw,cpu\n";
        assert_eq!(cgroup_mounts(mountinfo)[0].point, "/mnt/cg cpu");
        assert_eq!(unescape("a\\134b"), "a\\b");
        assert_eq!(unescape("tail\\04"), "tail\\04");
    }

    #[test]
    fn threads_is_at_least_one() {
        assert_eq!(threads(0, None), 1);
        assert_eq!(threads(4, Some(0)), 1);
        assert_eq!(threads(2, Some(64)), 2);
        assert_eq!(threads(16, Some(3)), 3);
    }

    #[test]
    fn the_running_process_gets_a_sane_count() {
        let t = usable();
        assert!(t >= 1 && t <= affinity(), "{t}");
    }
}
