package tests

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// A newcomer's path (issue 24), end to end, as the README's quick start
// tells it: `mcp-bashd new`, its test.sh, the manifest it writes started
// the way a host starts it (another working directory, the manifest's
// command and args, a clean environment) under the Inspector CLI, a call
// from the terminal with a quoted argument, then the same over HTTPS with
// a token, `call --url … --cacert`.
func TestNewcomerPathFromNewToAHost(t *testing.T) {
	cmNodeModules(t)
	mark := harness.Mark(t, "newcomer")
	t.Cleanup(func() { harness.KillMarked(mark) })
	// What a host gives a server: PATH (where mcp-bashd was installed)
	// and HOME, nothing of the shell the newcomer typed in.
	clean := []string{"PATH=" + filepath.Dir(harness.Binary) + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), harness.MarkKey + "=" + mark}
	work, elsewhere := t.TempDir(), t.TempDir()

	out := ncRun(t, work, clean, 0, harness.Binary, "new", "myserver")
	dir := filepath.Join(work, "myserver")
	if !strings.Contains(out, "try it: "+dir+"/test.sh\ncall it: mcp-bashd call "+dir+" hello name=Ada\nhost it: paste "+dir+"/mcp.json") {
		t.Errorf("new printed %q", out)
	}
	if out := ncRun(t, work, clean, 0, filepath.Join(dir, "test.sh")); !strings.HasSuffix(out, "ok\n") {
		t.Errorf("test.sh printed %q", out)
	}
	// The README's quick start is this path, in this order, and its call
	// line prints what it says.
	readme, err := os.ReadFile(harness.RepoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	quick, _, _ := strings.Cut(string(readme), "\n## Two commands\n")
	const readmeCall = `mcp-bashd call myserver hello name='Ada "the Countess"'`
	at := -1
	for _, step := range []string{"## Quick start", "dpkg -i", "go install", "mcp-bashd new myserver", "myserver/test.sh", "myserver/mcp.json", readmeCall, `prints ` + "`" + `Hello, Ada "the Countess"!` + "`"} {
		i := strings.Index(quick, step)
		if i <= at {
			t.Errorf("the README's quick start lacks %q after what precedes it", step)
		}
		at = max(at, i)
	}
	if out := ncRun(t, work, clean, 0, "/bin/bash", "-c", readmeCall); out != `Hello, Ada "the Countess"!`+"\n" {
		t.Errorf("the README's call printed %q", out)
	}

	// The manifest as a host reads it.
	var manifest struct {
		McpServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "mcp.json"))
	if err == nil {
		err = json.Unmarshal(b, &manifest)
	}
	entry, ok := manifest.McpServers["myserver"]
	if err != nil || !ok || entry.Command == "" {
		t.Fatalf("mcp.json %s: %v", b, err)
	}
	// The host's PATH does not hold the test's binary: the manifest names
	// it (MCP_BASHD in its env), as for a go install into ~/go/bin.
	if entry.Env["MCP_BASHD"] != harness.Binary {
		t.Errorf("mcp.json's env %v does not name the binary %s, which a host's PATH lacks", entry.Env, harness.Binary)
	}
	host := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	inspector := []string{harness.RepoPath("tests/clients/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
		"--cli", "--format", "json", "-e", harness.MarkKey + "=" + mark}
	for k, v := range entry.Env {
		inspector = append(inspector, "-e", k+"="+v)
	}
	inspector = append(append(inspector, entry.Command), entry.Args...)
	var list struct {
		Result struct {
			Tools []struct{ Name string }
		}
	}
	b = []byte(ncRun(t, elsewhere, host, 0, cmNode22(), append(inspector, "--method", "tools/list")...))
	if json.Unmarshal(b, &list) != nil || len(list.Result.Tools) != 1 || list.Result.Tools[0].Name != "hello" {
		t.Errorf("the Inspector's tools/list from another directory printed %s", b)
	}
	const quoted, greeting = `name=say "hi" \ back`, `Hello, say "hi" \ back!`
	var call struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	b = []byte(ncRun(t, elsewhere, host, 0, cmNode22(), append(inspector, "--method", "tools/call", "--tool-name", "hello", "--tool-arg", quoted)...))
	if json.Unmarshal(b, &call) != nil || len(call.Result.Content) != 1 || call.Result.Content[0].Text != greeting || call.Result.IsError {
		t.Errorf("the Inspector's tools/call printed %s, want the text %q", b, greeting)
	}

	script := filepath.Join(dir, "server.sh")
	if out := ncRun(t, elsewhere, clean, 0, harness.Binary, "call", script, "hello", quoted); out != greeting+"\n" {
		t.Errorf("call printed %q, want %q", out, greeting+"\n")
	}

	// The same over HTTPS with a token: ./server.sh takes mcp-bashd's flags.
	cert, key := ncSelfSigned(t)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "--http", "--http-port", "0", "--tls-cert", cert, "--tls-key", key, "--auth-token-file", token)
	cmd.Dir, cmd.Env = elsewhere, clean
	d := harness.StartHTTPCmd(t, cmd)
	url := d.URL
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("./server.sh --http --tls-cert serves %q", url)
	}
	if out := ncRun(t, elsewhere, clean, 0, harness.Binary, "call", "--url", url, "--cacert", cert, "--auth-token-file", token, "hello", quoted); out != greeting+"\n" {
		t.Errorf("call --url --cacert printed %q, want %q", out, greeting+"\n")
	}
	if out := ncRun(t, elsewhere, clean, 0, harness.Binary, "tools", "--url", url, "--cacert", cert, "--auth-token-file", token); !strings.Contains(out, "hello") {
		t.Errorf("tools --url printed %q", out)
	}
	if out := ncRun(t, elsewhere, clean, 0, harness.Binary, "call", "--url", url, "--insecure", "--auth-token-file", token, "hello", "name=Ada"); out != "Hello, Ada!\n" {
		t.Errorf("call --url --insecure printed %q", out)
	}
	// Without the token: refused, no call made.
	if out := ncRun(t, elsewhere, clean, 4, harness.Binary, "call", "--url", url, "--cacert", cert, "hello", "name=Ada"); !strings.Contains(out, "401") {
		t.Errorf("call without the token said %q", out)
	}
	// Without --cacert the certificate is unknown: no call, and what to do.
	if out := ncRun(t, elsewhere, clean, 4, harness.Binary, "call", "--url", url, "--auth-token-file", token, "hello", quoted); !strings.Contains(out, "trust it with --cacert FILE") {
		t.Errorf("call without --cacert said %q", out)
	}
	d.Stop(t)
	harness.WaitNoneLeft(t, mark, -1, "no process of the newcomer's server left")
}

// The scaffold's own flags are mcp-bashd's: one it does not know is an
// error (it served stdio and exited 0).
func TestNewcomerScaffoldRefusesUnknownFlags(t *testing.T) {
	work := t.TempDir()
	env := []string{"PATH=" + filepath.Dir(harness.Binary) + ":/usr/bin:/bin", "HOME=" + work}
	ncRun(t, work, env, 0, harness.Binary, "new", "s")
	if out := ncRun(t, work, env, 2, filepath.Join(work, "s", "server.sh"), "--bogus"); !strings.Contains(out, "flag provided but not defined: -bogus") {
		t.Errorf("./server.sh --bogus said %q", out)
	}
}

// ncRun runs name in dir with exactly env and wants exit status code; it
// returns stdout, or stderr when code is not 0.
func ncRun(t *testing.T, dir string, env []string, code int, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = strings.NewReader("")
	err := cmd.Run()
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	if got != code {
		t.Fatalf("%s %q exited %d, want %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), args, got, code, stdout.String(), stderr.String())
	}
	if code != 0 {
		return stderr.String()
	}
	return stdout.String()
}

// ncSelfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func ncSelfSigned(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "newcomer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}
