package tests

// Reliability and security of the request path (issue 10): the items in the
// request path and the supervisor's bookkeeping. Each test failed on the
// main its fix started from.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// Item 2: what is validated must be what the tool can read. A repeated key
// in the arguments is refused before the tool runs: the validator saw the
// last value, the bash idiom our examples teach reads the first.
func TestDuplicateKeysRefused(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `tool_greet() { : > "$MARKS/ran"; [[ $1 =~ \"name\":\"([^\"]*)\" ]] && echo "Hello ${BASH_REMATCH[1]}"; }`,
		tools:  `{"tools":[{"name":"greet","inputSchema":{"type":"object","properties":{"name":{"type":"string","pattern":"^[A-Za-z]+$"}},"required":["name"]}}]}`,
	}))
	s.RoundTrip(harness.InitLine)
	r := s.Call(1, "greet", `{"name":"EVIL;$(id)","name":"Ada"}`)
	ctWantError(t, r, -32602, `Invalid params: arguments.name is given more than once; duplicate keys are refused because the tool could read either value`)
	r = s.Call(2, "greet", `{"name":"Ada","nested":{"a":[{"k":1,"k":2}]}}`)
	ctWantError(t, r, -32602, `Invalid params: arguments.nested.a[0].k is given more than once; duplicate keys are refused because the tool could read either value`)
	if ctExists(s, "ran") {
		t.Fatalf("the tool ran for arguments with a duplicate key")
	}
	ctWantText(t, s.Call(3, "greet", `{"name":"Ada"}`), false, "Hello Ada")
}

// Item 7: every step of reading a request is linear in its size. A tools/call
// whose id is 8 MB of digits, then a ping: both answered well within the
// hang bound (normalising such an id through big.Rat took minutes).
func TestHugeIDIsLinear(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `tool_hi() { echo hi; }`, tools: harness.ToolsJSON("hi")}))
	s.RoundTrip(harness.InitLine)
	id := "1" + strings.Repeat("0", 8<<20)
	s.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"hi","arguments":{}}}`)
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `5}}`)
	s.Send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	bound := time.After(min(rl2NoteBound, time.Until(harness.Deadline(t))))
	for got := 0; got < 2; {
		select {
		case line, ok := <-s.Lines:
			if !ok {
				t.Fatalf("server closed stdout\nstderr:\n%s", s.Stderr)
			}
			switch {
			case strings.Contains(string(line), `"id":"after"`):
				s.Check(line)
				got++
			// Not checked against the schema: the validator's own number
			// handling is not linear, and the id is echoed as written.
			case strings.HasPrefix(string(line), `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"hi"}]`):
				got++
			default:
				t.Fatalf("unexpected line (%d bytes): %.200s", len(line), line)
			}
		case <-bound:
			t.Fatalf("a request with an 8 MB id was not answered within %v (reading a request must be linear in its size)", rl2NoteBound)
		}
	}
}

// Item 14: the bound on waiting calls is said, and the refusal says what
// to change.
func TestBusyMessageSaysTheBound(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `tool_hold() { until [ -e "$MARKS/go" ]; do sleep 0.01; done; echo held; }`,
		tools:  harness.ToolsJSON("hold"),
		flags:  []string{"--max-concurrency", "1"},
	}))
	t.Cleanup(func() { os.WriteFile(filepath.Join(ctMarks(s), "go"), nil, 0o644) })
	s.RoundTrip(harness.InitLine)
	for i := 1; i <= 64; i++ {
		s.Send(harness.CallLine(i, "hold", `{}`))
	}
	r := harness.Parse(t, s.RoundTrip(harness.CallLine(65, "hold", `{}`)))
	ctWantError(t, r, -32603, "Server busy: 64 tool calls are already running or waiting (64 per --max-concurrency slot; --max-concurrency is 1); retry later, or start mcp-bashd with a higher --max-concurrency")
	if err := os.WriteFile(filepath.Join(ctMarks(s), "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 64; i++ {
		if r := harness.Parse(t, string(s.Recv())); r.Result == nil {
			t.Fatalf("a waiting call was not answered: %+v", r)
		}
	}
}

// Item 8: a reload's old snapshot is removed once no call uses it; eight
// edits leave one snapshot, not nine.
func TestReloadsRemoveOldSnapshots(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `tool_v() { echo 0; }`, tools: harness.ToolsJSON("v")}))
	s.RoundTrip(harness.InitLine)
	script := filepath.Join(s.Dir, "server.sh")
	for i := 1; i <= 8; i++ {
		rl2Replace(t, script, fmt.Sprintf("tool_v() { echo %d; }\n", i))
		want := fmt.Sprint(i)
		proctest.WaitUntil(t, harness.Deadline(t), "edit "+want+" served", func() (bool, string) {
			r := s.Call(100+i, "v", `{}`)
			return r.Result != nil && len(r.Result.Content) == 1 && r.Result.Content[0].Text == want, r.Raw
		})
	}
	proctest.WaitUntil(t, harness.Deadline(t), "one snapshot left", func() (bool, string) {
		snaps, _ := filepath.Glob(filepath.Join(s.Tmp, "*", "snapshot.*.sh"))
		return len(snaps) == 1, fmt.Sprintf("snapshots: %q", snaps)
	})
}

// Item 5: a signal during a slow top-level load is acted on at once: the
// load is cancelled (its processes killed) and the daemon dies by the
// signal, not after the load's 30 s limit with exit status 1.
func TestSIGTERMDuringLoad(t *testing.T) {
	o := rfServer("rf_note loading\nsleep 300\n", nil, nil)
	o.Init, o.Log = false, false
	d := harness.Start(t, o)
	dir := d.Dir
	proctest.WaitUntil(t, harness.Deadline(t), "the load to start", func() (bool, string) {
		_, err := os.Stat(filepath.Join(dir, "loading"))
		return err == nil, fmt.Sprint(err)
	})
	if len(d.Alive(t)) == 0 {
		t.Fatalf("no process of the load found by its marker")
	}
	sent := time.Now()
	if err := d.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.WaitExit(t)
	// A hang bound, far below the load's 30 s limit the old daemon waited for.
	if took := time.Since(sent); took > 10*time.Second {
		t.Errorf("exited %v after SIGTERM during the load", took.Round(time.Millisecond))
	}
	if sig := d.Signalled(); sig != syscall.SIGTERM {
		t.Errorf("daemon ended by signal %d (exit status %d), want death by SIGTERM; stderr:\n%s", sig, d.Cmd.ProcessState.ExitCode(), d.Stderr)
	}
	d.WaitNoneAlive(t, harness.Deadline(t), "the load's processes to be gone")
}

// Item 6: every process the daemon starts dies with it, SIGKILL included:
// a top-level load, a hot reload and a tools directory's `list` carry the
// lifeline as calls do (they used to be reparented to init and live on).
func TestSIGKILLDuringLoadReloadAndList(t *testing.T) {
	start := func(t *testing.T, script string, flags ...string) *harness.Daemon {
		o := rfServer(script, []string{"v"}, flags)
		o.Init, o.Log = false, false
		return harness.Start(t, o)
	}
	killAt := func(t *testing.T, d *harness.Daemon, marker string) {
		proctest.WaitUntil(t, harness.Deadline(t), marker, func() (bool, string) {
			_, err := os.Stat(filepath.Join(d.Dir, marker))
			return err == nil, fmt.Sprint(err)
		})
		if len(d.Alive(t)) == 0 {
			t.Fatalf("no process found by the marker at %s", marker)
		}
		if err := d.Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		d.WaitExit(t)
		d.WaitNoneAlive(t, time.Now().Add(min(rl2NoteBound, time.Until(harness.Deadline(t)))), "every process of the daemon to be gone after its SIGKILL")
	}
	t.Run("load", func(t *testing.T) {
		d := start(t, "rf_note loading\nsleep 300\n")
		killAt(t, d, "loading")
	})
	t.Run("reload", func(t *testing.T) {
		d := start(t, "tool_v() { echo v; }\n[ -e \"$RF_DIR/slow\" ] && { rf_note reloading; sleep 300; }\n")
		d.RoundTrip(harness.InitLine)
		rfTouch(t, d.Dir, "slow")
		rl2Replace(t, filepath.Join(d.Dir, "server.sh"), rfLib+"tool_v() { echo w; }\n[ -e \"$RF_DIR/slow\" ] && { rf_note reloading; sleep 300; }\n")
		killAt(t, d, "reloading")
	})
	t.Run("list", func(t *testing.T) {
		tools := t.TempDir()
		provider := "#!/usr/bin/env bash\nif [ \"$1\" = list ]; then\n  [ -e \"$RF_DIR/slow\" ] && { echo $$ > \"$RF_DIR/listing\"; sleep 300; }\n  echo '{\"name\":\"%s\",\"inputSchema\":{\"type\":\"object\"}}'\nfi\n"
		sdWriteExe(t, filepath.Join(tools, "p.sh"), fmt.Sprintf(provider, "p"), true)
		d := start(t, "tool_v() { echo v; }\n", "--tools-dir", tools)
		d.RoundTrip(harness.InitLine)
		rfTouch(t, d.Dir, "slow")
		sdWriteExe(t, filepath.Join(tools, "q.sh"), fmt.Sprintf(provider, "q"), true)
		d.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`) // lists now, if the watcher has not begun
		killAt(t, d, "listing")
	})
}

// Issue 12, item 2: a tool's bash error names the server script's own
// file and line, as under the SDK, not the snapshot calls source.
func TestErrorsPointAtTheScript(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: "# one\n# two\ntool_unset() {\n    set -u\n    echo \"$NOPE_UNSET\"\n}",
		tools:  harness.ToolsJSON("unset"),
	}))
	s.RoundTrip(harness.InitLine)
	r := s.Call(1, "unset", `{}`)
	want := "Error executing unset: " + filepath.Join(s.Dir, "server.sh") + ": line 5: NOPE_UNSET: unbound variable"
	ctWantText(t, r, true, want)
}
