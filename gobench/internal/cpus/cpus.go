// Package cpus computes how many threads a program should use when
// --threads is not given: the usable-CPUs rule shared by gobench, rustbench
// and the harness.
//
//  1. A = the number of CPUs in the process's affinity mask.
//  2. Q = the smallest CPU bandwidth limit, ceil(quota / period), over the
//     process's own cgroup and every ancestor up to the root of its
//     hierarchy (cgroup v2 cpu.max; cgroup v1 cpu.cfs_quota_us and
//     cpu.cfs_period_us); no limit anywhere, or files that cannot be read:
//     Q = infinity.
//  3. T = max(1, min(A, Q)).
//
// The parsing is done by pure functions over the text of /proc/self/cgroup,
// of /proc/self/mountinfo and a function that reads a cgroup file, so that
// tests can feed them fixture text.
package cpus

import (
	"math"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// NoLimit is the quota limit when no cgroup level limits the CPU bandwidth.
const NoLimit = math.MaxInt

// Usable applies the rule to the running process.
func Usable() int {
	a := Affinity()
	cg, err1 := os.ReadFile("/proc/self/cgroup")
	mi, err2 := os.ReadFile("/proc/self/mountinfo")
	q := NoLimit
	if err1 == nil && err2 == nil {
		q = QuotaLimit(string(cg), string(mi), readFile)
	}
	return Threads(a, q)
}

// Threads is step 3 of the rule: max(1, min(affinity, quota)).
func Threads(affinity, quota int) int {
	return max(1, min(affinity, quota))
}

// Affinity returns the number of CPUs in the process's affinity mask. Should
// sched_getaffinity fail, it falls back to runtime.NumCPU, which Go takes
// from the same mask at start-up.
func Affinity() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return runtime.NumCPU()
	}
	return set.Count()
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

// Mount is one cgroup mount of /proc/self/mountinfo.
type Mount struct {
	// Root is the directory of the hierarchy mounted (field 4).
	Root string
	// Point is where it is mounted (field 5).
	Point string
	// V2 is true for fstype cgroup2, false for a cgroup v1 hierarchy that
	// holds the cpu controller.
	V2 bool
}

// CgroupMounts returns the cgroup2 mounts and the cgroup v1 mounts whose
// super options include the cpu controller, in the order of mountinfo.
func CgroupMounts(mountinfo string) []Mount {
	var out []Mount
	for _, line := range strings.Split(mountinfo, "\n") {
		fields := strings.Fields(line)
		sep := -1
		for i, f := range fields {
			if f == "-" && i >= 6 {
				sep = i
				break
			}
		}
		// ID parent major:minor root point options [optional...] - fstype source superoptions
		if sep < 0 || len(fields) < sep+4 {
			continue
		}
		fstype, super := fields[sep+1], fields[sep+3]
		m := Mount{Root: unescape(fields[3]), Point: unescape(fields[4])}
		switch fstype {
		case "cgroup2":
			m.V2 = true
		case "cgroup":
			if !hasItem(super, "cpu") {
				continue
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// cgroupPaths returns the process's cgroup path in the v2 hierarchy (the
// "0::/path" line) and in the v1 hierarchy holding the cpu controller; an
// empty string when there is none.
func cgroupPaths(procCgroup string) (v2, v1 string) {
	for _, line := range strings.Split(procCgroup, "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		controllers, p, ok := strings.Cut(rest, ":")
		if !ok || !strings.HasPrefix(p, "/") {
			continue
		}
		switch {
		case id == "0" && controllers == "":
			if v2 == "" {
				v2 = p
			}
		case hasItem(controllers, "cpu"):
			if v1 == "" {
				v1 = p
			}
		}
	}
	return v2, v1
}

// cgroupDirs returns, for each hierarchy the process is in, the directory of
// its own cgroup followed by every ancestor up to the mount point, and
// whether that hierarchy is v2. A cgroup path outside every mount's root
// has no directory and is left out.
func cgroupDirs(procCgroup, mountinfo string) []hierarchy {
	v2, v1 := cgroupPaths(procCgroup)
	var out []hierarchy
	for _, want := range []struct {
		path string
		v2   bool
	}{{v2, true}, {v1, false}} {
		if want.path == "" {
			continue
		}
		for _, m := range CgroupMounts(mountinfo) {
			if m.V2 != want.v2 {
				continue
			}
			rel, ok := relative(want.path, m.Root)
			if !ok {
				continue
			}
			dirs := []string{}
			for {
				dirs = append(dirs, path.Join(m.Point, rel))
				if rel == "/" {
					break
				}
				rel = path.Dir(rel)
			}
			out = append(out, hierarchy{V2: want.v2, Dirs: dirs})
			break
		}
	}
	return out
}

// hierarchy is the chain of cgroup directories of the process in one
// hierarchy, its own first and the mount point last.
type hierarchy struct {
	V2   bool
	Dirs []string
}

// QuotaLimit is step 2 of the rule: the smallest ceil(quota / period) over
// the process's cgroup and its ancestors, in the v2 hierarchy and in the v1
// hierarchy holding the cpu controller; NoLimit when no level has a limit or
// its files cannot be read. read returns the content of a file.
func QuotaLimit(procCgroup, mountinfo string, read func(string) (string, error)) int {
	q := NoLimit
	for _, h := range cgroupDirs(procCgroup, mountinfo) {
		for _, dir := range h.Dirs {
			var limit int
			var ok bool
			if h.V2 {
				limit, ok = v2Limit(dir, read)
			} else {
				limit, ok = v1Limit(dir, read)
			}
			if ok {
				q = min(q, limit)
			}
		}
	}
	return q
}

// v2Limit reads cpu.max: "<quota> <period>" or "max <period>".
func v2Limit(dir string, read func(string) (string, error)) (int, bool) {
	text, err := read(path.Join(dir, "cpu.max"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(text)
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	return ceilDiv(f[0], f[1])
}

// v1Limit reads cpu.cfs_quota_us (-1 = no limit) and cpu.cfs_period_us.
func v1Limit(dir string, read func(string) (string, error)) (int, bool) {
	quota, err := read(path.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		return 0, false
	}
	period, err := read(path.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return 0, false
	}
	return ceilDiv(strings.TrimSpace(quota), strings.TrimSpace(period))
}

// ceilDiv returns ceil(quota / period) for positive integers; anything else
// (-1, "max", garbage) is no limit.
func ceilDiv(quota, period string) (int, bool) {
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	n := (q + p - 1) / p
	if n > int64(NoLimit) {
		return 0, false
	}
	return int(n), true
}

// relative returns p relative to root, as an absolute path ("/" for root
// itself), and whether p is root or below it.
func relative(p, root string) (string, bool) {
	p, root = path.Clean(p), path.Clean(root)
	if root == "/" {
		return p, true
	}
	if p == root {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(p, root+"/"); ok {
		return "/" + rest, true
	}
	return "", false
}

// hasItem reports whether the comma-separated list holds item.
func hasItem(list, item string) bool {
	for _, s := range strings.Split(list, ",") {
		if s == item {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes (\040 for a space, ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
