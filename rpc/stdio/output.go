package stdio

import (
	"io"
	"sync"

	"go.uber.org/zap"
)

// output is the one writer of stdout. Lines are queued, in order, for a
// goroutine that writes them, so no lock is ever held across write(2):
// when the client stops reading, the only goroutine stuck in the kernel
// is that one, and every writer can still give up (abandon, or the client
// gone).
//
// A writer waits for its line only once the lines waiting for the client
// pass queueBudget bytes: a pipelined client (pings, small answers) is
// not made to wait for a goroutine hand-over per line, while the memory
// held for a client that does not read stays bounded — a call's large
// answer waits, with its concurrency slot, until it is written.
//
// The writing goroutine lives as long as the output: it ends when a write
// fails, when the client hangs up or the output is abandoned — or, stuck
// in write(2) to a client that neither reads nor closes, with the process.
type output struct {
	w   io.Writer
	log *zap.Logger

	mu     sync.Mutex
	queue  []*outLine // waiting to be written, in order
	queued int        // their bytes
	wake   chan struct{}

	over       chan struct{} // closed once dead or abandoned: nothing more is written
	dead       chan struct{} // a write failed or the client hung up
	abandoned  chan struct{} // the server gave up on the client
	overOnce   sync.Once
	deadOnce   sync.Once
	abandonOne sync.Once
}

// queueBudget is how many bytes of lines may wait for the client without
// their writers waiting too.
const queueBudget = 256 << 10

// coalesce is the most the writing goroutine copies to join queued lines
// into one write(2); a longer line is written on its own.
const coalesce = 64 << 10

// outLine is one line waiting to be written.
type outLine struct {
	line []byte
	done chan struct{} // nil: its writer did not wait
	err  error
}

func newOutput(w io.Writer, log *zap.Logger) *output {
	o := &output{w: w, log: log, wake: make(chan struct{}, 1),
		over: make(chan struct{}), dead: make(chan struct{}), abandoned: make(chan struct{})}
	go o.run()
	return o
}

// write queues one line; past the budget it waits until the line is
// written, the output failed or was abandoned. It reports false when the
// line will not be written whole.
func (o *output) write(line []byte) bool { return o.enqueue(line, false) }

// flush waits until every line queued so far is written (or the output
// is over): for an orderly end.
func (o *output) flush() bool { return o.enqueue(nil, true) }

// enqueue queues line (nothing when nil) behind the others and waits for
// it when told to or when the lines waiting pass queueBudget.
func (o *output) enqueue(line []byte, wait bool) bool {
	select {
	case <-o.over:
		return false
	default:
	}
	l := &outLine{line: line}
	o.mu.Lock()
	o.queued += len(line)
	if wait = wait || o.queued > queueBudget; wait {
		l.done = make(chan struct{})
	}
	o.queue = append(o.queue, l)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	if !wait {
		return true
	}
	select {
	case <-l.done:
		return l.err == nil
	case <-o.over:
		return false
	}
}

func (o *output) run() {
	var buf []byte
	for {
		select {
		case <-o.wake:
		case <-o.over:
			return
		}
		o.mu.Lock()
		batch := o.queue
		o.queue = nil
		o.mu.Unlock()
		for len(batch) > 0 {
			data, n := take(batch, &buf)
			err := o.send(data, batch[:n])
			batch = batch[n:]
			if err != nil {
				return
			}
		}
	}
}

// take is what the next write(2) sends: a line longer than coalesce on
// its own (not copied: answers of megabytes are not held twice), or the
// first lines of batch joined in buf up to coalesce bytes; and how many
// lines that is.
func take(batch []*outLine, buf *[]byte) ([]byte, int) {
	if len(batch[0].line) > coalesce {
		return batch[0].line, 1
	}
	*buf = append((*buf)[:0], batch[0].line...)
	n := 1
	for n < len(batch) && len(*buf)+len(batch[n].line) <= coalesce {
		*buf = append(*buf, batch[n].line...)
		n++
	}
	return *buf, n
}

// send writes the joined lines and releases their writers.
func (o *output) send(data []byte, lines []*outLine) error {
	select {
	case <-o.over:
		return errOver // given up on while these lines waited
	default:
	}
	_, err := o.w.Write(data)
	o.mu.Lock()
	for _, l := range lines {
		o.queued -= len(l.line)
		l.err = err
		if l.done != nil {
			close(l.done)
		}
	}
	o.mu.Unlock()
	if err != nil {
		o.log.Warn("client output failed", zap.Error(err))
		o.fail()
	}
	return err
}

// fail ends the output for good: the client closed our stdout.
func (o *output) fail() {
	o.deadOnce.Do(func() {
		close(o.dead)
		o.end()
	})
}

// abandon gives up on the client: waiting writers return at once and
// nothing more is written.
func (o *output) abandon() {
	o.abandonOne.Do(func() {
		close(o.abandoned)
		o.end()
	})
}

func (o *output) end() { o.overOnce.Do(func() { close(o.over) }) }

type overError struct{}

func (overError) Error() string { return "stdio: output abandoned" }

var errOver error = overError{}
