package lifeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Lifeline is the daemon's end of the FIFO.
type Lifeline struct {
	path  string
	write *os.File // held open for the daemon's whole life; never written to
	read  *os.File // the end handed to children (same open file description for all)
	once  sync.Once
}

// New creates the FIFO "lifeline" inside dir (which must be private to the
// daemon) and opens both ends.
func New(dir string) (*Lifeline, error) {
	path := filepath.Join(dir, "lifeline")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("create lifeline fifo: %w", err)
	}
	// O_RDWR never blocks on a FIFO, even with no reader yet; it makes the
	// daemon a writer for as long as the descriptor is open.
	wfd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open lifeline write end: %w", err)
	}
	// A non-blocking open of the read end succeeds at once; the blocking
	// mode is restored afterwards because bash's read builtin does not
	// retry on EAGAIN.
	rfd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(wfd)
		return nil, fmt.Errorf("open lifeline read end: %w", err)
	}
	if err := unix.SetNonblock(rfd, false); err != nil {
		unix.Close(wfd)
		unix.Close(rfd)
		return nil, fmt.Errorf("lifeline read end: %w", err)
	}
	return &Lifeline{
		path:  path,
		write: os.NewFile(uintptr(wfd), path+" (write)"),
		read:  os.NewFile(uintptr(rfd), path+" (read)"),
	}, nil
}

// Path is where the FIFO lives.
func (l *Lifeline) Path() string { return l.path }

// ReadFD is the descriptor to place in a child's fd table (the prelude
// expects it as fd 3). It stays valid until Close.
func (l *Lifeline) ReadFD() uintptr { return l.read.Fd() }

// Close releases both ends and removes the FIFO. Every sentinel still
// blocked on it sees EOF and kills its group: closing the lifeline is the
// last-resort teardown of every call. Idempotent.
func (l *Lifeline) Close() error {
	var err error
	l.once.Do(func() {
		err = errors.Join(l.write.Close(), l.read.Close())
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	})
	return err
}
