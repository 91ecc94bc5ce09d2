// The client matrix, node-driven clients: TypeScript SDK v1 and v2, and the
// Inspector CLIs, over stdio and HTTP.

package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// ---- TypeScript SDK v1 and v2 ----

type cmTSCase struct {
	name, sdk, mode string
	want, era       string // negotiated version; v2's era ("" for v1)
}

var cmTSCases = []cmTSCase{
	{"v1", "v1", "legacy", "2025-11-25", ""},
	{"v2-auto", "v2", "auto", clModernVersion, "modern"},
	{"v2-pin-2026", "v2", "pin:" + clModernVersion, clModernVersion, "modern"},
}

func TestTypeScriptSDKMatrixStdio(t *testing.T) {
	cmNodeModules(t)
	for _, c := range cmTSCases {
		t.Run(c.name, func(t *testing.T) { cmTSMatrix(t, false, c) })
	}
}

func TestTypeScriptSDKMatrixHTTP(t *testing.T) {
	cmNodeModules(t)
	for _, c := range cmTSCases {
		t.Run(c.name, func(t *testing.T) { cmTSMatrix(t, true, c) })
	}
}

func cmStr(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

type cmTSProgress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

func cmTSMatrix(t *testing.T, overHTTP bool, c cmTSCase) {
	srv := cmNewServer(t)
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	args := []string{harness.RepoPath("tests/clients/matrix_client.mjs"), "--sdk", c.sdk, "--mode", c.mode}
	var (
		daemon *harness.HTTPDaemon
		proxy  *cmProxy
	)
	if overHTTP {
		daemon = harness.StartHTTP(t, harness.Options{Script: srv.script, Env: srv.env, Marked: mark})
		proxy = cmStartProxy(t, daemon.URL)
		args = append(args, "--url", proxy.url)
	} else {
		for _, kv := range append([]string{harness.MarkKey + "=" + mark}, srv.env...) {
			args = append(args, "--env", kv)
		}
		args = append(args, "--", harness.Binary, srv.script)
	}
	n := cmStartNode(t, cmNode22(), "", nil, args...)
	stderr := func() string {
		s := "node stderr:\n" + n.stderr.String()
		if daemon != nil {
			s += "\ndaemon stderr:\n" + daemon.Stderr.String()
		}
		return s
	}

	var connected struct {
		ServerPid       int     `json:"serverPid"`
		SessionID       *string `json:"sessionId"`
		ProtocolVersion string  `json:"protocolVersion"`
		Era             *string `json:"era"`
	}
	n.event("connected", &connected)
	if connected.ProtocolVersion != c.want {
		t.Errorf("negotiated %q, want %q", connected.ProtocolVersion, c.want)
	}
	if c.era != "" && (connected.Era == nil || *connected.Era != c.era) {
		t.Errorf("era %v, want %q", connected.Era, c.era)
	}
	t.Logf("negotiated %s (era %s, session %s)", connected.ProtocolVersion, cmStr(connected.Era), cmStr(connected.SessionID))
	pid := connected.ServerPid
	if overHTTP {
		pid = daemon.Cmd.Process.Pid
	}

	var listed struct {
		Tools struct {
			Result struct{ Tools []struct{ Name string } }
			Error  any
		}
		Echo clTSResult
	}
	n.event("listed", &listed)
	var names []string
	for _, tool := range listed.Tools.Result.Tools {
		names = append(names, tool.Name)
	}
	if !reflect.DeepEqual(names, cmToolNames) {
		t.Errorf("tools/list names = %q (error %v), want %q", names, listed.Tools.Error, cmToolNames)
	}
	if text, isErr := listed.Echo.text(t, "echo"); text != `{"text":"hi"}` || isErr {
		t.Errorf("echo = %q isError=%v", text, isErr)
	}

	for i := 1; i <= 3; i++ {
		var p cmTSProgress
		n.event("progress", &p)
		if want := (cmTSProgress{float64(i), 3, fmt.Sprintf("step %d", i)}); p != want {
			t.Errorf("progress #%d = %+v, want %+v", i, p, want)
		}
	}
	srv.gate.release(t)
	var progressed struct{ Outcome clTSResult }
	n.event("progressed", &progressed)
	if text, isErr := progressed.Outcome.text(t, "progress"); text != "progress done" || isErr {
		t.Errorf("progress call = %q isError=%v", text, isErr)
	}

	var calling struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	n.event("calling", &calling)
	_, pgid, _ := clReady(t, srv.ready, mark, pid)
	n.tell("abort")
	var aborted struct {
		Outcome struct {
			Error *struct {
				Name    string
				Code    json.RawMessage // v1: a JSON-RPC code; v2: an SdkErrorCode string
				Message string
			}
		}
		Cancels []struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
	}
	n.event("aborted", &aborted)
	if aborted.Outcome.Error == nil || !strings.Contains(strings.ToLower(aborted.Outcome.Error.Message), "abort") {
		t.Errorf("the aborted call did not reject with the abort error: %+v", aborted.Outcome)
	}
	// On a 2026-07-28 HTTP connection v2 cancels by closing the request's
	// stream; everywhere else the SDK sends notifications/cancelled.
	wantCancels := 1
	if overHTTP && c.era == "modern" {
		wantCancels = 0
	}
	if len(aborted.Cancels) != wantCancels || (wantCancels == 1 && !bytes.Equal(aborted.Cancels[0].Params.RequestID, calling.RequestID)) {
		t.Errorf("notifications/cancelled sent: %+v, want %d for request %s", aborted.Cancels, wantCancels, calling.RequestID)
	}
	clWaitGone(t, mark, pid, pgid)
	if overHTTP {
		status, _, _, ended := proxy.call(t, "hang").snapshot()
		t.Logf("the cancelled request's HTTP response once its processes are gone: status %d, ended %q", status, ended)
	}

	n.tell("continue")
	var done struct {
		FollowUp          clTSResult
		ErrorsBeforeClose []string
		Errors            []string
		Exit              *clTSExit
		Wire              clTSWire
	}
	n.event("done", &done)
	if text, isErr := done.FollowUp.text(t, "hello after the abort"); text != "hello" || isErr {
		t.Errorf("call after the abort = %q isError=%v", text, isErr)
	}
	if len(done.ErrorsBeforeClose) != 0 {
		t.Errorf("the SDK reported errors (a response for the aborted id shows up here): %q", done.ErrorsBeforeClose)
	}
	msgs := done.Wire.msgs()
	if got := clResponsesTo(t, msgs, calling.RequestID); len(got) != 0 {
		t.Errorf("the daemon answered the aborted request %s: %q", calling.RequestID, got)
	}
	if !overHTTP {
		if done.Exit == nil || !done.Exit.clean() {
			t.Errorf("daemon after the client closed stdin: %v, want exit 0\n%s", done.Exit, stderr())
		}
		clCheckWire(t, c.want, msgs)
		harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
		return
	}
	if len(done.Errors) != 0 {
		t.Logf("errors the SDK reported while closing: %q", done.Errors)
	}
	t.Logf("revisions over HTTP: %q", cmCheckExchanges(t, proxy))
	t.Logf("the cancelled request's HTTP response ended: %s", cmCheckHTTPCalls(t, proxy))
	cmCheckSessions(t, proxy, c.era == "modern")
	daemon.StopClean(t, mark)
}

// ---- Inspector CLI ----

// cmRelay writes a stdio relay: `relay COMMAND ARGS...` runs the command
// with copies of what goes in and out in dir/in and dir/out, so the test
// sees the wire of a client it does not drive itself.
func cmRelay(t *testing.T) (relay, dir string) {
	t.Helper()
	dir = t.TempDir()
	relay = filepath.Join(dir, "relay.sh")
	body := fmt.Sprintf("#!/usr/bin/env bash\ntee -a %q | \"$@\" | tee -a %q\n", filepath.Join(dir, "in"), filepath.Join(dir, "out"))
	if err := os.WriteFile(relay, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return relay, dir
}

// cmRelayMsgs reads the relay's copies.
func cmRelayMsgs(t *testing.T, dir string) []clMsg {
	t.Helper()
	var msgs []clMsg
	for _, f := range []string{"in", "out"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("relay wire: %v", err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			if len(line) > 0 {
				msgs = append(msgs, clMsg{In: f == "out", Line: line})
			}
		}
	}
	return msgs
}

// cmRelayWire checks every server line the relay copied against the
// revision the session negotiated, and returns that revision.
func cmRelayWire(t *testing.T, dir string) string {
	t.Helper()
	msgs := cmRelayMsgs(t, dir)
	rev := clModernVersion
	for _, m := range msgs {
		var r struct {
			Result struct{ ProtocolVersion string } `json:"result"`
		}
		if json.Unmarshal(m.Line, &r); m.In && r.Result.ProtocolVersion != "" {
			rev = r.Result.ProtocolVersion
		}
	}
	clCheckWire(t, rev, msgs)
	return rev
}

// cmProxyVersion is the version a client negotiated through the proxy:
// initialize's (an auto-mode fallback initializes after a failed probe),
// else that of a server/discover that succeeded.
func cmProxyVersion(t *testing.T, p *cmProxy) string {
	t.Helper()
	version := ""
	for _, ex := range p.exchanges() {
		_, msgs := ex.messages()
		var r struct {
			Result *struct{ ProtocolVersion string } `json:"result"`
		}
		if len(msgs) == 0 || json.Unmarshal(msgs[len(msgs)-1], &r) != nil || r.Result == nil {
			continue
		}
		switch ex.request().Method {
		case "initialize":
			return r.Result.ProtocolVersion
		case "server/discover":
			version = ex.revision(msgs)
		}
	}
	if version == "" {
		t.Fatal("no initialize or server/discover succeeded through the proxy")
	}
	return version
}

type cmInspector struct {
	name    string
	node    string
	dir     string   // working directory
	args    []string // before the target
	envFlag bool     // takes the server's variables as -e KEY=VALUE
	era     string
}

func cmInspectors() []cmInspector {
	v1 := harness.RepoPath("tests/clients/node_modules/@modelcontextprotocol/inspector-cli/build")
	v2 := harness.RepoPath("tests/clients/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	out := []cmInspector{{name: "1.0.3", node: cmNode22(), dir: v1, args: []string{"index.js"}}}
	for _, era := range []string{"legacy", "auto", "modern"} {
		out = append(out, cmInspector{name: "2.12.0-" + era, node: cmNode22(), args: []string{v2, "--cli", "--protocol-era", era, "--format", "json"}, envFlag: true, era: era})
	}
	return out
}

// The Inspector CLIs list the tools and call one, over stdio and HTTP.
// They have no progress display and no way to cancel a call, so those two
// columns of the matrix are not theirs.
func TestInspectorCLIMatrix(t *testing.T) {
	cmNodeModules(t)
	for _, in := range cmInspectors() {
		for _, overHTTP := range []bool{false, true} {
			name := in.name + "/stdio"
			if overHTTP {
				name = in.name + "/http"
			}
			t.Run(name, func(t *testing.T) { cmInspectorRun(t, in, overHTTP) })
		}
	}
}

func cmInspectorRun(t *testing.T, in cmInspector, overHTTP bool) {
	srv := cmNewServer(t)
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	env := []string{"HOME=" + t.TempDir()} // Inspector 2 keeps a catalog and storage under $HOME
	var serverArgs []string
	var daemon *harness.HTTPDaemon
	if overHTTP {
		daemon = harness.StartHTTP(t, harness.Options{Script: srv.script, Env: srv.env, Marked: mark})
	} else {
		serverEnv := append([]string{harness.MarkKey + "=" + mark}, srv.env...)
		if in.envFlag {
			for _, kv := range serverEnv {
				serverArgs = append(serverArgs, "-e", kv)
			}
		} else {
			env = append(env, serverEnv...) // 1.0.3 passes its whole environment on
		}
	}
	want := "2025-11-25"
	if in.era == "auto" || in.era == "modern" {
		want = clModernVersion
	}

	// run is one CLI invocation (one session), with its own proxy or
	// relay so its wire can be checked alone; it returns the result the
	// CLI printed.
	run := func(method string, extra ...string) []byte {
		t.Helper()
		var target []string
		var proxy *cmProxy
		var wireDir string
		if overHTTP {
			proxy = cmStartProxy(t, daemon.URL)
			target = []string{proxy.url}
		} else {
			var relay string
			relay, wireDir = cmRelay(t)
			target = append(slices.Clone(serverArgs), relay, harness.Binary, srv.script)
		}
		args := append(append(append(slices.Clone(in.args), target...), "--method", method), extra...)
		n := cmStartNode(t, in.node, in.dir, env, args...)
		var out []byte
		for line := range cmLines(t, n) {
			out = append(out, line...)
		}
		if !n.cmd.ProcessState.Success() {
			t.Fatalf("inspector %s: %v\nstdout:\n%s\nstderr:\n%s", method, n.cmd.ProcessState, out, n.stderr.String())
		}
		if in.envFlag { // --format json: {"result": ...}
			var r struct{ Result json.RawMessage }
			if err := json.Unmarshal(out, &r); err != nil || r.Result == nil {
				t.Fatalf("inspector %s printed %q", method, out)
			}
			out = r.Result
		}

		var got string
		var msgs []clMsg
		if overHTTP {
			got, msgs = cmProxyVersion(t, proxy), proxy.wire()
			t.Logf("%s: revisions over HTTP: %q", method, cmCheckExchanges(t, proxy))
			cmCheckSessions(t, proxy, want == clModernVersion)
		} else {
			got, msgs = cmRelayWire(t, wireDir), cmRelayMsgs(t, wireDir)
		}
		if got != want {
			t.Errorf("%s: negotiated %q, want %q", method, got, want)
		}
		t.Logf("%s: negotiated %s", method, got)
		// Both CLIs set the log level of a server that declares logging:
		// logging/setLevel in a legacy session, _meta logLevel in 2026.
		setLevel := 0
		for _, m := range msgs {
			f := m.fields(t)
			if m.In || f.ID == nil || f.Method != "logging/setLevel" {
				continue
			}
			setLevel++
			if got := clResponsesTo(t, msgs, f.ID); len(got) != 1 || !strings.Contains(got[0], `"result":{}`) {
				t.Errorf("logging/setLevel %s answered %q, want one empty result", m.Line, got)
			}
		}
		if want != clModernVersion && setLevel == 0 {
			t.Errorf("%s: the inspector sent no logging/setLevel to a server that declares logging", method)
		}
		return out
	}

	var list struct{ Tools []struct{ Name string } }
	if b := run("tools/list"); json.Unmarshal(b, &list) != nil {
		t.Fatalf("tools/list printed %q", b)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !reflect.DeepEqual(names, cmToolNames) {
		t.Errorf("tools/list names = %q, want %q", names, cmToolNames)
	}
	var call struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	b := run("tools/call", "--tool-name", "echo", "--tool-arg", "text=hi")
	if json.Unmarshal(b, &call) != nil || len(call.Content) != 1 || call.Content[0].Text != `{"text":"hi"}` || call.IsError {
		t.Errorf("tools/call echo printed %s", b)
	}
	if overHTTP {
		daemon.StopClean(t, mark)
	} else {
		harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
	}
}
