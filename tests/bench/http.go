package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// benchHTTP measures the Streamable HTTP transport with keep-alive:
// server/discover (2026, no tool) and ping (legacy) with 8 concurrent
// clients, tools/call one at a time (p50) and with 8 concurrent clients.
func benchHTTP(bin, script, dir string, requests, calls int, stdioP50 float64, r *report, flags string) {
	c := exec.Command(bin, append(append([]string{"--http", "--http-port", "0"}, strings.Fields(flags)...), script)...)
	c.Env = append(os.Environ(), "TMPDIR="+callTmpDir(dir))
	stderr, err := c.StderrPipe()
	check(err)
	check(c.Start())
	defer func() { c.Process.Signal(os.Interrupt); c.Wait() }()
	url := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "serving "); ok {
			url = u
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if url == "" {
		check(fmt.Errorf("daemon did not print its URL"))
	}
	post := func(method, name, body string) { post2026(url, method, name, body) }
	discover, call := discoverBody, callBody
	parallel := func(n int, f func()) time.Duration {
		t0 := time.Now()
		var wg sync.WaitGroup
		per := n / 8
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per; i++ {
					f()
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	post("server/discover", "", discover) // warm the connection
	el := parallel(requests, func() { post("server/discover", "", discover) })
	rate := float64(requests) / el.Seconds()
	r.add("HTTP server/discover, 8 clients", rate, "req/s", "≥ 20,000/s", rate >= 20000)
	lat := make([]time.Duration, calls)
	for i := range lat {
		t := time.Now()
		post("tools/call", "echo", call)
		lat[i] = time.Since(t)
	}
	p50 := ms(pct(lat, 50))
	fmt.Printf("http tools/call one at a time: p50 %.2f ms, p99 %.2f ms\n", p50, ms(pct(lat, 99)))
	r.add("HTTP tools/call one at a time, p50", p50, "ms", fmt.Sprintf("≤ stdio p50 + 0.3 = %.2f ms", stdioP50+0.3), p50 <= stdioP50+0.3)
	el = parallel(calls, func() { post("tools/call", "echo", call) })
	fmt.Printf("http tools/call, 8 clients: %.0f calls/s\n", float64(calls)/el.Seconds())
}
