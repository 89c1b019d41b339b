package workloads

import (
	"errors"
	"fmt"
	"sync"
)

// maxPingPongBuffer bounds --param buffer: a Go channel allocates its whole
// buffer up front (8 bytes per slot here), so this is at most 512 MiB.
const maxPingPongBuffer = 1 << 26

// ping_pong: two goroutines exchange the values 1..N over a request and a
// reply channel of capacity `buffer` (0 = unbuffered). In lockstep mode the
// sender waits for each reply before the next send; in pipelined mode a
// sender streams every request, an echo goroutine forwards each one to the
// reply channel and the main goroutine counts the replies.
// Checksum: wrapping sum of the replies, N(N+1)/2.
var pingPongSpec = &Spec{
	Name:           "ping_pong",
	Variants:       []string{"channels"},
	DefaultVariant: "channels",
	Params: []Param{
		{Name: "buffer", Default: "1", Min: 0, Max: maxPingPongBuffer},
		{Name: "mode", Default: "lockstep", Choices: []string{"lockstep", "pipelined"}},
	},
	Run: runPingPong,
}

func runPingPong(c *Context) (Outcome, error) {
	if c.Variant != "channels" {
		return Outcome{}, fmt.Errorf("variant %q not implemented", c.Variant)
	}
	var run func(n uint64, buffer int, c *Context) (uint64, int64, error)
	switch mode := c.Params["mode"]; mode {
	case "lockstep":
		run = pingPongLockstep
	case "pipelined":
		run = pingPongPipelined
	default:
		return Outcome{}, fmt.Errorf("mode %q not implemented", mode)
	}
	sum, ok, err := run(uint64(c.N), int(c.Int("buffer")), c)
	if err != nil {
		return Outcome{}, err
	}
	span, err := c.Timer.Span()
	if err != nil {
		return Outcome{}, err
	}
	if span.Elapsed <= 0 {
		return Outcome{}, fmt.Errorf("elapsed time %v is not positive", span.Elapsed)
	}
	c.SetExtra("round_trips_per_s", float64(ok)/span.Elapsed.Seconds())
	return Outcome{Checksum: sum, TasksOK: ok}, nil
}

// echo sends every request back unchanged and closes reply when req is
// closed.
func echo(req <-chan uint64, reply chan<- uint64) {
	for v := range req {
		reply <- v
	}
	close(reply)
}

// errExtraReply means the echo goroutine sent more replies than requests.
var errExtraReply = errors.New("reply received after the last request")

// pingPongLockstep: the main goroutine sends one value and waits for its
// reply before sending the next.
func pingPongLockstep(n uint64, buffer int, c *Context) (uint64, int64, error) {
	req := make(chan uint64, buffer)
	reply := make(chan uint64, buffer)

	c.Timer.Start()
	go echo(req, reply)
	c.Timer.MarkSpawned()
	var sum uint64
	var ok int64
	for v := uint64(1); v <= n; v++ {
		req <- v
		sum += <-reply
		ok++
	}
	c.Timer.Stop()

	close(req)
	if _, more := <-reply; more {
		return 0, 0, errExtraReply
	}
	return sum, ok, nil
}

// pingPongPipelined: a sender goroutine streams every request, the echo
// goroutine forwards them, and the main goroutine receives the replies.
func pingPongPipelined(n uint64, buffer int, c *Context) (uint64, int64, error) {
	req := make(chan uint64, buffer)
	reply := make(chan uint64, buffer)
	var wg sync.WaitGroup

	c.Timer.Start()
	wg.Go(func() {
		for v := uint64(1); v <= n; v++ {
			req <- v
		}
		close(req)
	})
	go echo(req, reply)
	c.Timer.MarkSpawned()
	var sum uint64
	var ok int64
	for range n {
		sum += <-reply
		ok++
	}
	c.Timer.Stop()

	wg.Wait()
	if _, more := <-reply; more {
		return 0, 0, errExtraReply
	}
	return sum, ok, nil
}
