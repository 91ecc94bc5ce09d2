package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// The result texts are the bash SDK's (users' own tests compare them);
// mcp-bashd's own outcomes (timeouts, hooks, setup) say what happened.
func TestOutcomeText(t *testing.T) {
	cases := []struct {
		name  string
		o     supervisor.Outcome
		text  string
		isErr bool
	}{
		{"ok, newlines cut", supervisor.Outcome{Output: []byte("hi\n\n")}, "hi", false},
		{"failed with output", supervisor.Outcome{Output: []byte("/\nbye\n"), ExitCode: 2}, "Error executing where: /\nbye", true},
		{"killed", supervisor.Outcome{Signal: syscall.SIGKILL}, "Error executing where: ", true},
		{"hook refused", supervisor.Outcome{Phase: "refused", HookStatus: 3, HookOutput: []byte("no way\n")}, "Error executing where: no way", true},
		{"hook exited", supervisor.Outcome{Phase: "hook", ExitCode: 1}, "mcp_before_tool_call ended the call instead of returning; tool where did not run.", true},
		{"timed out", supervisor.Outcome{End: supervisor.TimedOut, Timeout: time.Second, Output: []byte("so far\n")}, "Tool where timed out after 1s and was stopped. Output so far:\nso far", true},
		{"truncated", supervisor.Outcome{Output: []byte("abc"), Truncated: 7}, "abc\n[mcp-bashd: output truncated; 7 more bytes not shown]", false},
		{"no call directory", supervisor.Outcome{End: supervisor.NotRun, Err: supervisor.ErrCallDir}, "Cannot run where: its call directory could not be created.", true},
		{"output unreadable", supervisor.Outcome{OutputErr: errors.New("out: too many open files")}, "Tool where ran, but its output could not be read back: out: too many open files.", true},
		{"tools-dir stderr", supervisor.Outcome{Output: []byte("out"), Stderr: []byte("err\n"), ExitCode: 1}, "Error executing where: out\nerr", true},
	}
	for _, c := range cases {
		parts, isErr := outcomeText("where", c.o, false)
		if text := strings.Join(parts, ""); text != c.text || isErr != c.isErr {
			t.Errorf("%s: %q isError=%v, want %q %v", c.name, text, isErr, c.text, c.isErr)
		}
	}
}

// A server in the 2026 SDK's dialect: a failing tool's text is its output
// as it is, or that SDK's sentence (128+N for a signal, as $? read it);
// mcp-bashd's own outcomes keep their texts.
func TestOutcomeTextSDK2026(t *testing.T) {
	cases := []struct {
		name string
		o    supervisor.Outcome
		text string
	}{
		{"failed with output", supervisor.Outcome{Output: []byte("/\nbye\n\n"), ExitCode: 2}, "/\nbye"},
		{"failed with blanks", supervisor.Outcome{Output: []byte("  "), ExitCode: 1}, "  "},
		{"failed silently", supervisor.Outcome{Output: []byte("\n"), ExitCode: 4}, "Tool 'where' failed with exit status 4"},
		{"killed", supervisor.Outcome{Signal: syscall.SIGKILL, ExitCode: 137}, "Tool 'where' failed with exit status 137"},
		{"truncated", supervisor.Outcome{Output: []byte("abc"), ExitCode: 1, Truncated: 7}, "abc\n[mcp-bashd: output truncated; 7 more bytes not shown]"},
		{"timed out", supervisor.Outcome{End: supervisor.TimedOut, Timeout: time.Second}, "Tool where timed out after 1s and was stopped."},
	}
	for _, c := range cases {
		parts, isErr := outcomeText("where", c.o, true)
		if text := strings.Join(parts, ""); text != c.text || !isErr {
			t.Errorf("%s: %q isError=%v, want %q true", c.name, text, isErr, c.text)
		}
	}
	s := &Server{log: zap.NewNop()}
	ok := s.toolResult(&catalog.Tool{Name: "t"}, supervisor.Outcome{Output: []byte("fine")}, true)
	ok.modern(json.RawMessage(`{"name":"x"}`))
	if got := string(ok.JSON()); got != `{"content":[{"type":"text","text":"fine"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"}}}` {
		t.Errorf("success: %s", got)
	}
}

// The output cap bounds the text once escaped: 100 NUL bytes (six bytes
// each in JSON) under a cap of 60 keep 10, and the marker counts the rest
// with what the cap already cut from the file.
func TestOutputCutWhereEscapedTextReachesTheCap(t *testing.T) {
	s := &Server{log: zap.NewNop()}
	o := supervisor.Outcome{Output: make([]byte, 100), Truncated: 7, OutputCap: 60}
	var got struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(s.toolResult(&catalog.Tool{Name: "t"}, o, false).JSON(), &got); err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("\x00", 10) + "\n[mcp-bashd: output truncated; 97 more bytes not shown]"
	if len(got.Content) != 1 || got.Content[0].Text != want {
		t.Errorf("got %+v, want %q", got, want)
	}
}

// A result is rendered only into its line: the length it announces is the
// length it renders, and the line is allocated once, at its final size.
func TestResultRendersItsLength(t *testing.T) {
	s := &Server{log: zap.NewNop()}
	tool := &catalog.Tool{Name: "t"}
	for name, o := range map[string]supervisor.Outcome{
		"text":  {Output: []byte("a\x00\"é\xff\n")},
		"error": {Output: []byte("bad"), ExitCode: 1},
		"rich": {Output: []byte("out"), Items: []supervisor.Item{
			{Kind: "text", Text: "t\x01"}, {Kind: "image", MIME: "image/png", Data: []byte{0, 1, 2, 3}},
			{Kind: "resource", URI: "u:x", MIME: "text/plain", Text: "r"}}},
		"structured": {Structured: []byte(`{ "a" : [1, "x"] }`)},
	} {
		res := s.toolResult(tool, o, false)
		if res.doc == nil {
			t.Fatalf("%s: not rendered at the edge", name)
		}
		body := res.JSON()
		if len(body) != res.doc.Len() || !json.Valid(body) {
			t.Errorf("%s: announced %d bytes, rendered %d: %s", name, res.doc.Len(), len(body), body)
		}
		line := res.response(json.RawMessage("1")).Line()
		if cap(line) != len(line) || !bytes.Contains(line, body) {
			t.Errorf("%s: line of %d bytes in a buffer of %d", name, len(line), cap(line))
		}
		res.modern(json.RawMessage(`{"name":"x"}`))
		if modern := res.JSON(); len(modern) != res.doc.Len() || !json.Valid(modern) || !bytes.HasSuffix(modern, []byte(`,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"}}}`)) {
			t.Errorf("%s: modern result %s", name, modern)
		}
	}
}
