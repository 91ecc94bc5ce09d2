package stdio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// bound is how long a step that must be prompt may take before the test
// calls it a hang (never a timing assertion).
const bound = 10 * time.Second

func within(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("%s: still waiting after %v", what, bound)
	}
}

// Lines leave in the order they are handed over, each whole.
func TestWritesInOrder(t *testing.T) {
	var out bytes.Buffer
	c := New(strings.NewReader(""), &out, Options{})
	for i := 0; i < 100; i++ {
		c.write([]byte(fmt.Sprintf("line %d\n", i)))
	}
	c.out.flush() // small lines are queued without their writer waiting
	sc := bufio.NewScanner(&out)
	for i := 0; sc.Scan(); i++ {
		if want := fmt.Sprintf("line %d", i); sc.Text() != want {
			t.Fatalf("line %d is %q", i, sc.Text())
		}
	}
}

// A client that stops reading blocks no writer beyond Abandon: writers
// waiting behind the one stuck in write(2), and those that come later,
// return at once.
func TestAbandonReleasesWriters(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	c := New(strings.NewReader(""), w, Options{})
	big := bytes.Repeat([]byte("a"), 1<<20)
	big[len(big)-1] = '\n'
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stream().Respond(transport.Response{ID: []byte("1"), Body: wire.Raw(big[:len(big)-1])})
		}()
	}
	// Nothing reads r: once the pipe is full, a writer is stuck in
	// write(2) and the others wait behind it.
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(bound); ; {
		var size, queued int
		rc.Control(func(fd uintptr) { size, queued = pipeFill(t, fd) })
		if size > 0 && queued >= size {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the pipe never filled: %d of %d bytes", queued, size)
		}
		time.Sleep(time.Millisecond) // polling the pipe, not synchronising
	}
	c.Abandon()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	within(t, "writers after Abandon", done)
	late := make(chan struct{})
	go func() { c.write([]byte("late\n")); close(late) }()
	within(t, "a write after Abandon", late)
}

// The client closing our stdout is noticed without a write.
func TestHangupWithoutWrite(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := New(strings.NewReader(""), w, Options{})
	select {
	case <-c.OutputDead():
		t.Fatal("output dead while the reader is still there")
	default:
	}
	r.Close()
	within(t, "OutputDead after the reader closed", c.OutputDead())
	late := make(chan struct{})
	go func() { c.write([]byte("dropped\n")); close(late) }()
	within(t, "a write after the hangup", late)
}

// Requests rejected by the gates are answered while reading goes on.
func TestReadAnswersRejectedLines(t *testing.T) {
	var out bytes.Buffer
	c := New(strings.NewReader("not json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"), &out, Options{})
	req, err := c.Read()
	if err != nil || req.Msg.Method != "ping" {
		t.Fatalf("Read: %v %v", req, err)
	}
	c.out.flush()
	if !strings.Contains(out.String(), `"code":-32700`) {
		t.Fatalf("no parse error answered: %q", out.String())
	}
	if _, err := c.Read(); err != io.EOF {
		t.Fatalf("after the last line: %v, want EOF", err)
	}
}

// stream is the Stream a request read from c gets.
func (c *Conn) stream() transport.Stream { return stream{c} }
