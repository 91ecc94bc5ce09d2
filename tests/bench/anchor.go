package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The anchor is what a user would write instead of mcp-bashd: a small
// server on the official Go SDK that spawns bash per call
// (../shared/bench/gosdk-exec). Every figure of issue 25 is a ratio
// against it, so both servers are measured in the same run, alternating,
// with the same tools.sh and the same client: a change in the machine's
// load moves both alike.

// anchorOpts switches parts of the anchored run off, so a run fits in a
// few minutes.
type anchorOpts struct {
	calls, cold, rounds int
	http, conn          bool
	flags               string
}

// buildAnchor is the anchor's binary: path itself, or, when path is a
// directory holding main.go, a build of it in dir.
func buildAnchor(path, dir string) string {
	st, err := os.Stat(path)
	check(err)
	if !st.IsDir() {
		return path
	}
	if _, err := os.Stat(filepath.Join(path, "main.go")); err != nil {
		check(fmt.Errorf("-anchor %s: a directory without main.go", path))
	}
	bin := filepath.Join(dir, "gosdk-exec")
	b := exec.Command("go", "build", "-o", bin, ".")
	b.Dir = path
	b.Stderr = os.Stderr
	check(b.Run())
	return bin
}

// server is one of the two measured: how to start it on tools.sh.
type server struct {
	name string
	argv func(extra ...string) []string
}

// anchorInit is the handshake both servers get; the anchor's SDK wants
// the initialized notification before calls.
const anchorInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`

// anchorCall is the call both get: the anchor's schema requires text.
func anchorCall(id string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
}

func (s server) start(dir string, extra ...string) *daemon {
	a := s.argv(extra...)
	return startArgv(a[0], a[1:], dir)
}

func (d *daemon) handshake() {
	d.roundTrip(anchorInit)
	d.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func (d *daemon) stop() {
	d.stdin.Close()
	d.cmd.Wait()
}

// figures is one server's measurements.
type figures struct {
	treeCPU, selfCPU     time.Duration // per call, 8 in flight
	rate8, rate64        float64
	p50, p99, cold, conn time.Duration
	rss                  float64
}

// treeCPU is the CPU of root and every descendant alive, each with its
// reaped children's: its delta over an interval is the tree's CPU in it
// (a process that died was reaped into a live one's cutime).
func treeCPU(root int) time.Duration {
	kids := childrenByParent()
	var sum time.Duration
	var walk func(int)
	walk = func(p int) {
		if self, ch, ok := cpuOfOK(p); ok {
			sum += self + ch
		}
		for _, c := range kids[p] {
			walk(c)
		}
	}
	walk(root)
	return sum
}

// cpuOfOK is cpuOf for a process that may have exited meanwhile.
func cpuOfOK(pid int) (self, children time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	tick := func(i int) time.Duration {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(v) * time.Second / 100 // USER_HZ
	}
	return tick(11) + tick(12), tick(13) + tick(14), true
}

// inFlightAnchor is d.inFlight with the anchor's arguments.
func (d *daemon) inFlightAnchor(n, k, round int) time.Duration {
	t0 := time.Now()
	sem := make(chan struct{}, k)
	done := make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			l := d.readLine()
			if strings.Contains(l, `"error"`) {
				check(fmt.Errorf("call failed: %s", l))
			}
			<-sem
		}
		close(done)
	}()
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		d.send(anchorCall(fmt.Sprintf("q%d.%d", round, i)))
	}
	<-done
	return time.Since(t0)
}

// measureRound adds one round of every stdio figure of s to f.
func measureRound(s server, dir string, o anchorOpts, ours bool, f *figures, round int) {
	// Cold start: exec → initialize answered.
	var cs []time.Duration
	for i := 0; i < o.cold; i++ {
		t := time.Now()
		d := s.start(dir)
		d.roundTrip(anchorInit)
		cs = append(cs, time.Since(t))
		d.stop()
	}
	if len(cs) > 0 {
		f.cold += pct(cs, 50)
	}

	d := s.start(dir)
	d.handshake()
	d.roundTrip(anchorCall("w"))
	// Idle RSS after one call: what the tree keeps between calls. Read
	// once the tree stops changing shape is not knowable from outside,
	// so it is read after the one-at-a-time calls below, when idle.
	lat := make([]time.Duration, o.calls)
	for i := range lat {
		t := time.Now()
		l := d.roundTrip(anchorCall("s" + strconv.Itoa(i)))
		lat[i] = time.Since(t)
		if strings.Contains(l, `"isError":true`) || strings.Contains(l, `"error"`) {
			check(fmt.Errorf("%s: call failed: %s", s.name, l))
		}
	}
	f.p50 += pct(lat, 50)
	f.p99 += pct(lat, 99)
	rss, _, _ := treeRSS(d.cmd.Process.Pid)
	f.rss += rss

	t0 := treeCPU(d.cmd.Process.Pid)
	s0, _ := cpuOf(d.cmd.Process.Pid)
	el := d.inFlightAnchor(o.calls, 8, round)
	t1 := treeCPU(d.cmd.Process.Pid)
	s1, _ := cpuOf(d.cmd.Process.Pid)
	f.rate8 += float64(o.calls) / el.Seconds()
	f.treeCPU += (t1 - t0) / time.Duration(o.calls)
	f.selfCPU += (s1 - s0) / time.Duration(o.calls)
	d.stop()

	var extra []string
	if ours {
		extra = []string{"--max-concurrency", "64"}
	}
	d = s.start(dir, extra...)
	d.handshake()
	el = d.inFlightAnchor(o.calls, 64, round)
	f.rate64 += float64(o.calls) / el.Seconds()
	d.stop()
}

// connOnce is one HTTP request to a process that serves one connection
// on stdin/stdout (--http-connection): exec → response read.
func connOnce(bin, script, dir string) time.Duration {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`
	req := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	t := time.Now()
	c := exec.Command(bin, "--http-connection", script)
	c.Env = append(os.Environ(), "TMPDIR="+callTmpDir(dir))
	c.Stdin = strings.NewReader(req)
	var out bytes.Buffer
	c.Stdout = &out
	c.Stderr = nil
	check(c.Run())
	el := time.Since(t)
	if !bytes.HasPrefix(out.Bytes(), []byte("HTTP/1.1 200")) {
		check(fmt.Errorf("--http-connection: %.200q", out.String()))
	}
	return el
}

// benchAnchor measures mcp-bashd and the anchor, alternating, and prints
// every target of issue 25 beside its measured ratio.
func benchAnchor(bin, anchor, dir string, o anchorOpts) {
	tools := filepath.Join(dir, "tools.sh")
	check(os.WriteFile(tools, []byte(echoTool+"\n"), 0o644))
	check(os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[{"name":"echo","description":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`), 0o644))
	fields := strings.Fields(o.flags)
	ours := server{"mcp-bashd", func(extra ...string) []string {
		return append(append(append([]string{bin}, fields...), extra...), tools)
	}}
	anc := server{"gosdk-exec", func(...string) []string { return []string{anchor, tools} }}

	fmt.Printf("mcp-bashd vs gosdk-exec (%s), %d cores, load average %s, flags %q, %d rounds of %d calls, TMPDIR on %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), loadAvg(), o.flags, o.rounds, o.calls, fsType(callTmpDir(dir)))
	var fo, fa figures
	var conn time.Duration
	for k := 0; k < o.rounds; k++ {
		// Alternate which goes first, so neither always meets a warmer
		// page cache or a quieter machine.
		if k%2 == 0 {
			measureRound(anc, dir, o, false, &fa, k)
			measureRound(ours, dir, o, true, &fo, k)
		} else {
			measureRound(ours, dir, o, true, &fo, k)
			measureRound(anc, dir, o, false, &fa, k)
		}
		if o.conn {
			var cs []time.Duration
			for i := 0; i < max(o.cold, 1); i++ {
				cs = append(cs, connOnce(bin, tools, dir))
			}
			conn += pct(cs, 50)
		}
	}
	n := float64(o.rounds)
	avg := func(d time.Duration) float64 { return ms(d) / n }
	var r report
	row := func(what string, m, a float64, unit, target string, ratio, limit float64, le bool) {
		ok := ratio <= limit
		if !le {
			ok = ratio >= limit
		}
		r.add(fmt.Sprintf("%s (gosdk-exec %.3g %s, ratio %.2f×)", what, a, unit, ratio), m, unit, target, ok)
	}
	row("tree CPU per call, 8 in flight", avg(fo.treeCPU), avg(fa.treeCPU), "ms", "≤ 1.0×", avg(fo.treeCPU)/avg(fa.treeCPU), 1.0, true)
	row("tools/call, 8 in flight", fo.rate8/n, fa.rate8/n, "calls/s", "≥ 1.0×", fo.rate8/fa.rate8, 1.0, false)
	row("tools/call, 64 in flight (--max-concurrency 64)", fo.rate64/n, fa.rate64/n, "calls/s", "≥ 1.0×", fo.rate64/fa.rate64, 1.0, false)
	row("tools/call one at a time, p50", avg(fo.p50), avg(fa.p50), "ms", "≤ 0.7×", avg(fo.p50)/avg(fa.p50), 0.7, true)
	row("tools/call one at a time, p99", avg(fo.p99), avg(fa.p99), "ms", "≤ 1.0×", avg(fo.p99)/avg(fa.p99), 1.0, true)
	if o.cold > 0 {
		row("cold start → initialize answered, median", avg(fo.cold), avg(fa.cold), "ms", "≤ 2×", avg(fo.cold)/avg(fa.cold), 2, true)
	}
	if o.conn && o.cold > 0 {
		a := avg(fa.cold) + avg(fa.p50)
		row("--http-connection request → response (anchor: cold start + call p50)", avg(conn), a, "ms", "≤ 2×", avg(conn)/a, 2, true)
	}
	r.add(fmt.Sprintf("daemon process alone, CPU per call (gosdk-exec %.3f ms)", avg(fa.selfCPU)), avg(fo.selfCPU), "ms", "≤ 0.25 ms", avg(fo.selfCPU) <= 0.25)
	r.add(fmt.Sprintf("idle RSS, whole tree (gosdk-exec %.1f MiB)", fa.rss/n), fo.rss/n, "MiB", "≤ 20 MiB", fo.rss/n <= 20)
	if o.http {
		benchHTTP(bin, tools, dir, 20000, o.calls, avg(fo.p50), &r, o.flags)
	}
	r.print()
	fmt.Printf("load average at the end: %s\n", loadAvg())
}
