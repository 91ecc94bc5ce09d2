package streamhttp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// stdioPipes is a connection made of two pipes, as a launcher gives stdin
// and stdout; the test writes the client's bytes to in and reads the
// answer from out.
func stdioPipes(t *testing.T) (c net.Conn, in *os.File, out *os.File) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err = StdioConn(inR, outW)
	if err != nil {
		t.Fatal(err)
	}
	// StdioConn duplicated them.
	inR.Close()
	outW.Close()
	t.Cleanup(func() { c.Close(); inW.Close(); outR.Close() })
	return c, inW, outR
}

// End of input before any byte is EOF (a client that connected and left);
// after a byte it is held until the deadline passes or the connection
// closes.
func TestStdioConnHoldsEOFAfterARequest(t *testing.T) {
	c, in, _ := stdioPipes(t)
	in.Close()
	if n, err := c.Read(make([]byte, 8)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("read of an empty input: %d, %v; want EOF", n, err)
	}

	c, in, _ = stdioPipes(t)
	io.WriteString(in, "x")
	in.Close()
	buf := make([]byte, 8)
	if n, err := c.Read(buf); n != 1 || err != nil || buf[0] != 'x' {
		t.Fatalf("first read: %d %v %q", n, err, buf[:n])
	}
	c.SetReadDeadline(time.Now())
	var ne net.Error
	if _, err := c.Read(buf); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("held read past its deadline: %v, want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})
	got := make(chan error, 1)
	go func() {
		_, err := c.Read(buf)
		got <- err
	}()
	c.Close()
	select {
	case err := <-got:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("held read after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a held read did not end when the connection closed")
	}
}

// An http.Server on ListenOnce serves the one connection and returns: the
// request whose input ended right after it is answered.
func TestListenOnceServesOneConnection(t *testing.T) {
	c, in, out := stdioPipes(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "got "+string(b))
	})}
	srv.SetKeepAlivesEnabled(false)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ListenOnce(c)) }()
	io.WriteString(in, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
	in.Close()
	resp, err := http.ReadResponse(bufio.NewReader(out), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "got hi" || !resp.Close {
		t.Errorf("answer %d %q close=%v", resp.StatusCode, b, resp.Close)
	}
	select {
	case err := <-served:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Serve returned %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its one connection")
	}
	if rest, _ := io.ReadAll(out); len(strings.TrimSpace(string(rest))) != 0 {
		t.Errorf("more after the answer: %q", rest)
	}
}
