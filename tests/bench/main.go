// Command bench measures mcp-bashd over a real stdio pipe and prints the
// figures the core issue asks for, next to the floor: the same bash
// command spawned directly, without the daemon, in the same run.
//
//	go run ./tests/bench [-n 20000] [-calls 500] [-http=false] [-cancel=false] [-flags "--warm 0"] [-tmpdir DIR]
//	go run ./tests/bench -slow [-bin PATH]   slow and vanished clients only (of PATH: any build)
//	go run ./tests/bench -anchor DIR|BIN [-rounds 2] [-cold 20] [-conn=false] [-http=false] [-tmpdir DIR]   every target of issue 25 against gosdk-exec
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
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	pings := flag.Int("n", 20000, "ping requests")
	calls := flag.Int("calls", 500, "tool calls per measurement")
	httpToo := flag.Bool("http", true, "also measure Streamable HTTP")
	slow := flag.Bool("slow", false, "measure only slow and vanished clients")
	given := flag.String("bin", "", "measure this mcp-bashd instead of building ./cmd/mcp-bashd")
	limits := flag.Bool("limits", false, "measure only call latency with and without per-tool limits")
	cancelToo := flag.Bool("cancel", true, "also measure cancellation and the lifeline")
	daemonFlags := flag.String("flags", "", "daemon flags for the measured daemons, e.g. \"--warm 0\"")
	callTmp := flag.String("tmpdir", "", "TMPDIR of the measured daemons, where call directories are made (default: a new directory in the system's temp dir)")
	anchor := flag.String("anchor", "", "measure against this gosdk-exec (a binary, or a directory with its main.go to build) and print every target of issue 25")
	rounds := flag.Int("rounds", 2, "with -anchor: alternating rounds of each server")
	colds := flag.Int("cold", 20, "with -anchor: cold starts per round (0: skip cold start and --http-connection)")
	conn := flag.Bool("conn", true, "with -anchor: measure --http-connection (a process per connection)")
	cluster := flag.Bool("cluster", false, "measure only a scaled-out deployment: one daemon, one with --state, three replicas behind haproxy (needs redis-server and haproxy)")
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
	if *cluster {
		benchCluster(bin, dir, *pings/4, *calls)
		return
	}
	if *callTmp != "" {
		tmpOverride = *callTmp
	}
	if *anchor != "" {
		benchAnchor(bin, buildAnchor(*anchor, dir), dir, anchorOpts{calls: *calls, cold: *colds, rounds: *rounds, http: *httpToo, conn: *conn, flags: *daemonFlags})
		return
	}
	if *limits {
		benchLimits(bin, dir, *calls)
		return
	}
	script := filepath.Join(dir, "server.sh")
	check(os.WriteFile(script, []byte(echoTool+"\n"), 0o755))
	check(os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`), 0o644))

	var r report
	fmt.Printf("mcp-bashd stdio benchmark (%s), %d cores, load average %s, flags %q, TMPDIR on %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), loadAvg(), *daemonFlags, fsType(callTmpDir(dir)))
	cold := coldStart(bin, script, 20, *daemonFlags)
	r.add("cold start (exec → initialize answered), median of 20", ms(cold), "ms", "≤ 5 ms", ms(cold) <= 5)

	d := startWith(bin, script, dir, strings.Fields(*daemonFlags)...)
	d.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	// One call, so the tree holds what it keeps between calls.
	d.roundTrip(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`)
	time.Sleep(200 * time.Millisecond)
	rss := float64(rssKiB(d.cmd.Process.Pid)) / 1024
	tree, pss, n := treeRSS(d.cmd.Process.Pid)
	r.add("idle RSS, the daemon", rss, "MiB", "≤ 20 MiB", rss <= 20)
	r.add(fmt.Sprintf("idle RSS, the whole tree (%d processes: warm call processes too), summed", n), tree, "MiB", "(reported)", true)
	r.add("idle PSS, the whole tree (shared pages counted once)", pss, "MiB", "(reported)", true)

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
	pingRate := float64(*pings) / el.Seconds()
	r.add("ping, pipelined", pingRate, "req/s", "≥ 250,000/s", pingRate >= 250000)

	// The floor — the same bash command a call runs, spawned directly — is
	// measured interleaved with the calls (one spawn, one call), so a
	// change in the machine's load moves both alike: the ratios are the
	// figures. The daemon's CPU and its children's (the call processes,
	// which it reaps) are read from /proc over the same calls.
	floor := make([]time.Duration, *calls)
	lat := make([]time.Duration, *calls)
	var floorCPU time.Duration
	cpu0, kids0 := cpuOf(d.cmd.Process.Pid)
	for i := range lat {
		c0 := childrenCPU()
		t := time.Now()
		floorOnce()
		floor[i] = time.Since(t)
		floorCPU += childrenCPU() - c0
		t = time.Now()
		d.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`, i))
		lat[i] = time.Since(t)
	}
	cpu1, kids1 := cpuOf(d.cmd.Process.Pid)
	floorCPU /= time.Duration(*calls)
	fp50, fp99 := pct(floor, 50), pct(floor, 99)
	p50, p99 := pct(lat, 50), pct(lat, 99)
	fmt.Printf("floor (bash -c spawned directly, %d times, between the calls): p50 %.2f ms, p99 %.2f ms, CPU %.3f ms per spawn\n", *calls, ms(fp50), ms(fp99), ms(floorCPU))
	r.add("tools/call one at a time, p50", ms(p50), "ms", fmt.Sprintf("≤ 0.5× floor p50 = %.2f ms (now %.2f×)", ms(fp50)/2, float64(p50)/float64(fp50)), p50*2 <= fp50)
	r.add("tools/call one at a time, p99", ms(p99), "ms", fmt.Sprintf("≤ 1× floor p99 = %.2f ms (now %.2f×)", ms(fp99), float64(p99)/float64(fp99)), p99 <= fp99)
	daemonCPU := (cpu1 - cpu0) / time.Duration(*calls)
	callCPU := (kids1 - kids0) / time.Duration(*calls)
	r.add(fmt.Sprintf("daemon CPU per call (user+system, %d calls)", *calls), ms(daemonCPU), "ms", "≤ 0.25 ms", daemonCPU <= 250*time.Microsecond)
	r.add("CPU of the call's own processes per call", ms(callCPU), "ms", fmt.Sprintf("≤ 1.2× floor = %.3f ms (now %.2f×)", 1.2*ms(floorCPU), float64(callCPU)/float64(floorCPU)), float64(callCPU) <= 1.2*float64(floorCPU))

	// Eight in flight against eight parallel spawn loops, in alternating
	// rounds (a quarter of the calls each) for the same reason.
	var floorTime, oursTime time.Duration
	round := max(*calls/4, 8)
	for k := 0; k < 4; k++ {
		floorTime += spawnFloorParallel(round, 8)
		oursTime += d.inFlight(round, 8, k)
	}
	floorRate := float64(4*round) / floorTime.Seconds()
	rate := float64(4*round) / oursTime.Seconds()
	fmt.Printf("floor: 8 parallel spawn loops, %d spawns: %.0f/s\n", 4*round, floorRate)
	r.add("tools/call with 8 in flight", rate, "calls/s", fmt.Sprintf("≥ 90%% of the floor's %.0f/s (now %.0f%%)", floorRate, 100*rate/floorRate), rate >= 0.9*floorRate)
	fmt.Printf("RSS after the run: %.1f MiB\n", float64(rssKiB(d.cmd.Process.Pid))/1024)
	d.stdin.Close()
	check(d.cmd.Wait())
	if *httpToo {
		benchHTTP(bin, script, dir, *pings/2, *calls, ms(p50), &r, *daemonFlags)
	}
	r.print()
	fmt.Printf("load average at the end: %s\n", loadAvg())
	if *cancelToo {
		benchCancel(bin, dir, 100)
	}
}

// echoTool is the tool every figure is measured with.
const echoTool = `tool_echo() { printf '%s\n' "$1"; }`

// spawnFloorParallel is n spawns from loops at once: the time they took.
func spawnFloorParallel(n, loops int) time.Duration {
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < loops; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += loops {
				floorOnce()
			}
		}()
	}
	wg.Wait()
	return time.Since(t0)
}

// inFlight sends n calls keeping k in flight: the time they took.
func (d *daemon) inFlight(n, k, round int) time.Duration {
	t0 := time.Now()
	sem := make(chan struct{}, k)
	done := make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			d.readLine()
			<-sem
		}
		close(done)
	}()
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		d.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d.%d","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`, round, i))
	}
	<-done
	return time.Since(t0)
}

func floorOnce() {
	c := exec.Command("bash", "--noprofile", "--norc", "-c", echoTool+`; tool_echo '{"x":1}'`)
	c.Stdout = io.Discard
	check(c.Run())
}

// childrenCPU is the CPU of this process's reaped children.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru))
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

// cpuOf is a process's own CPU and its reaped children's, from
// /proc/PID/stat (utime, stime, cutime, cstime).
func cpuOf(pid int) (self, children time.Duration) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	check(err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	tick := func(i int) time.Duration {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(v) * time.Second / 100 // USER_HZ
	}
	return tick(11) + tick(12), tick(13) + tick(14)
}

// childrenByParent maps each live pid's parent to it, from /proc.
func childrenByParent() map[int][]int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		ppid, _ := strconv.Atoi(f[1])
		kids[ppid] = append(kids[ppid], pid)
	}
	return kids
}

// treeRSS is the RSS and the PSS of pid and every descendant, in MiB,
// and their number.
func treeRSS(root int) (float64, float64, int) {
	kids := childrenByParent()
	var kib, pss int64
	n := 0
	var walk func(int)
	walk = func(p int) {
		kib += rssKiBOr0(p)
		pss += pssKiB(p)
		n++
		for _, c := range kids[p] {
			walk(c)
		}
	}
	walk(root)
	return float64(kib) / 1024, float64(pss) / 1024, n
}

// pssKiB is a process's proportional set size (/proc/PID/smaps_rollup).
func pssKiB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "Pss:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// report is the figures of the issue, each beside its target.
type report struct{ rows [][5]string }

func (r *report) add(what string, v float64, unit, target string, ok bool) {
	val := fmt.Sprintf("%.2f", v)
	if v >= 1000 {
		val = fmt.Sprintf("%.0f", v)
	}
	verdict := "miss"
	if ok {
		verdict = "ok"
	}
	r.rows = append(r.rows, [5]string{what, val, unit, target, verdict})
}

func (r *report) print() {
	fmt.Println("\nfigure | measured | target | ")
	for _, row := range r.rows {
		fmt.Printf("%s | %s %s | %s | %s\n", row[0], row[1], row[2], row[3], row[4])
	}
}

type daemon struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	wmu   sync.Mutex
}

func start(bin, script, dir string) *daemon { return startWith(bin, script, dir) }

func rssKiBOr0(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func startWith(bin, script, dir string, flags ...string) *daemon {
	return startArgv(bin, append(flags, script), dir)
}

// startArgv starts bin with args on pipes, its calls' TMPDIR under dir.
func startArgv(bin string, args []string, dir string) *daemon {
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "TMPDIR="+callTmpDir(dir))
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

func coldStart(bin, script string, n int, flags string) time.Duration {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		t := time.Now()
		d := startWith(bin, script, filepath.Dir(script), strings.Fields(flags)...)
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

// tmpOverride is -tmpdir: the measured daemons' TMPDIR, when set.
var tmpOverride string

func callTmpDir(dir string) string {
	if tmpOverride != "" {
		return tmpOverride
	}
	return dir
}

// fsType names the filesystem of dir (call directories are made there,
// and their cost is mostly the filesystem's).
func fsType(dir string) string {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return "?"
	}
	switch st.Type {
	case 0x01021994:
		return "tmpfs"
	case 0xef53:
		return "ext4"
	case 0x9123683e:
		return "btrfs"
	case 0x58465342:
		return "xfs"
	case 0x794c7630:
		return "overlayfs"
	}
	return fmt.Sprintf("fs 0x%x", st.Type)
}
