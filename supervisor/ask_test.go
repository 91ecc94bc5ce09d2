package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcp-bashd/mcp-bashd/scripts"
)

func bashPath(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	return bash
}

// newAskSupervisor is newTestSupervisor with the real shim sourced by the
// script (its helpers are what is under test) and the given grace.
func newAskSupervisor(t *testing.T, script string, grace time.Duration, warm int) (*Supervisor, *Snapshot, string) {
	t.Helper()
	dir := t.TempDir()
	shim := filepath.Join(dir, "mcpserver_core.sh")
	write(t, shim, scripts.Shim)
	path := filepath.Join(dir, "server.sh")
	write(t, path, ". "+strconv.Quote(shim)+"\nD="+strconv.Quote(dir)+"\n"+script)
	t.Setenv("TMPDIR", dir)
	s, err := New(Config{Bash: bashPath(t), Script: path, OutputCap: 1 << 20, Grace: grace, HookBudget: 2 * time.Second,
		Warm: warm, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sn, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Use(sn)
	return s, sn, dir
}

// Every helper reaches Ask with the request it means — elicitation's
// params built by the daemon from the raw fields, a unit of several asked
// as one — and prints the answer the Ask gave; a child of the tool asks
// too.
func TestAskHelpersReachAsk(t *testing.T) {
	for _, warm := range []int{-1, 1} {
		t.Run(fmt.Sprintf("warm=%d", warm), func(t *testing.T) {
			if warm > 0 && !warmHere {
				t.Skip("no warm call processes in this build")
			}
			s, sn, _ := newAskSupervisor(t, `
tool_ask() {
    mcp_elicit "Delete \"x\"?
really" '{"type":"object","properties":{"ok":{"type":"boolean"}}}' || return
    mcp_sample '{"messages":[],"maxTokens":5}' || return
    mcp_roots || return
    mcp_ask ping || return
    mcp_ask_all '{"b":{"method":"roots/list"},"a":{"method":"sampling/createMessage","params":{"maxTokens":1}}}' || return
    ( mcp_ask child/ask '{"from":"child"}' ) &
    wait $!
}
`, 2*time.Second, warm)
			var mu sync.Mutex
			var got []string
			ask := func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error) {
				var out []json.RawMessage
				mu.Lock()
				defer mu.Unlock()
				for _, r := range reqs {
					got = append(got, r.Key+" "+r.Method+" "+string(r.Params))
					if r.Method == "elicitation/create" {
						out = append(out, json.RawMessage(`{"action":"accept","content":{"ok":true}}`))
						continue
					}
					out = append(out, json.RawMessage(fmt.Sprintf(`{"answer":%q}`, r.Method)))
				}
				return out, nil
			}
			if warm > 0 {
				// The call must be handed to a warm process: wait for one.
				waitFor(t, "a warm process", func() bool { return len(idleWarm(s)) > 0 })
			}
			o := s.Call(context.Background(), Request{ID: "1", Tool: "ask", Args: []byte(`{}`), Snapshot: sn, Ask: ask})
			want := strings.Join([]string{
				`{"action":"accept","content":{"ok":true}}`,
				`{"answer":"sampling/createMessage"}`,
				`{"answer":"roots/list"}`,
				`{"answer":"ping"}`,
				`{"a":{"answer":"sampling/createMessage"},"b":{"answer":"roots/list"}}`,
				`{"answer":"child/ask"}`,
			}, "\n") + "\n"
			if o.ExitCode != 0 || string(o.Output) != want {
				t.Fatalf("exit %d, output:\n%s\nwant:\n%s", o.ExitCode, o.Output, want)
			}
			wantAsked := []string{
				` elicitation/create {"message":"Delete \"x\"?\nreally","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`,
				` sampling/createMessage {"messages":[],"maxTokens":5}`,
				` roots/list `,
				` ping `,
				`a sampling/createMessage {"maxTokens":1}`,
				`b roots/list `,
				` child/ask {"from":"child"}`,
			}
			if strings.Join(got, "\n") != strings.Join(wantAsked, "\n") {
				t.Fatalf("asked:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantAsked, "\n"))
			}
		})
	}
}

// A call that cannot ask (nil Ask), an Ask that fails and a request the
// daemon refuses: each helper returns non-zero with the reason on stderr,
// and the tool goes on.
func TestAskFailuresReachTheHelper(t *testing.T) {
	s, sn, _ := newAskSupervisor(t, `
tool_fail() {
    mcp_roots; echo "roots $?"
    mcp_elicit "m" 'not json'; echo "elicit $?"
    mcp_ask_all '{}'; echo "all $?"
}
`, 2*time.Second, -1)
	o := s.Call(context.Background(), Request{ID: "1", Tool: "fail", Args: []byte(`{}`), Snapshot: sn})
	want := "mcp_roots: this call cannot ask the client\nroots 1\n" +
		"mcp_elicit: the requested schema is not a JSON object\nelicit 1\n" +
		"mcp_ask_all: the requests are not a non-empty JSON object {KEY: {\"method\": …, \"params\": …}}\nall 1\n"
	if string(o.Output) != want {
		t.Fatalf("nil Ask: %q\nwant %q", o.Output, want)
	}
	declined := func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error) {
		return nil, errors.New("the client did not declare the roots capability")
	}
	o = s.Call(context.Background(), Request{ID: "2", Tool: "fail", Args: []byte(`{}`), Snapshot: sn, Ask: declined})
	if !strings.HasPrefix(string(o.Output), "mcp_roots: the client did not declare the roots capability\nroots 1\n") {
		t.Fatalf("failing Ask: %q", o.Output)
	}
}

// An elicitation the user declines: mcp_elicit prints the answer but
// returns 1 and says why; mcp_ask with the same request returns 0.
func TestAskElicitDeclined(t *testing.T) {
	s, sn, _ := newAskSupervisor(t, `
tool_del() {
    local a
    if a=$(mcp_elicit "Delete?" '{"type":"object"}' 2>"$MCP_CALL_TMPDIR/err"); then echo "deleting"; else echo "kept ($?): $a / $(<"$MCP_CALL_TMPDIR/err")"; fi
    mcp_ask elicitation/create '{"message":"m","requestedSchema":{"type":"object"}}'; echo "ask $?"
}
`, 2*time.Second, -1)
	ask := func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error) {
		return []json.RawMessage{json.RawMessage("{\n \"action\": \"decline\"\n}")}, nil
	}
	o := s.Call(context.Background(), Request{ID: "1", Tool: "del", Args: []byte(`{}`), Snapshot: sn, Ask: ask})
	want := "kept (1): {\"action\":\"decline\"} / mcp_elicit: the user did not accept (action: decline)\n{\"action\":\"decline\"}\nask 0\n"
	if string(o.Output) != want {
		t.Fatalf("output %q\nwant   %q", o.Output, want)
	}
}

// The call is cancelled (or times out) while a helper waits for the
// client: Ask's context ends, the helper — in a child that outlives the
// TERM — returns non-zero saying why, and nothing of the group is left.
func TestAskEndsWithTheCall(t *testing.T) {
	for _, mode := range []string{"cancel", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			s, sn, dir := newAskSupervisor(t, `
tool_wait() {
    echo $$ >"$D/pgid"
    (
        trap '' TERM
        mcp_roots 2>"$D/err.tmp"
        echo "status $?" >>"$D/err.tmp"
        mv "$D/err.tmp" "$D/err"
    ) &
    wait
}
`, time.Minute, -1)
			asked := make(chan struct{})
			var askErr error
			ask := func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error) {
				close(asked)
				<-ctx.Done()
				askErr = context.Cause(ctx)
				return nil, ctx.Err()
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			req := Request{ID: "1", Tool: "wait", Args: []byte(`{}`), Snapshot: sn, Ask: ask}
			if mode == "timeout" {
				// The timeout is the event under test; it fires after
				// Ask was entered whatever the machine's speed, since
				// the test fails if the helper never asks.
				req.Timeout = 2 * time.Second
			}
			res := make(chan Outcome, 1)
			go func() { res <- s.Call(ctx, req) }()
			select {
			case <-asked:
			case <-deadline(t):
				t.Fatal("the helper never asked")
			}
			if mode == "cancel" {
				cancel(ErrCancelled)
			}
			var o Outcome
			select {
			case o = <-res:
			case <-deadline(t):
				t.Fatal("the call did not end")
			}
			if mode == "cancel" && o.End != Cancelled || mode == "timeout" && o.End != TimedOut {
				t.Fatalf("outcome %+v", o)
			}
			b, err := os.ReadFile(filepath.Join(dir, "err"))
			wantMsg := map[string]string{
				"cancel":  "mcp_roots: the call ended before the client answered: cancelled by the client\nstatus 1\n",
				"timeout": "mcp_roots: the call ended before the client answered: the call timed out\nstatus 1\n",
			}[mode]
			if err != nil || string(b) != wantMsg {
				t.Fatalf("the helper: %q %v; want %q", b, err, wantMsg)
			}
			if askErr == nil {
				t.Fatal("Ask's context had no cause")
			}
			pgid, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(dir, "pgid"))))
			groupGone(t, pgid)
		})
	}
}

// An Ask that returns ErrEndCall ends the call at once: its group is
// killed (even a member that ignores TERM), no cancel hook runs, and the
// outcome says Ended.
func TestAskEndCallKillsTheGroup(t *testing.T) {
	s, sn, dir := newAskSupervisor(t, `
tool_end() {
    echo $$ >"$D/pgid"
    trap '' TERM
    ( trap '' TERM; sleep 600 ) &
    mcp_elicit "sure?" '{"type":"object"}'
    echo "went on" >"$D/after"
}
tool_end_cancel() { echo hook >"$D/hook"; }
`, time.Minute, -1)
	ask := func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error) {
		return nil, fmt.Errorf("input required: %w", ErrEndCall)
	}
	o := s.Call(context.Background(), Request{ID: "1", Tool: "end", Args: []byte(`{}`), Snapshot: sn, Ask: ask})
	if o.End != EndedToAsk {
		t.Fatalf("outcome %+v", o)
	}
	for _, f := range []string{"after", "hook"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: the tool went on or its cancel hook ran", f)
		}
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(dir, "pgid"))))
	groupGone(t, pgid)
}

// groupGone waits until no process of group pgid is left, zombies
// included: SIGKILLed members finish dying, and are reaped, just after the
// call returns.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	if pgid <= 1 {
		t.Fatalf("no process group recorded (%d)", pgid)
	}
	waitFor(t, fmt.Sprintf("group %d to be gone", pgid), func() bool {
		alive, zombies := groupMembers(pgid)
		return alive+zombies == 0
	})
}

// A tool cannot turn ask records into unbounded requests to the client:
// at most MaxAsks wait at once (the rest fail at once with a message), and
// a record naming no reply FIFO of the call asks nothing.
func TestAskFloodIsBounded(t *testing.T) {
	const n = MaxAsks + 4
	s, sn, dir := newAskSupervisor(t, `
tool_flood() {
    printf 'ask\tevents.77\tone\tx/nobody\t{}\n' >>"$MCP_BASHD_EVENTS"
    local i=0
    while [ "$i" -lt `+strconv.Itoa(n)+` ]; do
        mcp_ask x/flood '{}' >/dev/null 2>"$D/err.$i" &
        i=$((i + 1))
    done
    wait
    echo done
}
`, 2*time.Second, -1)
	var mu sync.Mutex
	var methods []string
	release := make(chan struct{})
	ask := func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error) {
		mu.Lock()
		methods = append(methods, reqs[0].Method)
		mu.Unlock()
		select {
		case <-release:
			return []json.RawMessage{json.RawMessage(`{}`)}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	refused := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "err.*"))
		k := 0
		for _, f := range m {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), "questions waiting for the client") {
				k++
			}
		}
		return k
	}
	done := make(chan Outcome, 1)
	go func() {
		done <- s.Call(context.Background(), Request{ID: "1", Tool: "flood", Args: []byte(`{}`), Snapshot: sn, Ask: ask})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		asked := len(methods)
		mu.Unlock()
		if asked == MaxAsks && refused() == n-MaxAsks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d asks reached Ask, %d helpers refused; want %d and %d", asked, refused(), MaxAsks, n-MaxAsks)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	o := <-done
	if string(o.Output) != "done\n" {
		t.Fatalf("output %q", o.Output)
	}
	for _, m := range methods {
		if m != "x/flood" {
			t.Errorf("Ask was called for %s, a record without a reply FIFO", m)
		}
	}
	if len(methods) != MaxAsks {
		t.Errorf("%d asks reached Ask, want %d", len(methods), MaxAsks)
	}
}
