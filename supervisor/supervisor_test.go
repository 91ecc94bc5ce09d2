package supervisor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

func newTestSupervisor(t *testing.T, script string) (*Supervisor, *Snapshot) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	s, err := New(Config{Bash: bash, Script: path, OutputCap: 1 << 20, Grace: 2 * time.Second, HookBudget: 2 * time.Second, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sn, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, sn
}

func TestStateFileCountsAcrossCalls(t *testing.T) {
	s, sn := newTestSupervisor(t, `
set -euo pipefail
STATE="$(mktemp "${TMPDIR:-/tmp}/state.XXXXXX")"
export STATE
echo 0 > "$STATE"
tool_count() { local n; n=$(( $(<"$STATE") + 1 )); echo "$n" > "$STATE"; echo "$n"; }
`)
	for want := 1; want <= 3; want++ {
		o := s.Call(context.Background(), Request{ID: "1", Tool: "count", Args: []byte(`{}`), Snapshot: sn})
		if text := strings.TrimSpace(string(o.Output)); o.ExitCode != 0 || text != string(rune('0'+want)) {
			t.Fatalf("call %d: %q exit=%d outcome=%+v", want, text, o.ExitCode, o)
		}
	}
}

func TestHookRefusesAndTrapOutputJoins(t *testing.T) {
	s, sn := newTestSupervisor(t, `
mcp_before_tool_call() { if [ "$1" = deny ]; then echo "no way"; return 3; fi; cd /; }
tool_deny() { echo ran; }
tool_where() { trap 'echo bye' EXIT; pwd; return 2; }
`)
	o := s.Call(context.Background(), Request{ID: "1", Tool: "deny", Args: []byte(`{}`), Snapshot: sn})
	if o.Phase != "refused" || o.HookStatus != 3 || string(o.HookOutput) != "no way\n" || len(o.Output) != 0 {
		t.Fatalf("deny: %+v", o)
	}
	o = s.Call(context.Background(), Request{ID: "2", Tool: "where", Args: []byte(`{}`), Snapshot: sn})
	if o.ExitCode != 2 || string(o.Output) != "/\nbye\n" {
		t.Fatalf("where: %q %+v", o.Output, o)
	}
}

func TestCancelTermIgnoringTool(t *testing.T) {
	s, sn := newTestSupervisor(t, `
tool_stubborn() { trap '' TERM; echo started > "$MCP_CALL_TMPDIR/../ready"; while :; do sleep 0.05; done; }
`)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		// Wait for the tool to be running, then cancel.
		for {
			m, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "mcp-call.*", "ready"))
			if len(m) > 0 {
				cancel(ErrCancelled)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	o := s.Call(ctx, Request{ID: "1", Tool: "stubborn", Args: []byte(`{}`), Snapshot: sn})
	if o.End != Cancelled || o.Signal == 0 {
		t.Fatalf("outcome %+v", o)
	}
}

// A cancellation's grace covers the whole group: the tool's shell dies on
// TERM, its child finishes the cleanup it does on TERM (it waits for a file
// the test writes once the shell is gone), and the call then ends at once,
// with the shell's status, long before its hour of grace.
func TestCancelGraceCoversChildren(t *testing.T) {
	s, sn := newTestSupervisor(t, `
tool_tidy() {
  ( trap 'until [ -e "$D/go" ]; do sleep 0.01; done; echo cleaned > "$D/child"; exit 0' TERM
    while :; do sleep 0.05; done ) &
  echo "$$" > "$D/shell"
  wait
}
`)
	s.cfg.Grace = time.Hour
	d := t.TempDir()
	s.env = append(s.env, "D="+d) // the calls' environment
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		shell := waitFile(t, filepath.Join(d, "shell"))
		cancel(ErrCancelled)
		// The shell dies during the grace while its child cleans up: on
		// Linux it is reaped then, where there is no subreaper its zombie
		// pins the group until the grace ends (reaper_posix.go).
		for {
			if state, _, ok := procStat(strings.TrimSpace(shell)); !ok || state == 'Z' {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := os.Stat(filepath.Join(d, "child")); err == nil {
			t.Errorf("the child finished before it was let go")
		}
		os.WriteFile(filepath.Join(d, "go"), nil, 0o600)
	}()
	o := s.Call(ctx, Request{ID: "1", Tool: "tidy", Args: []byte(`{}`), Snapshot: sn})
	if o.End != Cancelled || o.ExitCode != 143 {
		t.Fatalf("outcome %+v", o)
	}
	if b, err := os.ReadFile(filepath.Join(d, "child")); err != nil || string(b) != "cleaned\n" {
		t.Fatalf("the child's cleanup: %q %v", b, err)
	}
}

// waitFile waits for path to hold a line and returns it.
func waitFile(t *testing.T, path string) string {
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return string(b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The supervisor owns the current snapshot: a request without one runs with
// Current(); Reload swaps a new one in only when the load succeeds.
func TestReloadSwapsOnlyOnSuccess(t *testing.T) {
	s, first := newTestSupervisor(t, `tool_v() { echo one; }`)
	call := func() string {
		t.Helper()
		o := s.Call(context.Background(), Request{ID: "1", Tool: "v", Args: []byte(`{}`)})
		if o.End == NotRun {
			return "not run: " + o.Err.Error()
		}
		return strings.TrimSpace(string(o.Output))
	}
	if got := call(); got != "not run: no server snapshot loaded" {
		t.Fatalf("a call before any snapshot is in use: %q", got)
	}
	s.Use(first)
	if got := call(); got != "one" {
		t.Fatalf("with the first snapshot in use: %q", got)
	}

	write(t, s.cfg.Script, `tool_v() { echo two; }`)
	old, next, err := s.Reload(context.Background())
	if err != nil || old != first || next == nil || s.Current() != next || next.Gen <= first.Gen {
		t.Fatalf("Reload: old %v new %v current %v err %v", old, next, s.Current(), err)
	}
	if got := call(); got != "two" {
		t.Fatalf("after the reload: %q", got)
	}

	write(t, s.cfg.Script, "tool_v() { echo three; }\nexit 3\n")
	old, failed, err := s.Reload(context.Background())
	var le *LoadError
	if !errors.As(err, &le) || le.Status != "exit status 3" || failed != nil || old != next || s.Current() != next {
		t.Fatalf("a failed Reload: old %v new %v current %v err %v", old, failed, s.Current(), err)
	}
	if got := call(); got != "two" {
		t.Fatalf("after a failed reload the last good snapshot must serve: %q", got)
	}
}

// A zero Config field takes its default, in one place; a negative grace or
// output cap is kept (none).
func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.OutputCap != DefaultOutputCap || c.Grace != DefaultGrace || c.HookBudget != DefaultHookBudget ||
		c.LoadBudget != DefaultLoadBudget || c.Log == nil || c.Bash == "" {
		t.Errorf("defaults: %+v", c)
	}
	c = Config{Bash: "/x/bash", OutputCap: -1, Grace: -1, HookBudget: time.Second}.withDefaults()
	if c.Bash != "/x/bash" || c.OutputCap != -1 || c.Grace != -1 || c.HookBudget != time.Second {
		t.Errorf("set fields changed: %+v", c)
	}
}
