package main

import (
	"reflect"
	"testing"
)

// The workloads of the related experiments, through the command line.

func TestListRelated(t *testing.T) {
	l := listCatalogue(t)
	want := map[string]listEntry{
		"idle_tasks": {[]string{"goroutine"}, "goroutine",
			map[string]string{"wait": "sleep", "duration_ms": "1000", "linger_ms": "0"}},
		"threads_vs_tasks": {[]string{"goroutine"}, "goroutine",
			map[string]string{"iterations": "100"}},
		"ping_pong": {[]string{"channels"}, "channels",
			map[string]string{"buffer": "1", "mode": "lockstep"}},
	}
	for name, w := range want {
		if got, ok := l.Workloads[name]; !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %+v, want %+v", name, got, w)
		}
	}
}

func TestRunIdleTasksLinger(t *testing.T) {
	const lingerNs = 100e6
	for _, wait := range []string{"sleep", "release"} {
		m := runResult(t, "idle_tasks", "--n", "1000", "--param", "wait="+wait,
			"--param", "duration_ms=10", "--param", "linger_ms=100")
		checkResult(t, m, "idle_tasks", "00000000000003e8", 1000)
		spawned, _ := m["spawned_ns"].(float64)
		finished, _ := m["finished_ns"].(float64)
		lingerEnd, _ := m["linger_end_ns"].(float64)
		slept := 10e6
		if wait == "release" {
			slept = 0
		}
		if spawned <= 0 || finished != m["elapsed_ns"] || finished < slept || lingerEnd < finished+lingerNs {
			t.Errorf("wait=%s: phases: spawned %v, elapsed %v, finished %v, linger_end %v",
				wait, spawned, m["elapsed_ns"], finished, lingerEnd)
		}
		alive, ok := m["alive_at_spawn"].(float64)
		if !ok || alive < 0 || alive > 1000 || (wait == "release" && alive != 1000) {
			t.Errorf("wait=%s: alive_at_spawn = %v", wait, m["alive_at_spawn"])
		}
		params, _ := m["params"].(map[string]any)
		if params["wait"] != wait || params["duration_ms"] != "10" || params["linger_ms"] != "100" {
			t.Errorf("params = %v", params)
		}
	}
}

func TestRunThreadsVsTasks(t *testing.T) {
	m := runResult(t, "threads_vs_tasks", "--n", "10", "--param", "iterations=2")
	checkResult(t, m, "threads_vs_tasks", "0000000000000014", 10)
	if m["variant"] != "goroutine" {
		t.Errorf("variant = %v", m["variant"])
	}
}

func TestRunPingPong(t *testing.T) {
	for _, mode := range []string{"lockstep", "pipelined"} {
		for _, buffer := range []string{"0", "1", "64"} {
			m := runResult(t, "ping_pong", "--n", "1000",
				"--param", "mode="+mode, "--param", "buffer="+buffer)
			checkResult(t, m, "ping_pong", "000000000007a314", 1000)
			if rate, _ := m["round_trips_per_s"].(float64); rate <= 0 {
				t.Errorf("%s/%s: round_trips_per_s = %v", mode, buffer, m["round_trips_per_s"])
			}
		}
	}
}

func TestRelatedUsageErrors(t *testing.T) {
	bad := [][]string{
		{"idle_tasks", "--n", "1", "--param", "duration_ms=-1"},
		{"idle_tasks", "--n", "1", "--param", "linger_ms=x"},
		{"idle_tasks", "--n", "1", "--variant", "spawn"},
		{"idle_tasks", "--n", "1", "--param", "buffer=1"},
		{"idle_tasks", "--n", "1", "--param", "wait=forever"},
		{"threads_vs_tasks", "--n", "1", "--param", "iterations=-1"},
		{"threads_vs_tasks", "--n", "1", "--variant", "thread"},
		{"ping_pong", "--n", "1", "--param", "buffer=-1"},
		{"ping_pong", "--n", "1", "--param", "mode=async"},
		{"ping_pong", "--n", "1", "--variant", "multi-thread"},
		{"ping_pong", "--n", "1", "--data-dir", "/tmp"},
	}
	assertUsageErrors(t, bad)
}
