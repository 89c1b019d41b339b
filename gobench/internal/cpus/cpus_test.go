package cpus

import (
	"errors"
	"io/fs"
	"reflect"
	"runtime"
	"testing"
)

// files is a fake cgroup file system: path -> content; a missing path
// cannot be read.
type files map[string]string

func (f files) read(p string) (string, error) {
	s, ok := f[p]
	if !ok {
		return "", &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return s, nil
}

// A cgroup v1 machine (Debian 12 with systemd in legacy mode): cpu and
// cpuacct mounted together, plus a v2 hierarchy without controllers.
const v1Mountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:7 - cgroup cgroup rw,cpu,cpuacct
33 31 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const v1Cgroup = `12:cpuset:/
4:memory:/bench/job
3:cpu,cpuacct:/bench/job
0::/user.slice
`

// A pure cgroup v2 machine inside a container whose cgroup namespace root is
// /system.slice/docker-1.scope.
const v2Mountinfo = `600 500 0:50 / / rw - overlay overlay rw
610 600 0:60 /system.slice/docker-1.scope /sys/fs/cgroup ro,nosuid - cgroup2 cgroup ro,nsdelegate
`

const v2Cgroup = "0::/system.slice/docker-1.scope/inner\n"

func TestMountsAndPaths(t *testing.T) {
	got := CgroupMounts(v1Mountinfo)
	want := []Mount{
		{Root: "/", Point: "/sys/fs/cgroup/cpu,cpuacct"},
		{Root: "/", Point: "/sys/fs/cgroup/unified", V2: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CgroupMounts(v1) = %+v, want %+v", got, want)
	}
	v2, v1 := cgroupPaths(v1Cgroup)
	if v2 != "/user.slice" || v1 != "/bench/job" {
		t.Errorf("cgroupPaths(v1) = %q, %q", v2, v1)
	}
	v2, v1 = cgroupPaths(v2Cgroup)
	if v2 != "/system.slice/docker-1.scope/inner" || v1 != "" {
		t.Errorf("cgroupPaths(v2) = %q, %q", v2, v1)
	}
	// A mount point with a space is escaped as \040.
	esc := `40 31 0:29 / /sys/fs/my\040cgroup rw - cgroup cgroup rw,cpu` + "\n"
	if m := CgroupMounts(esc); len(m) != 1 || m[0].Point != "/sys/fs/my cgroup" {
		t.Errorf("escaped mount: %+v", m)
	}
	// cpuacct alone, cpuset or a named hierarchy are not the cpu controller.
	other := `40 31 0:29 / /a rw - cgroup cgroup rw,cpuacct
41 31 0:29 / /b rw - cgroup cgroup rw,cpuset
42 31 0:29 / /c rw - cgroup cgroup rw,name=cpu
`
	if m := CgroupMounts(other); len(m) != 0 {
		t.Errorf("non-cpu hierarchies taken: %+v", m)
	}
}

func TestCgroupDirs(t *testing.T) {
	got := cgroupDirs(v1Cgroup, v1Mountinfo)
	want := []hierarchy{
		{V2: true, Dirs: []string{"/sys/fs/cgroup/unified/user.slice", "/sys/fs/cgroup/unified"}},
		{V2: false, Dirs: []string{"/sys/fs/cgroup/cpu,cpuacct/bench/job", "/sys/fs/cgroup/cpu,cpuacct/bench", "/sys/fs/cgroup/cpu,cpuacct"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("v1: got %+v, want %+v", got, want)
	}
	got = cgroupDirs(v2Cgroup, v2Mountinfo)
	want = []hierarchy{{V2: true, Dirs: []string{"/sys/fs/cgroup/inner", "/sys/fs/cgroup"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("v2: got %+v, want %+v", got, want)
	}
	// A cgroup outside the mount's root has no directory.
	if got := cgroupDirs("0::/elsewhere\n", v2Mountinfo); len(got) != 0 {
		t.Errorf("outside the root: %+v", got)
	}
	// A prefix that is not a path component is not an ancestor.
	if got := cgroupDirs("0::/system.slice/docker-1.scopeX\n", v2Mountinfo); len(got) != 0 {
		t.Errorf("name prefix taken as the root: %+v", got)
	}
}

func TestQuotaLimitV1(t *testing.T) {
	base := "/sys/fs/cgroup/cpu,cpuacct"
	cases := []struct {
		name string
		fs   files
		want int
	}{
		{"no limit anywhere", files{
			base + "/bench/job/cpu.cfs_quota_us": "-1\n", base + "/bench/job/cpu.cfs_period_us": "100000\n",
			base + "/bench/cpu.cfs_quota_us": "-1\n", base + "/bench/cpu.cfs_period_us": "100000\n",
			base + "/cpu.cfs_quota_us": "-1\n", base + "/cpu.cfs_period_us": "100000\n",
		}, NoLimit},
		{"one CPU on the own cgroup", files{
			base + "/bench/job/cpu.cfs_quota_us": "100000\n", base + "/bench/job/cpu.cfs_period_us": "100000\n",
		}, 1},
		{"1.5 CPUs round up to 2", files{
			base + "/bench/job/cpu.cfs_quota_us": "150000\n", base + "/bench/job/cpu.cfs_period_us": "100000\n",
		}, 2},
		{"a tighter parent wins", files{
			base + "/bench/job/cpu.cfs_quota_us": "400000\n", base + "/bench/job/cpu.cfs_period_us": "100000\n",
			base + "/bench/cpu.cfs_quota_us": "50000\n", base + "/bench/cpu.cfs_period_us": "20000\n",
			base + "/cpu.cfs_quota_us": "-1\n", base + "/cpu.cfs_period_us": "100000\n",
		}, 3},
		{"a tighter child wins", files{
			base + "/bench/job/cpu.cfs_quota_us": "10000\n", base + "/bench/job/cpu.cfs_period_us": "100000\n",
			base + "/bench/cpu.cfs_quota_us": "800000\n", base + "/bench/cpu.cfs_period_us": "100000\n",
		}, 1},
		{"period unreadable", files{base + "/bench/job/cpu.cfs_quota_us": "100000\n"}, NoLimit},
		{"garbage", files{
			base + "/bench/job/cpu.cfs_quota_us": "lots\n", base + "/bench/job/cpu.cfs_period_us": "100000\n",
			base + "/bench/cpu.cfs_quota_us": "100000\n", base + "/bench/cpu.cfs_period_us": "0\n",
		}, NoLimit},
		{"missing files", files{}, NoLimit},
		{"the v2 hierarchy of a hybrid machine counts too", files{
			"/sys/fs/cgroup/unified/user.slice/cpu.max": "200000 100000\n",
		}, 2},
	}
	for _, c := range cases {
		if got := QuotaLimit(v1Cgroup, v1Mountinfo, c.fs.read); got != c.want {
			t.Errorf("%s: QuotaLimit = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestQuotaLimitV2(t *testing.T) {
	cases := []struct {
		name string
		fs   files
		want int
	}{
		{"max everywhere", files{
			"/sys/fs/cgroup/inner/cpu.max": "max 100000\n", "/sys/fs/cgroup/cpu.max": "max 100000\n",
		}, NoLimit},
		{"one CPU", files{"/sys/fs/cgroup/inner/cpu.max": "100000 100000\n"}, 1},
		{"2.01 CPUs round up to 3", files{"/sys/fs/cgroup/inner/cpu.max": "201000 100000\n"}, 3},
		{"the parent limits, the child says max", files{
			"/sys/fs/cgroup/inner/cpu.max": "max 100000\n", "/sys/fs/cgroup/cpu.max": "250000 100000\n",
		}, 3},
		{"nested limits: the smallest", files{
			"/sys/fs/cgroup/inner/cpu.max": "300000 100000\n", "/sys/fs/cgroup/cpu.max": "50000 50000\n",
		}, 1},
		{"malformed", files{"/sys/fs/cgroup/inner/cpu.max": "100000\n", "/sys/fs/cgroup/cpu.max": "x 100000\n"}, NoLimit},
		{"unreadable", files{}, NoLimit},
	}
	for _, c := range cases {
		if got := QuotaLimit(v2Cgroup, v2Mountinfo, c.fs.read); got != c.want {
			t.Errorf("%s: QuotaLimit = %d, want %d", c.name, got, c.want)
		}
	}
	// Empty inputs (the /proc files could not be read): no limit.
	fail := func(string) (string, error) { return "", errors.New("no") }
	if got := QuotaLimit("", "", fail); got != NoLimit {
		t.Errorf("empty input: %d", got)
	}
}

func TestThreads(t *testing.T) {
	cases := []struct{ a, q, want int }{
		{8, NoLimit, 8},
		{8, 2, 2},
		{2, 8, 2},
		{1, NoLimit, 1},
		{0, NoLimit, 1},
	}
	for _, c := range cases {
		if got := Threads(c.a, c.q); got != c.want {
			t.Errorf("Threads(%d, %d) = %d, want %d", c.a, c.q, got, c.want)
		}
	}
}

func TestUsableOnThisMachine(t *testing.T) {
	a := Affinity()
	if a < 1 || a > runtime.NumCPU() {
		t.Fatalf("affinity %d", a)
	}
	if u := Usable(); u < 1 || u > a {
		t.Errorf("Usable() = %d, affinity %d", u, a)
	}
}
