package tests

// Issue 23, security 1: a sandboxed call of a root daemon cannot undo its
// sandbox. The tool reads its own capabilities from /proc/self/status,
// tries to enter the daemon's network namespace to reach a loopback
// listener the test holds, and tries to move itself into the root pids
// and memory cgroups — what an attacker's tool would do first.

import (
	"fmt"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestSandboxRootDaemonCallCannotUndoItsSandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the daemon must be root for this attack")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	body := fmt.Sprintf(`
tool_escape() {
    grep -E '^(Uid|Gid|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status | tr '\t' ' '
    if nsenter -t "$PPID" -n bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' 2>/dev/null; then echo "netns: entered"; else echo "netns: refused"; fi
    for c in pids memory; do
        if (echo "$BASHPID" >/sys/fs/cgroup/$c/cgroup.procs) 2>/dev/null; then echo "$c: moved"; else echo "$c: refused"; fi
    done
    # Beyond the issue's routes: a new user namespace (full capabilities
    # inside it) to move out of the cgroup; signalling or reading the daemon.
    if unshare -r bash -c 'echo $$ >/sys/fs/cgroup/pids/cgroup.procs' 2>/dev/null; then echo "userns pids: moved"; else echo "userns pids: refused"; fi
    if kill -0 "$PPID" 2>/dev/null; then echo "signal daemon: allowed"; else echo "signal daemon: refused"; fi
    if cat /proc/$PPID/environ >/dev/null 2>&1; then echo "daemon environ: read"; else echo "daemon environ: refused"; fi
}
`, ln.Addr().(*net.TCPAddr).Port)
	d := harness.Start(t, sbServe(t, body, sbTool{"escape", `{"network":false,"limits":{"processes":64,"memory":"256MiB"}}`}))
	text, isErr := sbCall(t, d, 1, "escape", `{}`)
	sbRequire(t, d, "cgroup limits")
	want := strings.Join([]string{
		"Uid: 65534 65534 65534 65534",
		"Gid: 65534 65534 65534 65534",
		"CapInh: 0000000000000000",
		"CapPrm: 0000000000000000",
		"CapEff: 0000000000000000",
		"CapBnd: 0000000000000000",
		"CapAmb: 0000000000000000",
		"NoNewPrivs: 1",
		"netns: refused",
		"pids: refused",
		"memory: refused",
		"userns pids: refused",
		"signal daemon: refused",
		"daemon environ: refused",
	}, "\n")
	if isErr || text != want {
		t.Fatalf("isError %v; the tool saw\n%s\nwant\n%s", isErr, text, want)
	}
	// The call has answered, so a connection it made is in the backlog:
	// a non-blocking accept finds it or there is none.
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd()) // Fd makes it blocking: once, before SetNonblock
	syscall.SetNonblock(fd, true)
	if nfd, _, err := syscall.Accept(fd); err != syscall.EAGAIN {
		syscall.Close(nfd)
		t.Fatalf("the listener in the daemon's network namespace was reached (accept: %v)", err)
	}
}

// A non-root daemon (here nobody, when the tests run as root): its
// sandboxed call keeps the daemon's uid, and has no capability either —
// with network: false it is in a user namespace, where it would otherwise
// hold every capability of that namespace, so the bounding set is emptied
// there too — and no_new_privs.
func TestSandboxNonRootDaemonCallHasNoCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the tests drop to nobody for the daemon, which needs root")
	}
	s := harness.Start(t, ctServer(t, ctOpt{
		script:       `tool_caps() { grep -E '^(Uid|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status | tr '\t' ' '; }`,
		tools:        sbToolsJSON(sbTool{"caps", `{"network":false}`}),
		unprivileged: true,
	}))
	s.RoundTrip(harness.InitLine)
	r := s.Call(1, "caps", `{}`)
	text, isErr := r.Text(t)
	if strings.Contains(text, "network namespace") {
		t.Skipf("this kernel does not let nobody create a user namespace: %s", text)
	}
	want := strings.Join([]string{
		"Uid: 65534 65534 65534 65534",
		"CapInh: 0000000000000000",
		"CapPrm: 0000000000000000",
		"CapEff: 0000000000000000",
		"CapBnd: 0000000000000000",
		"CapAmb: 0000000000000000",
		"NoNewPrivs: 1",
	}, "\n")
	if isErr || text != want {
		t.Fatalf("isError %v; the tool saw\n%s\nwant\n%s", isErr, text, want)
	}
}
