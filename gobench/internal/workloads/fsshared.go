package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gobench/internal/lcg"
)

// The files fixture: DIR/0.txt .. DIR/19.txt, made by the harness.
const filesFixtureCount = 20

// fileRead is what one task of the file workloads hands back.
type fileRead struct {
	digest uint64
	size   uint64
	// content is the whole file with retain=content, nil otherwise.
	content []byte
}

// filesPaths returns the path of every fixture file, indexed by file number.
func filesPaths(dir string) []string {
	paths := make([]string, filesFixtureCount)
	for k := range paths {
		paths[k] = filepath.Join(dir, strconv.Itoa(k)+".txt")
	}
	return paths
}

// filesPick returns the file number of every task: lcg(42)[i] % 20.
func filesPick(n int) []uint64 {
	return lcg.Mod(42, n, filesFixtureCount)
}

// filesOptions are the params both file workloads take.
type filesOptions struct {
	// retain=content: hand back every file's content, kept until the end.
	retain bool
	// digest=on: FNV-1a over every file read; off: only its size (the
	// article's programs computed nothing from what they read).
	digest bool
}

func filesOptionsOf(c *Context) filesOptions {
	return filesOptions{retain: c.Params["retain"] == "content", digest: c.Params["digest"] == "on"}
}

// readWhole reads a file with os.ReadFile into out: its size, its digest
// (0 with digest=off) and, with retain, the content.
func readWhole(path string, opt filesOptions, out *fileRead) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out.size = uint64(len(b))
	if opt.digest {
		out.digest = fnv1a64(b)
	}
	if opt.retain {
		out.content = b
	}
	return nil
}

// fnv1a64 is the 64-bit FNV-1a hash.
func fnv1a64(b []byte) uint64 {
	const (
		offset = 0xcbf29ce484222325
		prime  = 0x100000001b3
	)
	h := uint64(offset)
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	return h
}

// The variants and params that files_read and files_rw share.
var (
	filesVariants = []string{"readfile", "chan-per-task"}
	filesParams   = []Param{
		{Name: "retain", Default: "digest", Choices: []string{"digest", "content"}},
		{Name: "digest", Default: "on", Choices: []string{"on", "off"}},
	}
)

// chanPerTaskVariant maps a variant to how results are collected: plain
// (results written into a slice) or "chan-per-task" (one channel per task,
// as the article's Go programs did).
func chanPerTaskVariant(variant, plain string) (bool, error) {
	switch variant {
	case plain:
		return false, nil
	case "chan-per-task":
		return true, nil
	}
	return false, fmt.Errorf("variant %q not implemented", variant)
}
