package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// benchCluster measures a scaled-out deployment (issue 26) against one
// replica, in the same run: 2026 server/discover with 8 clients and
// tools/call one at a time and with 8 clients, sent (1) to one daemon
// alone, (2) to one daemon with --state (what the store costs a request,
// the daemon's work being the same), (3) through haproxy, round-robin
// without affinity, to three replicas sharing the store. Redis's own
// command count says how many store operations each request made.
func benchCluster(bin, dir string, requests, calls int) {
	redisBin, haproxyBin := lookBin("redis-server"), lookBin("haproxy")
	script := filepath.Join(dir, "server.sh")
	check(os.WriteFile(script, []byte(echoTool+"\n"), 0o755))
	check(os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`), 0o644))

	redisAddr := freeAddr()
	_, port, _ := net.SplitHostPort(redisAddr)
	redis := exec.Command(redisBin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	check(redis.Start())
	defer func() { redis.Process.Kill(); redis.Wait() }()
	waitAddr(redisAddr)
	state := []string{"--state", "redis://" + redisAddr + "/0"}

	fmt.Printf("mcp-bashd scale-out benchmark (%s), %d cores, load average %s: 2026-07-28 over HTTP, keep-alive\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), loadAvg())
	alone, stopAlone := httpDaemon(bin, script, dir)
	defer stopAlone()
	withState, stopWithState := httpDaemon(bin, script, dir, state...)
	defer stopWithState()
	var backends []string
	for i := 0; i < 3; i++ {
		u, stop := httpDaemon(bin, script, dir, append(state, "--replica-id", fmt.Sprintf("r%d", i))...)
		defer stop()
		backends = append(backends, fmt.Sprintf("    server r%d %s", i, strings.TrimPrefix(strings.TrimSuffix(u, "/mcp"), "http://")))
	}
	front := freeAddr()
	cfg := filepath.Join(dir, "haproxy.cfg")
	check(os.WriteFile(cfg, []byte(strings.Join(append([]string{"global", "    maxconn 256", "defaults", "    mode http",
		"    timeout connect 5s", "    timeout client 10m", "    timeout server 10m", "frontend mcp", "    bind " + front,
		"    default_backend replicas", "backend replicas", "    balance roundrobin", "    option http-server-close"}, backends...), "\n")+"\n"), 0o644))
	lb := exec.Command(haproxyBin, "-db", "-f", cfg)
	check(lb.Start())
	defer func() { lb.Process.Kill(); lb.Wait() }()
	waitAddr(front)
	balanced := "http://" + front + "/mcp"

	type target struct{ name, url string }
	targets := []target{{"one daemon", alone}, {"one daemon, --state", withState}, {"haproxy → 3 replicas, --state", balanced}}
	fmt.Printf("%-32s %16s %14s %14s %18s %16s\n", "", "discover req/s", "call p50 ms", "call p99 ms", "calls/s, 8 clients", "Redis cmds/req")
	for _, tg := range targets {
		before := redisCommands(redisAddr)
		rate := parallelRate(tg.url, "server/discover", "", discoverBody, requests)
		afterDiscover := redisCommands(redisAddr)
		lat := make([]time.Duration, calls)
		for i := range lat {
			t := time.Now()
			post2026(tg.url, "tools/call", "echo", callBody)
			lat[i] = time.Since(t)
		}
		callRate := parallelRate(tg.url, "tools/call", "echo", callBody, calls)
		after := redisCommands(redisAddr)
		perReq := float64(afterDiscover-before) / float64(requests)
		perCall := float64(after-afterDiscover) / float64(2*calls)
		fmt.Printf("%-32s %16.0f %14.2f %14.2f %18.0f %8.2f / %.2f\n", tg.name, rate, ms(pct(lat, 50)), ms(pct(lat, 99)), callRate, perReq, perCall)
	}
	fmt.Println("(Redis cmds/req: commands Redis processed per server/discover / per tools/call, INFO stats; the replicas' own periodic writes — presence, the deployment key — count too)")
}

const (
	meta2026     = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	discoverBody = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta2026 + `}}`
	callBody     = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1,"text":"hi"},` + meta2026 + `}}`
)

var clusterClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// post2026 sends one 2026-07-28 request over keep-alive connections and
// fails the bench on anything but 200.
func post2026(url, method, name, body string) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := clusterClient.Do(req)
	check(err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		check(fmt.Errorf("%s to %s: HTTP %d", method, url, resp.StatusCode))
	}
}

// parallelRate is n requests from 8 clients at once, per second.
func parallelRate(url, method, name, body string, n int) float64 {
	post2026(url, method, name, body) // warm the connection
	t0 := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/8; i++ {
				post2026(url, method, name, body)
			}
		}()
	}
	wg.Wait()
	return float64(n/8*8) / time.Since(t0).Seconds()
}

// httpDaemon starts mcp-bashd --http on a port the kernel picks and
// returns its URL.
func httpDaemon(bin, script, dir string, flags ...string) (string, func()) {
	c := exec.Command(bin, append(append([]string{"--http", "--http-bind", "127.0.0.1", "--http-port", "0"}, flags...), script)...)
	c.Env = append(os.Environ(), "TMPDIR="+callTmpDir(dir))
	stderr, err := c.StderrPipe()
	check(err)
	check(c.Start())
	url := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "serving "); ok && strings.HasPrefix(u, "http") {
			url = u
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if url == "" {
		check(fmt.Errorf("mcp-bashd %v did not print its URL", flags))
	}
	return url, func() { c.Process.Signal(os.Interrupt); c.Wait() }
}

// redisCommands is Redis's total_commands_processed (INFO stats), read
// over a plain connection.
func redisCommands(addr string) int64 {
	conn, err := net.Dial("tcp", addr)
	check(err)
	defer conn.Close()
	fmt.Fprint(conn, "*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	check(err)
	n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	buf := make([]byte, n+2)
	_, err = io.ReadFull(r, buf)
	check(err)
	for _, line := range strings.Split(string(buf), "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			c, _ := strconv.ParseInt(v, 10, 64)
			return c
		}
	}
	check(fmt.Errorf("redis INFO stats without total_commands_processed"))
	return 0
}

func lookBin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p, err := exec.LookPath("/usr/sbin/" + name); err == nil {
		return p
	}
	check(fmt.Errorf("-cluster needs %s (Debian: apt-get install redis-server haproxy)", name))
	return ""
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer ln.Close()
	return ln.Addr().String()
}

func waitAddr(addr string) {
	for i := 0; i < 500; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	check(fmt.Errorf("nothing listens on %s", addr))
}
