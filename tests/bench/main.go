// Command bench measures mcp-bashd over a real stdio pipe and prints the
// figures the core issue asks for, next to the floor: the same bash
// command spawned directly, without the daemon, in the same run.
//
//	go run ./tests/bench [-n 20000] [-calls 500] [-http=false]
//	go run ./tests/bench -slow [-bin PATH]   slow and vanished clients only (of PATH: any build)
//	go run ./tests/bench -limits [-calls 500]   call latency with and without per-tool limits
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	pings := flag.Int("n", 20000, "ping requests")
	calls := flag.Int("calls", 500, "tool calls per measurement")
	httpToo := flag.Bool("http", true, "also measure Streamable HTTP")
	slow := flag.Bool("slow", false, "measure only slow and vanished clients")
	given := flag.String("bin", "", "measure this mcp-bashd instead of building ./cmd/mcp-bashd")
	limits := flag.Bool("limits", false, "measure only call latency with and without per-tool limits")
	flag.Parse()
	dir, err := os.MkdirTemp("", "mcp-bashd-bench")
	check(err)
	defer os.RemoveAll(dir)
	bin := *given
	if bin == "" {
		bin = filepath.Join(dir, "mcp-bashd")
		build := exec.Command("go", "build", "-o", bin, "./cmd/mcp-bashd")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stderr = os.Stderr
		check(build.Run())
	}
	if *slow {
		os.Setenv("TMPDIR", dir)
		benchSlow(bin, dir)
		return
	}
	if *limits {
		benchLimits(bin, dir, *calls)
		return
	}
	script := filepath.Join(dir, "server.sh")
	check(os.WriteFile(script, []byte("tool_echo() { printf '%s\\n' \"$1\"; }\n"), 0o755))
	check(os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`), 0o644))

	fmt.Printf("mcp-bashd stdio benchmark (%s)\n", time.Now().UTC().Format(time.RFC3339))
	cold := coldStart(bin, script, 20)
	fmt.Printf("cold start (exec → initialize response), median of 20: %.1f ms\n", ms(cold))

	d := start(bin, script, dir)
	d.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	fmt.Printf("idle RSS after initialize: %.1f MiB\n", float64(rssKiB(d.cmd.Process.Pid))/1024)

	// Pings, pipelined: the client writes while it reads.
	t0 := time.Now()
	go func() {
		w := bufio.NewWriter(d.stdin)
		for i := 1; i <= *pings; i++ {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		}
		w.Flush()
	}()
	for i := 0; i < *pings; i++ {
		d.readLine()
	}
	el := time.Since(t0)
	fmt.Printf("ping: %d requests in %.2fs = %.0f req/s\n", *pings, el.Seconds(), float64(*pings)/el.Seconds())

	// Floor: the same bash command a call runs, spawned directly.
	floor := make([]time.Duration, *calls)
	for i := range floor {
		t := time.Now()
		c := exec.Command("bash", "--noprofile", "--norc", "-c", `tool_echo() { printf '%s\n' "$1"; }; tool_echo '{"x":1}'`)
		c.Stdout = io.Discard
		check(c.Run())
		floor[i] = time.Since(t)
	}
	// One call at a time.
	lat := make([]time.Duration, *calls)
	for i := range lat {
		t := time.Now()
		d.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`, i))
		lat[i] = time.Since(t)
	}
	fp50, fp99 := pct(floor, 50), pct(floor, 99)
	p50, p99 := pct(lat, 50), pct(lat, 99)
	fmt.Printf("floor (bash -c spawned directly): p50 %.2f ms, p99 %.2f ms\n", ms(fp50), ms(fp99))
	fmt.Printf("tools/call one at a time: p50 %.2f ms, p99 %.2f ms (p50 = %.2f× floor)\n", ms(p50), ms(p99), float64(p50)/float64(fp50))

	// Eight in flight.
	t0 = time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	done := make(chan struct{})
	go func() {
		for i := 0; i < *calls; i++ {
			d.readLine()
			<-sem
		}
		close(done)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < *calls; i++ {
			sem <- struct{}{}
			d.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`, i))
		}
	}()
	wg.Wait()
	<-done
	el = time.Since(t0)
	fmt.Printf("tools/call with 8 in flight: %d calls in %.2fs = %.0f calls/s\n", *calls, el.Seconds(), float64(*calls)/el.Seconds())
	fmt.Printf("RSS after the run: %.1f MiB\n", float64(rssKiB(d.cmd.Process.Pid))/1024)
	d.stdin.Close()
	check(d.cmd.Wait())
	if *httpToo {
		benchHTTP(bin, script, dir, *pings/2, *calls)
	}
	benchCancel(bin, dir, 100)
}

type daemon struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	wmu   sync.Mutex
}

func start(bin, script, dir string) *daemon { return startWith(bin, script, dir) }

func startWith(bin, script, dir string, flags ...string) *daemon {
	c := exec.Command(bin, append(flags, script)...)
	c.Env = append(os.Environ(), "TMPDIR="+dir)
	in, err := c.StdinPipe()
	check(err)
	out, err := c.StdoutPipe()
	check(err)
	c.Stderr = os.Stderr
	check(c.Start())
	return &daemon{cmd: c, stdin: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (d *daemon) send(line string) {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	_, err := io.WriteString(d.stdin, line+"\n")
	check(err)
}

func (d *daemon) readLine() string {
	l, err := d.out.ReadString('\n')
	check(err)
	return l
}

func (d *daemon) roundTrip(line string) string {
	d.send(line)
	return d.readLine()
}

func coldStart(bin, script string, n int) time.Duration {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		t := time.Now()
		d := start(bin, script, filepath.Dir(script))
		d.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
		ds = append(ds, time.Since(t))
		d.stdin.Close()
		check(d.cmd.Wait())
	}
	return pct(ds, 50)
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rssKiB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	check(err)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
