package stdio

import (
	"io"
	"sync"

	"go.uber.org/zap"
)

// output is the one writer of stdout. Lines are handed, in order, to a
// goroutine that writes them, so a writer waits for its line without
// holding any lock across write(2): when the client stops reading, the
// only goroutine stuck in the kernel is that one, and every writer can
// still give up (abandon, or the client gone).
//
// The writing goroutine lives as long as the output: it ends when a write
// fails, when the client hangs up or the output is abandoned — or, stuck
// in write(2) to a client that neither reads nor closes, with the process.
type output struct {
	w     io.Writer
	log   *zap.Logger
	lines chan *outLine // unbuffered: writers queue on it in order

	over       chan struct{} // closed once dead or abandoned: nothing more is written
	dead       chan struct{} // a write failed or the client hung up
	abandoned  chan struct{} // the server gave up on the client
	overOnce   sync.Once
	deadOnce   sync.Once
	abandonOne sync.Once
}

// outLine is one line waiting to be written.
type outLine struct {
	line []byte
	done chan struct{}
	err  error
}

func newOutput(w io.Writer, log *zap.Logger) *output {
	o := &output{w: w, log: log, lines: make(chan *outLine),
		over: make(chan struct{}), dead: make(chan struct{}), abandoned: make(chan struct{})}
	go o.run()
	return o
}

// write hands one line over and waits until it is written, the output
// failed or was abandoned; it reports whether the line was written whole.
func (o *output) write(line []byte) bool {
	l := &outLine{line: line, done: make(chan struct{})}
	select {
	case o.lines <- l:
	case <-o.over:
		return false
	}
	select {
	case <-l.done:
		return l.err == nil
	case <-o.over:
		return false
	}
}

func (o *output) run() {
	for {
		select {
		case l := <-o.lines:
			select {
			case <-o.over:
				return // given up on while this line was being handed over
			default:
			}
			_, l.err = o.w.Write(l.line)
			close(l.done)
			if l.err != nil {
				o.log.Warn("client output failed", zap.Error(l.err))
				o.fail()
				return
			}
		case <-o.over:
			return
		}
	}
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
