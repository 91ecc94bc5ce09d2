package tests

// Issue 24 item 10: a server with a bearer token (--auth-token-file) is
// not an OAuth server. It answers a request without the token 403 with no
// WWW-Authenticate challenge (MCP clients take a 401 as "start OAuth") and
// the OAuth discovery paths 404, so the Inspector without a token says
// the token is missing instead of "Interactive OAuth requires a TTY".

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

func startTokenServer(t *testing.T) (url, token string) {
	t.Helper()
	srv := cmNewServer(t)
	token = "s3cret-token"
	tf := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tf, []byte(token+"\n"), 0o600)
	d := harness.StartHTTP(t, harness.Options{Script: srv.script, Env: srv.env, Mark: "tok", Flags: []string{"--auth-token-file", tf}})
	return d.URL, token
}

func TestTokenAuthIsNotOAuth(t *testing.T) {
	url, token := startTokenServer(t)
	post := func(auth string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(harness.InitLine))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, auth := range []string{"", "Bearer wrong"} {
		resp := post(auth)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("WWW-Authenticate") != "" ||
			!strings.Contains(string(body), "Authorization: Bearer TOKEN") {
			t.Errorf("Authorization %q: %s WWW-Authenticate %q body %s", auth, resp.Status, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	if resp := post("Bearer " + token); resp.StatusCode != http.StatusOK {
		t.Errorf("with the token: %s", resp.Status)
	}
	base := strings.TrimSuffix(url, "/mcp")
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("GET %s: %s WWW-Authenticate %q, want 404 and no challenge", p, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

// The Inspector 2.12 CLI: without the token it reports the server's
// message; with --header "Authorization: Bearer …" (as docs/hosts.md
// shows) it lists the tools.
func TestTokenAuthInspectorWithoutToken(t *testing.T) {
	cmNodeModules(t)
	url, token := startTokenServer(t)
	inspector := harness.RepoPath("tests/clients/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	run := func(extra ...string) string {
		args := append([]string{inspector, "--cli", "--format", "json", url, "--method", "tools/list"}, extra...)
		cmd := exec.Command(cmNode22(), args...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := run(); strings.Contains(out, "OAuth requires a TTY") || !strings.Contains(out, "a valid bearer token is required") {
		t.Errorf("the Inspector without the token:\n%s", out)
	}
	if out := run("--header", "Authorization: Bearer "+token); !strings.Contains(out, `"tools"`) {
		t.Errorf("the Inspector with the token:\n%s", out)
	}
}
