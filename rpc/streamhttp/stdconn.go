package streamhttp

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// One-connection mode: a launcher that accepts the connection itself and
// hands it to a fresh process on stdin/stdout (inetd, socat's and ncat's
// EXEC, systemd socket activation with Accept=yes, the 2026 bash SDK's
// `server.sh handle-connection`) gets the same Handler, served over that
// one connection, through StdioConn and ListenOnce.
//
// What stdin/stdout are decides the connection:
//   - one socket on both (inetd, systemd, socat's default socketpair):
//     that socket, so the peer sees our half-close and a TCP socket names
//     its own addresses;
//   - anything else (two pipes, a file): a connection reading stdin and
//     writing stdout.
//
// Either way a read that meets end of input after the request began is
// held until the connection closes (or its read deadline passes) instead
// of reporting EOF: net/http takes EOF after a request for the client
// leaving and cancels the request, yet a client that half-closes — or a
// pipe whose writer is done, as in `printf … | server.sh
// handle-connection` — still waits for its answer, which the SDK gave.

// StdioConn is the connection on in (stdin) and out (stdout). The
// descriptors are duplicated: closing the connection leaves in and out
// open.
func StdioConn(in, out *os.File) (net.Conn, error) {
	var c net.Conn
	var err error
	if sameSocket(in, out) {
		c, err = net.FileConn(in)
	} else {
		c, err = newFileConn(in, out)
	}
	if err != nil {
		return nil, err
	}
	h := &holdConn{Conn: c, closed: make(chan struct{}), changed: make(chan struct{}), local: c.LocalAddr(), remote: c.RemoteAddr()}
	// A TCP socket (inetd, systemd) names its own ends; a socketpair or a
	// pipe from a launcher does not, and the launcher's environment says.
	if _, ok := h.local.(*net.TCPAddr); !ok {
		h.local = launcherAddr("SOCAT_SOCKADDR", "SOCAT_SOCKPORT", "NCAT_LOCAL_ADDR", "NCAT_LOCAL_PORT")
	}
	if _, ok := h.remote.(*net.TCPAddr); !ok {
		h.remote = launcherAddr("SOCAT_PEERADDR", "SOCAT_PEERPORT", "NCAT_REMOTE_ADDR", "NCAT_REMOTE_PORT", "REMOTE_ADDR", "REMOTE_PORT")
	}
	return h, nil
}

// sameSocket reports whether in and out are one socket.
func sameSocket(in, out *os.File) bool {
	var a, b unix.Stat_t
	if unix.Fstat(int(in.Fd()), &a) != nil || unix.Fstat(int(out.Fd()), &b) != nil {
		return false
	}
	return a.Mode&unix.S_IFMT == unix.S_IFSOCK && a.Dev == b.Dev && a.Ino == b.Ino
}

// fileConn reads one file and writes another. Each is a duplicate made
// non-blocking, so Go's poller serves it and deadlines work on pipes
// (the flag is shared with whoever else holds the same pipe: a launcher
// about to exec or wait for us, which does not read it meanwhile).
type fileConn struct{ r, w *os.File }

func newFileConn(in, out *os.File) (*fileConn, error) {
	r, err := pollable(in, "stdin")
	if err != nil {
		return nil, err
	}
	w, err := pollable(out, "stdout")
	if err != nil {
		r.Close()
		return nil, err
	}
	return &fileConn{r: r, w: w}, nil
}

func pollable(f *os.File, name string) (*os.File, error) {
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, &net.OpError{Op: "dup", Net: "stdio", Err: err}
	}
	unix.CloseOnExec(fd)
	_ = unix.SetNonblock(fd, true) // a regular file stays blocking: no deadlines, but it never waits
	return os.NewFile(uintptr(fd), name), nil
}

func (c *fileConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *fileConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *fileConn) Close() error {
	return errors.Join(c.r.Close(), c.w.Close())
}
func (c *fileConn) LocalAddr() net.Addr  { return stdioAddr("stdio") }
func (c *fileConn) RemoteAddr() net.Addr { return stdioAddr("stdio") }
func (c *fileConn) SetDeadline(t time.Time) error {
	return errors.Join(c.r.SetReadDeadline(t), c.w.SetWriteDeadline(t))
}
func (c *fileConn) SetReadDeadline(t time.Time) error  { return c.r.SetReadDeadline(t) }
func (c *fileConn) SetWriteDeadline(t time.Time) error { return c.w.SetWriteDeadline(t) }

// launcherAddr is the address a launcher describes in the environment it
// gives its child: pairs of (address, port) variable names, the first
// pair whose address is set winning — socat's SOCAT_SOCKADDR and
// SOCAT_SOCKPORT, ncat's NCAT_LOCAL_ADDR…, systemd's REMOTE_ADDR. A
// TCPAddr when the address is an IP, so the Host check can tell a
// loopback listener from a public one; "stdio" when no launcher said.
func launcherAddr(names ...string) net.Addr {
	for i := 0; i+1 < len(names); i += 2 {
		host := os.Getenv(names[i])
		if host == "" {
			continue
		}
		port, _ := strconv.Atoi(os.Getenv(names[i+1]))
		if ip := net.ParseIP(host); ip != nil {
			return &net.TCPAddr{IP: ip, Port: port}
		}
		return stdioAddr(host)
	}
	return stdioAddr("stdio")
}

type stdioAddr string

func (a stdioAddr) Network() string { return "stdio" }
func (a stdioAddr) String() string  { return string(a) }

// holdConn holds end of input after the first byte (see the top of this
// file). Its read deadline is kept here too, since a held read waits on
// this struct, not on the descriptor.
type holdConn struct {
	net.Conn
	local, remote net.Addr
	closed        chan struct{}
	closeOnce     sync.Once

	mu       sync.Mutex
	began    bool          // a byte was read
	eof      bool          // end of input was met after that
	deadline time.Time     // the read deadline
	changed  chan struct{} // closed and replaced when the deadline changes
}

func (c *holdConn) LocalAddr() net.Addr  { return c.local }
func (c *holdConn) RemoteAddr() net.Addr { return c.remote }

func (c *holdConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	eof := c.eof
	c.mu.Unlock()
	if !eof {
		n, err := c.Conn.Read(p)
		if err != nil && c.isClosed() {
			return n, net.ErrClosed // as a net.Conn says it, whatever the file said
		}
		c.mu.Lock()
		if n > 0 {
			c.began = true
		}
		hold := errors.Is(err, io.EOF) && c.began
		c.eof = c.eof || hold
		c.mu.Unlock()
		if !hold || n > 0 {
			if hold {
				err = nil
			}
			return n, err
		}
	}
	return 0, c.wait()
}

func (c *holdConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// wait blocks a held read until the connection closes or the read
// deadline passes.
func (c *holdConn) wait() error {
	for {
		c.mu.Lock()
		d, changed := c.deadline, c.changed
		c.mu.Unlock()
		var t *time.Timer
		var expired <-chan time.Time
		if !d.IsZero() {
			left := time.Until(d)
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			t = time.NewTimer(left)
			expired = t.C
		}
		var err error
		select {
		case <-c.closed:
			err = net.ErrClosed
		case <-changed:
		case <-expired:
			err = os.ErrDeadlineExceeded
		}
		if t != nil {
			t.Stop()
		}
		if err != nil {
			return err
		}
	}
}

func (c *holdConn) SetReadDeadline(t time.Time) error {
	c.setDeadline(t)
	_ = c.Conn.SetReadDeadline(t) // a file without deadlines: the held read's own applies
	return nil
}

func (c *holdConn) SetDeadline(t time.Time) error {
	c.setDeadline(t)
	_ = c.Conn.SetReadDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}

func (c *holdConn) setDeadline(t time.Time) {
	c.mu.Lock()
	c.deadline = t
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// CloseWrite half-closes a socket, so the peer sees the end of the
// answer even while other processes still hold the descriptor.
func (c *holdConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *holdConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		_ = c.CloseWrite()
	})
	return c.Conn.Close()
}

// ListenOnce is a listener that yields c once. The next Accept waits until
// c (or the listener) is closed and then fails with net.ErrClosed, so an
// http.Server serving it returns once the one connection is done.
func ListenOnce(c net.Conn) net.Listener {
	l := &onceListener{addr: c.LocalAddr(), done: make(chan struct{})}
	l.conn = &notifyConn{Conn: c, closed: func() { l.Close() }}
	return l
}

type onceListener struct {
	addr net.Addr
	mu   sync.Mutex
	conn net.Conn // nil once accepted
	done chan struct{}
	once sync.Once
}

func (l *onceListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.conn
	l.conn = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *onceListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *onceListener) Addr() net.Addr { return l.addr }

// notifyConn ends the listener when the connection closes.
type notifyConn struct {
	net.Conn
	closed func()
}

func (c *notifyConn) Close() error {
	err := c.Conn.Close()
	c.closed()
	return err
}

// CloseWrite lets net/http half-close through the wrapper.
func (c *notifyConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
