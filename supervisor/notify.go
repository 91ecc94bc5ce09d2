package supervisor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// The notify FIFO carries what a server's processes tell the daemon beyond
// one call: mcp_resource_updated URI, from a tool, a hook, a child, or a
// process that detached from its call and outlives it (so a call's events
// file, which is gone when the call ends, cannot carry it). It lives in the
// runtime directory as "notify" and is named to every process the daemon
// starts by MCP_BASHD_NOTIFY. One record per line, fields tab-separated
// and escaped as the events file's (events.go):
//
//	updated  URI
//
// The daemon holds it open read-write, so it never reads EOF and a writer
// never waits in open(2); the shim opens it read-write too (<>), so a
// process that writes after the daemon died does not hang either (its line
// is dropped with the pipe). Lines under PIPE_BUF (the shim refuses longer
// URIs) are written atomically, whoever writes at once.

// envNotify names the FIFO to bash.
const envNotify = "MCP_BASHD_NOTIFY"

// notifyQueue is how many updates wait for the server before more are
// dropped (and logged): a server that does not read them must not block
// the processes that send them.
const notifyQueue = 1024

// notifyLineCap is the longest record read; longer ones are dropped.
const notifyLineCap = 8 << 10

type notifier struct {
	path string
	f    *os.File
	out  chan string
	wg   sync.WaitGroup
	log  *zap.Logger
}

func newNotifier(dir string, log *zap.Logger) (*notifier, error) {
	path := filepath.Join(dir, "notify")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("create notify fifo: %w", err)
	}
	// Non-blocking, so the os.File is pollable and Close ends a Read in
	// progress.
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open notify fifo: %w", err)
	}
	n := &notifier{path: path, f: os.NewFile(uintptr(fd), path), out: make(chan string, notifyQueue), log: log}
	n.wg.Add(1)
	go n.read()
	return n, nil
}

func (n *notifier) read() {
	defer n.wg.Done()
	defer close(n.out)
	br := bufio.NewReaderSize(n.f, notifyLineCap)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			n.log.Warn("notify record too long; dropped", zap.Int("cap", notifyLineCap))
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if err != nil {
			return // closed
		}
		kind, arg, _ := strings.Cut(strings.TrimSuffix(string(line), "\n"), "\t")
		if kind != "updated" || arg == "" {
			n.log.Warn("notify record not understood; dropped", zap.String("record", kind))
			continue
		}
		select {
		case n.out <- unescape(arg):
		default:
			n.log.Warn("resource update dropped: the server is not taking them", zap.Int("queued", notifyQueue))
		}
	}
}

func (n *notifier) close() {
	n.f.Close()
	n.wg.Wait()
}

// ResourceUpdates delivers the URIs processes named with
// mcp_resource_updated, in order; it is closed by Close.
func (s *Supervisor) ResourceUpdates() <-chan string { return s.notify.out }
