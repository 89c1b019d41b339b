package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Result is the JSON object printed on the last line of stdout. Its keys are
// listed once, with their types and meaning, in
// bench_src/run/result_keys.json; result_keys_test.go (package main) checks
// this struct and the printed line against that file.
type Result struct {
	Lang     string `json:"lang"`
	Workload string `json:"workload"`
	Variant  string `json:"variant"`
	N        int    `json:"n"`
	Threads  int    `json:"threads"`
	// ThreadsSource says where Threads came from: ThreadsFromFlag or
	// ThreadsFromDefault.
	ThreadsSource string `json:"threads_source"`
	// CPUs are the CPUs in the program's affinity mask when it started.
	CPUs      []int             `json:"cpus"`
	ElapsedNs int64             `json:"elapsed_ns"`
	SetupNs   int64             `json:"setup_ns"`
	Checksum  string            `json:"checksum"`
	TasksOK   int64             `json:"tasks_ok"`
	Params    map[string]string `json:"params"`
	Runtime   RuntimeInfo       `json:"runtime"`
	T0MonoNs  int64             `json:"t0_mono_ns"`
	SpawnedNs *int64            `json:"spawned_ns,omitempty"`
	// Extra holds workload-specific keys, appended after the fixed ones.
	Extra []Field `json:"-"`
}

// The values of Result.ThreadsSource: --threads was given, or the runtime's
// default GOMAXPROCS stands.
const (
	ThreadsFromFlag    = "--threads"
	ThreadsFromDefault = "default"
)

// RuntimeInfo describes the Go runtime that ran the workload.
type RuntimeInfo struct {
	Version    string `json:"version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// Field is one extra key of the result object.
type Field struct {
	Key   string
	Value any
}

// FormatChecksum renders a checksum as 16 lowercase hex digits.
func FormatChecksum(c uint64) string {
	return fmt.Sprintf("%016x", c)
}

// MarshalJSON encodes the fixed keys in order, followed by Extra.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	base, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	if len(r.Extra) == 0 {
		return base, nil
	}
	var fixed map[string]json.RawMessage
	if err := json.Unmarshal(base, &fixed); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(base[:len(base)-1])
	seen := map[string]bool{}
	for _, f := range r.Extra {
		if _, dup := fixed[f.Key]; dup || seen[f.Key] {
			return nil, fmt.Errorf("result key %q set twice", f.Key)
		}
		seen[f.Key] = true
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("result key %q: %w", f.Key, err)
		}
		buf.WriteByte(',')
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
