package tests

// Issue 14 with real clients: the official Go SDK (v1.8.0, in process)
// and the TypeScript SDK v1 and v2 and the Inspector CLIs (node), against
// examples/notes, over stdio and Streamable HTTP, in a session era and in
// 2026-07-28. Each lists and reads resources, expands the template, gets
// a prompt with arguments and one with an image, completes an argument and
// receives notifications/resources/updated after a tool's
// mcp_resource_updated. Every message the daemon sends is checked against
// the official schema of its revision.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// crLogo is what notes://logo holds.
var crLogo = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90\x77\x53\xde" +
	"\x00\x00\x00\x0cIDAT\x78\xda\x63\xf8\xff\x9f\x01\x00\x04\xff\x01\xff\x63\x80\xd1\x2b" +
	"\x00\x00\x00\x00IEND\xae\x42\x60\x82")

func crNotes(t *testing.T) (script string, env []string) {
	tmp := t.TempDir()
	return harness.RepoPath("examples/notes/server.sh"), []string{"NOTES_DIR=" + filepath.Join(tmp, "notes"), "TMPDIR=" + tmp, "MCP_LOG_FILE=" + filepath.Join(tmp, "daemon.log")}
}

type crGoCase struct {
	name      string
	http      bool
	pin, want string
}

func TestGoSDKResourcesPromptsCompletion(t *testing.T) {
	for _, c := range []crGoCase{
		{"stdio-2025-11-25", false, "2025-11-25", "2025-11-25"},
		{"stdio-2026-07-28", false, "", clModernVersion},
		{"http-2025-11-25", true, "2025-11-25", "2025-11-25"},
		{"http-2026-07-28", true, "", clModernVersion},
	} {
		t.Run(c.name, func(t *testing.T) { crGoSDK(t, c) })
	}
}

func crGoSDK(t *testing.T, c crGoCase) {
	script, env := crNotes(t)
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	var (
		transport mcp.Transport
		proxy     *cmProxy
		stderr    = &harness.Output{}
		wire      = &clWire{}
	)
	if c.http {
		daemon := harness.StartHTTP(t, harness.Options{Script: script, Env: env, Marked: mark})
		stderr = daemon.Stderr
		proxy = cmStartProxy(t, daemon.URL)
		transport = &mcp.StreamableClientTransport{Endpoint: proxy.url, HTTPClient: &http.Client{}}
	} else {
		cmd := harness.Command(t, harness.Options{Script: script, Env: env, Marked: mark})
		cmd.Stderr = stderr
		transport = &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: wire}
	}
	updated := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-bashd-e2e-go", Version: "0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	var opts *mcp.ClientSessionOptions
	if c.pin != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: c.pin}
	}
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	cs, err := client.Connect(ctx, transport, opts)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	var closeOnce sync.Once
	closeSession := func() { closeOnce.Do(func() { cs.Close() }) }
	t.Cleanup(closeSession)
	if got := cs.InitializeResult().ProtocolVersion; got != c.want {
		t.Fatalf("negotiated %q, want %q", got, c.want)
	}
	caps := cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions == nil {
		t.Errorf("capabilities %+v: want resources with subscribe, prompts and completions", caps)
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{"notes://index", "notes://logo"}; !reflect.DeepEqual(uris, want) {
		t.Errorf("resources = %q, want %q", uris, want)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "notes://note/{title}" {
		t.Errorf("resources/templates/list = %+v, %v", tmpl, err)
	}

	// Subscribed before the note exists; add_note's mcp_resource_updated
	// reaches the handler (2026: on the subscriptions/listen stream the SDK
	// opens for Subscribe).
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://note/groceries"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if c.want == clModernVersion {
		// The SDK opens the listen stream without waiting for it: its
		// acknowledgment says the subscription is in place.
		crWaitAck(t, c.http, proxy, wire)
	}
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"title": "groceries", "text": "- milk\n- eggs"}})
	if err != nil || call.IsError {
		t.Fatalf("add_note: %+v, %v", call, err)
	}
	select {
	case uri := <-updated:
		if uri != "notes://note/groceries" {
			t.Errorf("resources/updated for %q", uri)
		}
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatalf("no notifications/resources/updated after add_note\nstderr:\n%s", stderr.String())
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://note/groceries"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "- milk\n- eggs\n" || read.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("read the template's expansion: %+v, %v", read, err)
	}
	logo, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://logo"})
	if err != nil || len(logo.Contents) != 1 || !bytes.Equal(logo.Contents[0].Blob, crLogo) || logo.Contents[0].MIMEType != "image/png" {
		t.Errorf("read the logo: %+v, %v", logo, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://note/nope"}); err == nil || !strings.Contains(err.Error(), "Resource not found") {
		t.Errorf("read a note that does not exist: %v", err)
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 2 || prompts.Prompts[0].Name != "summarize" || len(prompts.Prompts[0].Arguments) != 2 {
		t.Errorf("prompts/list: %+v, %v", prompts, err)
	}
	sum, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize", Arguments: map[string]string{"title": "groceries", "style": "detailed"}})
	if err != nil || len(sum.Messages) != 2 {
		t.Fatalf("prompts/get summarize: %+v, %v", sum, err)
	}
	if r, ok := sum.Messages[0].Content.(*mcp.EmbeddedResource); !ok || r.Resource.URI != "notes://note/groceries" || r.Resource.Text != "- milk\n- eggs" {
		t.Errorf("summarize message 1: %#v", sum.Messages[0].Content)
	}
	if tx, ok := sum.Messages[1].Content.(*mcp.TextContent); !ok || tx.Text != "Summarize the note above; keep it detailed." || sum.Messages[1].Role != "user" {
		t.Errorf("summarize message 2: %s %#v", sum.Messages[1].Role, sum.Messages[1].Content)
	}
	img, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "describe_logo"})
	if err != nil || len(img.Messages) != 3 {
		t.Fatalf("prompts/get describe_logo: %+v, %v", img, err)
	}
	if im, ok := img.Messages[0].Content.(*mcp.ImageContent); !ok || !bytes.Equal(im.Data, crLogo) || im.MIMEType != "image/png" {
		t.Errorf("describe_logo message 1: %#v", img.Messages[0].Content)
	}
	if img.Messages[1].Role != "assistant" {
		t.Errorf("describe_logo message 2's role: %q", img.Messages[1].Role)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "summarize"},
		Argument: mcp.CompleteParamsArgument{Name: "title", Value: "gro"}})
	if err != nil || !reflect.DeepEqual(comp.Completion.Values, []string{"groceries"}) {
		t.Errorf("completion/complete: %+v, %v", comp, err)
	}
	tc, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "notes://note/{title}"},
		Argument: mcp.CompleteParamsArgument{Name: "title", Value: "g"}})
	if err != nil || !reflect.DeepEqual(tc.Completion.Values, []string{"groceries"}) {
		t.Errorf("completion/complete for the template: %+v, %v", tc, err)
	}
	closeSession()

	if c.http {
		revs := cmCheckExchanges(t, proxy)
		crCheckGETStreams(t, proxy, c.want)
		t.Logf("revisions over HTTP: %q", revs)
	} else {
		clCheckWire(t, c.want, wire.all())
	}
}

// crWaitAck waits for the acknowledgment of the listen stream the SDK
// opened.
func crWaitAck(t *testing.T, overHTTP bool, proxy *cmProxy, wire *clWire) {
	t.Helper()
	proctest.WaitUntil(t, harness.Deadline(t), "the acknowledgment of the listen stream", func() (bool, string) {
		var msgs []clMsg
		if overHTTP {
			for _, ex := range proxy.exchanges() {
				_, ms := ex.messages()
				for _, m := range ms {
					msgs = append(msgs, clMsg{In: true, Line: m})
				}
			}
		} else {
			msgs = wire.all()
		}
		for _, m := range msgs {
			if m.In && bytes.Contains(m.Line, []byte("notifications/subscriptions/acknowledged")) {
				return true, ""
			}
		}
		return false, "not on the wire yet"
	})
}

// crCheckGETStreams checks the events of a legacy session's GET streams:
// notifications only, each valid for the session's revision.
func crCheckGETStreams(t *testing.T, p *cmProxy, revision string) {
	t.Helper()
	for _, ex := range p.exchanges() {
		if ex.Method != http.MethodGet {
			continue
		}
		_, msgs := ex.messages()
		for _, m := range msgs {
			if err := mcpschema.Check(revision, "", m); err != nil {
				t.Errorf("GET stream message not valid for %s: %v\n%s", revision, err, m)
			}
			var f clFields
			if json.Unmarshal(m, &f) != nil || f.Method == "" {
				t.Errorf("GET stream carried a message that is not a notification: %s", m)
			}
		}
	}
}

// ---- TypeScript SDK v1 and v2 ----

// crTSResults are the outcomes resources_client.mjs reports.
type crTSResults struct {
	Resources struct {
		Result struct{ Resources []struct{ URI string } }
	}
	Templates struct {
		Result struct {
			ResourceTemplates []struct{ URITemplate string } `json:"resourceTemplates"`
		}
	}
	Subscribe, Add crTSAny
	Note, Logo     struct {
		Result struct {
			Contents []struct{ URI, MimeType, Text, Blob string }
		}
		Error *struct{ Message string }
	}
	Missing struct {
		Error *struct {
			Code    json.RawMessage
			Message string
		}
	}
	Prompts struct {
		Result struct{ Prompts []struct{ Name string } }
	}
	Summarize struct {
		Result struct{ Messages []crTSMessage }
		Error  *struct{ Message string }
	}
	LogoPrompt struct {
		Result struct{ Messages []crTSMessage }
		Error  *struct{ Message string }
	} `json:"logoPrompt"`
	Complete, CompleteTemplate struct {
		Result struct {
			Completion struct{ Values []string }
		}
		Error *struct{ Message string }
	}
}

type crTSAny struct {
	Error *struct{ Message string }
}

type crTSMessage struct {
	Role    string
	Content struct {
		Type, Text, Data, MimeType string
		Resource                   struct{ URI, Text string }
	}
}

func TestTypeScriptSDKResourcesPromptsCompletion(t *testing.T) {
	cmNodeModules(t)
	for _, c := range cmTSCases {
		for _, overHTTP := range []bool{false, true} {
			name := c.name + "/stdio"
			if overHTTP {
				name = c.name + "/http"
			}
			t.Run(name, func(t *testing.T) { crTS(t, c, overHTTP) })
		}
	}
}

func crTS(t *testing.T, c cmTSCase, overHTTP bool) {
	script, env := crNotes(t)
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	args := []string{harness.RepoPath("tests/clients/resources_client.mjs"), "--sdk", c.sdk, "--mode", c.mode}
	var proxy *cmProxy
	if overHTTP {
		daemon := harness.StartHTTP(t, harness.Options{Script: script, Env: env, Marked: mark})
		proxy = cmStartProxy(t, daemon.URL)
		args = append(args, "--url", proxy.url)
	} else {
		for _, kv := range append([]string{harness.MarkKey + "=" + mark}, env...) {
			args = append(args, "--env", kv)
		}
		args = append(args, "--", harness.Binary, script)
	}
	n := cmStartNode(t, cmNode22(), "", nil, args...)
	var connected struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	n.event("connected", &connected)
	if connected.ProtocolVersion != c.want {
		t.Errorf("negotiated %q, want %q", connected.ProtocolVersion, c.want)
	}
	var updated struct {
		Params *struct{ URI string }
	}
	n.event("updated", &updated)
	if updated.Params == nil || updated.Params.URI != "notes://note/groceries" {
		t.Errorf("notifications/resources/updated after add_note: %+v", updated.Params)
	}
	var r crTSResults
	n.event("results", &r)
	if r.Subscribe.Error != nil || r.Add.Error != nil {
		t.Errorf("subscribe: %+v; add_note: %+v", r.Subscribe.Error, r.Add.Error)
	}
	var uris []string
	for _, x := range r.Resources.Result.Resources {
		uris = append(uris, x.URI)
	}
	if want := []string{"notes://index", "notes://logo"}; !reflect.DeepEqual(uris, want) {
		t.Errorf("resources = %q", uris)
	}
	if len(r.Templates.Result.ResourceTemplates) != 1 || r.Templates.Result.ResourceTemplates[0].URITemplate != "notes://note/{title}" {
		t.Errorf("templates = %+v", r.Templates)
	}
	if ct := r.Note.Result.Contents; len(ct) != 1 || ct[0].Text != "- milk\n- eggs\n" {
		t.Errorf("the expanded template: %+v %+v", r.Note.Result, r.Note.Error)
	}
	if ct := r.Logo.Result.Contents; len(ct) != 1 || ct[0].Blob != base64.StdEncoding.EncodeToString(crLogo) || ct[0].MimeType != "image/png" {
		t.Errorf("the logo: %+v %+v", r.Logo.Result, r.Logo.Error)
	}
	if r.Missing.Error == nil || !strings.Contains(r.Missing.Error.Message, "Resource not found") {
		t.Errorf("a note that does not exist: %+v", r.Missing.Error)
	}
	if len(r.Prompts.Result.Prompts) != 2 {
		t.Errorf("prompts = %+v", r.Prompts)
	}
	if m := r.Summarize.Result.Messages; len(m) != 2 || m[0].Content.Type != "resource" || m[0].Content.Resource.Text != "- milk\n- eggs" ||
		m[1].Content.Text != "Summarize the note above; keep it detailed." {
		t.Errorf("summarize: %+v %+v", m, r.Summarize.Error)
	}
	if m := r.LogoPrompt.Result.Messages; len(m) != 3 || m[0].Content.Type != "image" || m[0].Content.Data != base64.StdEncoding.EncodeToString(crLogo) || m[1].Role != "assistant" {
		t.Errorf("describe_logo: %+v %+v", m, r.LogoPrompt.Error)
	}
	if v := r.Complete.Result.Completion.Values; !reflect.DeepEqual(v, []string{"groceries"}) {
		t.Errorf("completion: %q %+v", v, r.Complete.Error)
	}
	if v := r.CompleteTemplate.Result.Completion.Values; !reflect.DeepEqual(v, []string{"groceries"}) {
		t.Errorf("template completion: %q %+v", v, r.CompleteTemplate.Error)
	}
	var done struct {
		ErrorsBeforeClose []string
		Exit              *clTSExit
		Wire              clTSWire
	}
	n.event("done", &done)
	if len(done.ErrorsBeforeClose) != 0 {
		t.Errorf("the SDK reported errors: %q", done.ErrorsBeforeClose)
	}
	if overHTTP {
		t.Logf("revisions over HTTP: %q", cmCheckExchanges(t, proxy))
		crCheckGETStreams(t, proxy, c.want)
		return
	}
	if done.Exit == nil || !done.Exit.clean() {
		t.Errorf("daemon after the client closed stdin: %v", done.Exit)
	}
	clCheckWire(t, c.want, done.Wire.msgs())
}

// ---- Inspector CLIs ----

// The Inspector CLIs list and read resources (the template's expansion
// and the blob), list the templates and prompts, and get a prompt with
// arguments, over stdio and HTTP, in each era they speak.
func TestInspectorCLIResourcesPromptsCompletion(t *testing.T) {
	cmNodeModules(t)
	for _, in := range cmInspectors() {
		for _, overHTTP := range []bool{false, true} {
			name := in.name + "/stdio"
			if overHTTP {
				name = in.name + "/http"
			}
			t.Run(name, func(t *testing.T) { crInspector(t, in, overHTTP) })
		}
	}
}

func crInspector(t *testing.T, in cmInspector, overHTTP bool) {
	script, env := crNotes(t)
	notes := strings.TrimPrefix(env[0], "NOTES_DIR=")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "groceries.md"), []byte("- milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	nodeEnv := []string{"HOME=" + t.TempDir()}
	var serverArgs []string
	var daemon *harness.HTTPDaemon
	if overHTTP {
		daemon = harness.StartHTTP(t, harness.Options{Script: script, Env: env, Marked: mark})
	} else if in.envFlag {
		for _, kv := range append([]string{harness.MarkKey + "=" + mark}, env...) {
			serverArgs = append(serverArgs, "-e", kv)
		}
	} else {
		nodeEnv = append(append(nodeEnv, harness.MarkKey+"="+mark), env...)
	}
	want := "2025-11-25"
	if in.era == "auto" || in.era == "modern" {
		want = clModernVersion
	}
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
			target = append(append([]string{}, serverArgs...), relay, harness.Binary, script)
		}
		args := append(append(append(append([]string{}, in.args...), target...), "--method", method), extra...)
		n := cmStartNode(t, in.node, in.dir, nodeEnv, args...)
		var out []byte
		for line := range cmLines(t, n) {
			out = append(out, line...)
		}
		if !n.cmd.ProcessState.Success() {
			t.Fatalf("inspector %s: %v\nstdout:\n%s\nstderr:\n%s", method, n.cmd.ProcessState, out, n.stderr.String())
		}
		if in.envFlag {
			var r struct{ Result json.RawMessage }
			if err := json.Unmarshal(out, &r); err != nil || r.Result == nil {
				t.Fatalf("inspector %s printed %q", method, out)
			}
			out = r.Result
		}
		got := ""
		if overHTTP {
			got = cmProxyVersion(t, proxy)
			cmCheckExchanges(t, proxy)
		} else {
			got = cmRelayWire(t, wireDir)
		}
		if got != want {
			t.Errorf("%s: negotiated %q, want %q", method, got, want)
		}
		return out
	}
	var list struct{ Resources []struct{ URI string } }
	if b := run("resources/list"); json.Unmarshal(b, &list) != nil || len(list.Resources) != 2 || list.Resources[1].URI != "notes://logo" {
		t.Errorf("resources/list printed %s", b)
	}
	var tmpl struct {
		ResourceTemplates []struct{ URITemplate string } `json:"resourceTemplates"`
	}
	if b := run("resources/templates/list"); json.Unmarshal(b, &tmpl) != nil || len(tmpl.ResourceTemplates) != 1 {
		t.Errorf("resources/templates/list printed %s", b)
	}
	var read struct {
		Contents []struct{ URI, Text, Blob string }
	}
	if b := run("resources/read", "--uri", "notes://note/groceries"); json.Unmarshal(b, &read) != nil || len(read.Contents) != 1 || read.Contents[0].Text != "- milk\n" {
		t.Errorf("resources/read of the template printed %s", b)
	}
	read.Contents = nil
	if b := run("resources/read", "--uri", "notes://logo"); json.Unmarshal(b, &read) != nil || len(read.Contents) != 1 || read.Contents[0].Blob != base64.StdEncoding.EncodeToString(crLogo) {
		t.Errorf("resources/read of the logo printed %s", b)
	}
	var prompt struct{ Messages []crTSMessage }
	if b := run("prompts/get", "--prompt-name", "summarize", "--prompt-args", "title=groceries"); json.Unmarshal(b, &prompt) != nil ||
		len(prompt.Messages) != 2 || prompt.Messages[1].Content.Text != "Summarize the note above; keep it brief." {
		t.Errorf("prompts/get printed %s", b)
	}
	if overHTTP {
		daemon.StopClean(t, mark)
	} else {
		harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
	}
}
