package workloads

import (
	"fmt"
	"math"
	"sync"

	"gobench/internal/lcg"
)

// cpu_loops: the billion-loop test. --n is the array length. For every
// element i, add j % u for j in [0, inner), then add r = lcg(42)[0] % n.
// Checksum: the wrapping 64-bit sum of every a[i], so that each element must
// hold its loop's result. All arithmetic on a is on wrapping uint32 values.
var cpuLoopsSpec = &Spec{
	Name:           "cpu_loops",
	Variants:       []string{"plain", "local", "unrolled", "parallel"},
	DefaultVariant: "plain",
	Params: []Param{
		{Name: "u", Default: "10", Min: 1, Max: math.MaxUint32},
		{Name: "inner", Default: "100000", Min: 0, Max: math.MaxUint32},
	},
	Run: runCPULoops,
}

func runCPULoops(c *Context) (Outcome, error) {
	u := uint32(c.Int("u"))
	inner := uint32(c.Int("inner"))
	r := int(lcg.Mod(42, 1, uint64(c.N))[0])
	a := make([]uint32, c.N)

	// plain, local and unrolled are one loop on one thread: they run with
	// GOMAXPROCS 1, as Rust's run without a runtime, and both report 1 thread;
	// parallel runs on --threads.
	if c.Variant != "parallel" {
		c.SetThreads(1)
	}
	var loop func(a []uint32, inner, u, r uint32)
	switch c.Variant {
	case "plain":
		loop = loopsPlain
	case "local":
		loop = loopsLocal
	case "unrolled":
		loop = loopsUnrolled
	case "parallel":
		loop = func(a []uint32, inner, u, r uint32) { loopsParallel(a, inner, u, r, c.Threads) }
	default:
		return Outcome{}, fmt.Errorf("variant %q not implemented", c.Variant)
	}

	c.Timer.Start()
	loop(a, inner, u, uint32(r))
	c.Timer.Stop()
	var sum uint64
	for _, v := range a {
		sum += uint64(v)
	}
	return Outcome{Checksum: sum, TasksOK: int64(c.N)}, nil
}

// loopsPlain is the original: the inner loop updates a[i] directly.
func loopsPlain(a []uint32, inner, u, r uint32) {
	for i := range a {
		for j := uint32(0); j < inner; j++ {
			a[i] += j % u
		}
		a[i] += r
	}
}

// loopsLocal accumulates the inner loop in a local variable.
func loopsLocal(a []uint32, inner, u, r uint32) {
	for i := range a {
		var s uint32
		for j := uint32(0); j < inner; j++ {
			s += j % u
		}
		a[i] += s
		a[i] += r
	}
}

// loopsUnrolled is loopsLocal with the inner loop unrolled by four.
func loopsUnrolled(a []uint32, inner, u, r uint32) {
	body := inner - inner%4
	for i := range a {
		var s uint32
		j := uint32(0)
		for ; j < body; j += 4 {
			s += j % u
			s += (j + 1) % u
			s += (j + 2) % u
			s += (j + 3) % u
		}
		for ; j < inner; j++ {
			s += j % u
		}
		a[i] += s
		a[i] += r
	}
}

// loopsParallel splits the outer loop into contiguous chunks of
// ceil(len(a)/workers) elements, one goroutine per non-empty chunk, each
// running loopsPlain on its chunk.
func loopsParallel(a []uint32, inner, u, r uint32, workers int) {
	chunk := (len(a) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(a); lo += chunk {
		part := a[lo:min(lo+chunk, len(a))]
		wg.Go(func() { loopsPlain(part, inner, u, r) })
	}
	wg.Wait()
}
