package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchCancel measures, for a tool that dies on SIGTERM, the time from the
// notifications/cancelled line written to the call's process group gone
// (p50, p99); and the time from SIGKILL of the daemon with 50 calls in
// flight to every call process gone (the lifeline).
func benchCancel(bin, dir string, n int) {
	script := filepath.Join(dir, "cancel.sh")
	check(os.WriteFile(script, []byte(`tool_wait() { local re='"k":"([a-z0-9]+)"'; [[ $1 =~ $re ]]; echo $$ > "$READY_DIR/${BASH_REMATCH[1]}.tmp"; mv "$READY_DIR/${BASH_REMATCH[1]}.tmp" "$READY_DIR/${BASH_REMATCH[1]}.pid"; while :; do sleep 0.05; done; }`+"\n"), 0o755))
	check(os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[{"name":"wait","inputSchema":{"type":"object"}}]}`), 0o644))
	ready := filepath.Join(dir, "ready")
	check(os.MkdirAll(ready, 0o755))
	os.Setenv("READY_DIR", ready)
	d := start(bin, script, dir)
	lat := make([]time.Duration, n)
	for i := 0; i < n; i++ {
		key := "c" + strconv.Itoa(i)
		d.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"wait","arguments":{"k":%q}}}`, key, key))
		pgid := waitPid(filepath.Join(ready, key+".pid"))
		t0 := time.Now()
		d.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%q}}`, key))
		for groupAlive(pgid) {
			time.Sleep(200 * time.Microsecond)
		}
		lat[i] = time.Since(t0)
	}
	fmt.Printf("cancel (TERM-compliant tool), notification → group gone: p50 %.2f ms, p99 %.2f ms (n=%d)\n", ms(pct(lat, 50)), ms(pct(lat, 99)), n)
	d.stdin.Close()
	d.cmd.Wait()

	// 50 calls in flight (above the default concurrency of 16), then
	// SIGKILL the daemon.
	d = startWith(bin, script, dir, "--max-concurrency", "64")
	var pgids []int
	for i := 0; i < 50; i++ {
		key := "k" + strconv.Itoa(i)
		d.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"wait","arguments":{"k":%q}}}`, key, key))
	}
	for i := 0; i < 50; i++ {
		pgids = append(pgids, waitPid(filepath.Join(ready, "k"+strconv.Itoa(i)+".pid")))
	}
	t0 := time.Now()
	check(d.cmd.Process.Signal(syscall.SIGKILL))
	for _, g := range pgids {
		for groupAlive(g) {
			time.Sleep(200 * time.Microsecond)
		}
	}
	fmt.Printf("daemon SIGKILL with 50 calls in flight → every call process gone: %.1f ms\n", ms(time.Since(t0)))
	d.cmd.Wait()
}

func waitPid(path string) int {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	check(fmt.Errorf("%s never appeared", path))
	return 0
}

// groupAlive reports whether any non-zombie process is in group pgid.
func groupAlive(pgid int) bool {
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
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			_ = pid
			return true
		}
	}
	return false
}
