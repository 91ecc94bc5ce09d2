package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// slowWait is how long a figure waits for the daemon to exit before it
// reports it still running (and kills it).
const slowWait = 60 * time.Second

// slowServer's tools print 1 MiB of "a", 1 MiB of \x01 (six bytes of JSON
// each), 32 MiB of "a", or ignore SIGTERM with three children.
const slowServer = `sl_out() { head -c "$1" /dev/zero | tr '\0' "$(printf "\\$2")"; }
tool_mib() { sl_out 1048576 141; }
tool_ctl() { sl_out 1048576 001; }
tool_big() { sl_out 33554432 141; }
tool_hold() { trap '' TERM; sleep 300 & sleep 300 & sleep 300 & wait; }
tool_gated() { while [ ! -e "$SLOW_GATE" ]; do sleep 0.01; done; echo done; }
`

// benchSlow prints the figures of slow and vanished clients (issue 10,
// items 3, 4, 9, 10, 13): seconds to exit, VmHWM, processes left. The
// client's silences are fixed waits: nothing is asserted here (the tests
// in tests/reliability_slow*_test.go are the pass criteria).
func benchSlow(bin, dir string) {
	script := filepath.Join(dir, "slow.sh")
	check(os.WriteFile(script, []byte(slowServer), 0o755))
	var tools []string
	for _, n := range []string{"mib", "ctl", "big", "hold", "gated"} {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, n))
	}
	check(os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[`+strings.Join(tools, ",")+`]}`), 0o644))
	fmt.Printf("slow and vanished clients (%s), %s\n", bin, time.Now().UTC().Format(time.RFC3339))
	sigterm := func(d *slowDaemon) { d.cmd.Process.Signal(syscall.SIGTERM) }
	slowStdio(bin, script, "item 3: 40 calls of 1 MiB, stdout not read, SIGTERM", nil, 40, "mib", sigterm)
	slowStdio(bin, script, "item 10: 400 calls of 1 MiB, --max-concurrency 4, not read, SIGTERM", []string{"--max-concurrency", "4"}, 400, "mib", sigterm)
	slowStdio(bin, script, "item 10: the same with 1 MiB of control characters", []string{"--max-concurrency", "4"}, 400, "ctl", sigterm)
	slowStdio(bin, script, "item 4: stdin and stdout closed with a call running (--grace 1s)", []string{"--grace", "1s"}, 1, "hold", func(d *slowDaemon) {
		d.stdin.Close()
		d.out.Close()
	})
	slowDrain(bin, script)
	slowHTTPUnread(bin, script)
	slowHTTPBodies(bin, script)
}

type slowDaemon struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *os.File // read end of stdout, read by nobody
	mark  string
	done  chan struct{}
}

// slowStart runs the daemon with stdout on a pipe nobody reads and an
// environment marker its calls inherit.
func slowStart(bin string, args ...string) *slowDaemon {
	d := &slowDaemon{cmd: exec.Command(bin, args...), mark: fmt.Sprintf("SLOW_BENCH_MARK=%d-%d", os.Getpid(), time.Now().UnixNano()), done: make(chan struct{})}
	d.cmd.Env = append(os.Environ(), d.mark)
	var err error
	d.stdin, err = d.cmd.StdinPipe()
	check(err)
	r, w, err := os.Pipe()
	check(err)
	d.out, d.cmd.Stdout = r, w
	check(d.cmd.Start())
	w.Close()
	go func() { d.cmd.Wait(); close(d.done) }()
	return d
}

// exit waits for the daemon to end after the action, and describes how.
func (d *slowDaemon) exit(t0 time.Time) string {
	select {
	case <-d.done:
		return fmt.Sprintf("ended (%v) %.2f s after", d.cmd.ProcessState, time.Since(t0).Seconds())
	case <-time.After(slowWait):
		return fmt.Sprintf("still running %.0f s after", slowWait.Seconds())
	}
}

// left counts the live processes carrying the marker, the daemon aside.
func (d *slowDaemon) left() int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == d.cmd.Process.Pid {
			continue
		}
		env, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		stat, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err1 == nil && err2 == nil && strings.Contains("\x00"+string(env), "\x00"+d.mark+"\x00") && !strings.Contains(string(stat), ") Z ") {
			n++
		}
	}
	return n
}

func (d *slowDaemon) finish(what string, t0 time.Time, hwm string) {
	how := d.exit(t0)
	time.Sleep(time.Second)
	fmt.Printf("  %s: %s%s; call processes alive 1 s later: %d\n", what, how, hwm, d.left())
	d.cmd.Process.Kill()
	<-d.done
	d.out.Close()
}

func hwmKiB(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var n int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
			return n
		}
	}
	return 0
}

const slowInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`

func slowCall(id, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

// slowStdio sends n calls of tool, reads nothing for 5 s, then acts.
func slowStdio(bin, script, what string, flags []string, n int, tool string, act func(*slowDaemon)) {
	d := slowStart(bin, append(flags, script)...)
	var b strings.Builder
	b.WriteString(slowInit + "\n")
	for i := 1; i <= n; i++ {
		b.WriteString(slowCall(fmt.Sprint(i), tool) + "\n")
	}
	go io.WriteString(d.stdin, b.String())
	time.Sleep(5 * time.Second)
	hwm := fmt.Sprintf("; VmHWM %.1f MiB", float64(hwmKiB(d.cmd.Process.Pid))/1024)
	t0 := time.Now()
	act(d)
	d.finish(what, t0, hwm)
}

// slowDrain: with --drain 60s and a call in flight, SIGTERM, then a ping.
func slowDrain(bin, script string) {
	gate := filepath.Join(filepath.Dir(script), "gate")
	os.Setenv("SLOW_GATE", gate)
	d := slowStart(bin, "--drain", "60s", script)
	br := bufio.NewReader(d.out)
	io.WriteString(d.stdin, slowInit+"\n"+slowCall(`"g"`, "gated")+"\n")
	br.ReadString('\n')
	time.Sleep(time.Second)
	d.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(time.Second)
	io.WriteString(d.stdin, `{"jsonrpc":"2.0","id":"late","method":"ping"}`+"\n")
	got := make(chan string, 1)
	go func() { l, _ := br.ReadString('\n'); got <- strings.TrimSpace(l) }()
	answer := "no answer within 10 s"
	select {
	case l := <-got:
		answer = "answered " + l
	case <-time.After(10 * time.Second):
	}
	os.WriteFile(gate, nil, 0o644)
	fmt.Printf("  item 13: a ping during the drain: %s\n", answer)
	d.cmd.Process.Kill()
	<-d.done
	d.out.Close()
}

// slowHTTPStart runs --http on a free loopback port and returns its host.
func slowHTTPStart(bin string, args ...string) (*slowDaemon, string) {
	d := &slowDaemon{cmd: exec.Command(bin, append([]string{"--http", "--http-port", "0"}, args...)...), mark: fmt.Sprintf("SLOW_BENCH_MARK=%d-%d", os.Getpid(), time.Now().UnixNano()), done: make(chan struct{})}
	d.cmd.Env = append(os.Environ(), d.mark)
	stderr, err := d.cmd.StderrPipe()
	check(err)
	r, w, err := os.Pipe()
	check(err)
	d.out, d.cmd.Stdout = r, w
	check(d.cmd.Start())
	w.Close()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	check(err)
	go io.Copy(io.Discard, stderr)
	go func() { d.cmd.Wait(); close(d.done) }()
	_, url, _ := strings.Cut(strings.TrimSpace(line), "http://")
	host, _, _ := strings.Cut(url, "/")
	return d, host
}

// slowHTTPUnread: one client does not read its 32 MiB answer; SIGTERM.
func slowHTTPUnread(bin, script string) {
	d, host := slowHTTPStart(bin, "--output-cap", "33554432", script)
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := dialer.Dial("tcp", host)
	check(err)
	defer c.Close()
	body := slowCall("1", "big")
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body)
	time.Sleep(5 * time.Second)
	t0 := time.Now()
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.finish("item 3: an HTTP client not reading its 32 MiB answer, SIGTERM (drain 5 s, grace 2 s)", t0, "")
}

// slowHTTPBodies: eight clients send 15 of a declared 16 MiB and stop.
func slowHTTPBodies(bin, script string) {
	d, host := slowHTTPStart(bin, script)
	answered := make(chan string, 8)
	for i := 0; i < 8; i++ {
		c, err := net.Dial("tcp", host)
		check(err)
		defer c.Close()
		go func() {
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", host, 16<<20)
			c.Write(make([]byte, 15<<20))
			l, _ := bufio.NewReader(c).ReadString('\n')
			answered <- strings.TrimSpace(l)
		}()
	}
	t0 := time.Now()
	first := fmt.Sprintf("none within %.0f s", slowWait.Seconds())
	select {
	case l := <-answered:
		first = fmt.Sprintf("the first %.1f s after they began: %q", time.Since(t0).Seconds(), l)
	case <-time.After(slowWait):
	}
	fmt.Printf("  item 9: 8 bodies stalled at 15 of 16 MiB: answers: %s; VmHWM %.1f MiB\n", first, float64(hwmKiB(d.cmd.Process.Pid))/1024)
	d.cmd.Process.Kill()
	<-d.done
	d.out.Close()
}
