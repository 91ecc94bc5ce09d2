package tests

// Logging (issue 24 item 5, issue 22 item 5's last bullet): one level and
// one format for every line the daemon writes, net/http's own errors
// among them; values it does not know named in a warning; the HTTP access
// log's mcp_method; the non-loopback warning once, naming the address as
// given; a log file whose directory is missing made, and one that cannot
// be opened never stopping the server.

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

const logToolBody = "tool_hi() { echo hi; }\n"

// logStdio starts a stdio server with args before the script and env,
// initializes it and makes one call; it returns the server once stdin is
// closed and it exited, and its log file's contents.
func logStdio(t *testing.T, args, env []string) (*harness.Daemon, string) {
	t.Helper()
	dir := harness.WriteFiles(t, map[string]string{"server.sh": logToolBody, "tools.json": harness.ToolsJSON("hi")})
	logFile := filepath.Join(dir, "daemon.log")
	s := harness.Start(t, harness.Options{Args: append(args, filepath.Join(dir, "server.sh")), CleanEnv: true, Shim: true, Env: append([]string{"MCP_LOG_FILE=" + logFile}, env...)})
	s.RoundTrip(harness.InitLine)
	s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi","arguments":{}}}`)
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit %v; stderr:\n%s", ee, s.Stderr.String())
	}
	b, _ := os.ReadFile(logFile)
	return s, string(b)
}

// levelsOf are the levels of a file's JSON log lines.
func levelsOf(t *testing.T, text string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var rec struct{ Level string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		out[rec.Level]++
	}
	return out
}

// --log-level and MCP_LOG_LEVEL set the least level of the files and of
// stderr alike; a value the flag does not take is a usage error.
func TestLogLevelAppliesToEverySink(t *testing.T) {
	s, file := logStdio(t, []string{"--log-level", "error"}, nil)
	if lv := levelsOf(t, file); lv["info"] != 0 || lv["debug"] != 0 {
		t.Errorf("--log-level error: the log file has %v", lv)
	}
	if e := s.Stderr.String(); e != "" {
		t.Errorf("--log-level error: stderr %q", e)
	}
	s, file = logStdio(t, nil, []string{"MCP_LOG_LEVEL=info"})
	if lv := levelsOf(t, file); lv["info"] == 0 {
		t.Errorf("MCP_LOG_LEVEL=info: no info line in the log file: %v", lv)
	}
	if e := s.Stderr.String(); !strings.Contains(e, "mcp-bashd: INFO mcp: initialize") {
		t.Errorf("MCP_LOG_LEVEL=info: stderr lacks the info lines:\n%s", e)
	}
	out, err := exec.Command(harness.Binary, "--log-level", "loud", "x.sh").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `"loud"`) {
		t.Errorf("--log-level loud: %v %q, want exit 2 naming the value", err, out)
	}
}

// MCP_LOG_STDERR's values: a level name is that level on stderr, yes/1
// every level, no/0 nothing; a value none of these, like one of
// MCP_LOG_LEVEL or MCP_LOG_FORMAT, is named in a warning and the server
// serves with the default.
func TestLogUnknownValuesAreNamed(t *testing.T) {
	s, _ := logStdio(t, nil, []string{"MCP_LOG_STDERR=info"})
	if e := s.Stderr.String(); !strings.Contains(e, "mcp-bashd: INFO mcp: initialize") {
		t.Errorf("MCP_LOG_STDERR=info: stderr lacks the info lines:\n%s", e)
	}
	s, _ = logStdio(t, nil, []string{"MCP_LOG_STDERR=yes"})
	if e := s.Stderr.String(); !strings.Contains(e, "mcp-bashd: INFO") {
		t.Errorf("MCP_LOG_STDERR=yes: stderr lacks the info lines:\n%s", e)
	}
	s, _ = logStdio(t, nil, []string{"MCP_LOG_STDERR=no"})
	if e := s.Stderr.String(); e != "" {
		t.Errorf("MCP_LOG_STDERR=no: stderr %q", e)
	}
	s, _ = logStdio(t, nil, []string{"MCP_LOG_STDERR=bogus", "MCP_LOG_LEVEL=loud", "MCP_LOG_FORMAT=xml"})
	e := s.Stderr.String()
	for _, v := range []string{"MCP_LOG_STDERR=bogus", "MCP_LOG_LEVEL=loud", "MCP_LOG_FORMAT=xml"} {
		if strings.Count(e, v) != 1 {
			t.Errorf("stderr names %s %d times, want once:\n%s", v, strings.Count(e, v), e)
		}
	}
	if strings.Contains(e, "INFO") {
		t.Errorf("unknown values: stderr got more than its default:\n%s", e)
	}
}

// logHTTP is an `mcp-bashd --http` under test, its stderr read line by
// line.
type logHTTP struct {
	cmd    *exec.Cmd
	Stderr *harness.Output
	done   chan struct{}
	log    string // MCP_LOG_FILE
}

func startLogHTTP(t *testing.T, args []string, env ...string) *logHTTP {
	t.Helper()
	dir := harness.WriteFiles(t, map[string]string{"server.sh": logToolBody, "tools.json": harness.ToolsJSON("hi")})
	d := &logHTTP{Stderr: &harness.Output{}, done: make(chan struct{}), log: filepath.Join(dir, "daemon.log")}
	d.cmd = exec.Command(harness.Binary, append(append([]string{"--http", "--http-port", "0"}, args...), filepath.Join(dir, "server.sh"))...)
	d.cmd.Env = append(append(harness.Environ(true), "MCP_LOG_FILE="+d.log, "TMPDIR="+t.TempDir()), env...)
	d.cmd.Stderr = d.Stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(time.Until(harness.Deadline(t))):
			d.cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

// port waits for the URL line (console or JSON) and returns its port.
func (d *logHTTP) port(t *testing.T, urlRE *regexp.Regexp) string {
	t.Helper()
	var port string
	proctest.WaitUntil(t, harness.Deadline(t), "the serving line", func() (bool, string) {
		m := urlRE.FindStringSubmatch(d.Stderr.String())
		if m != nil {
			port = m[1]
		}
		return m != nil, d.Stderr.String()
	})
	return port
}

// selfSigned writes a certificate and key for 127.0.0.1 into dir.
func selfSigned(t *testing.T, dir string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, keyFile
}

// tlsGarbage makes the server log a TLS handshake error: a plain-text
// request on its TLS port.
func tlsGarbage(t *testing.T, port string) {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	c.SetReadDeadline(harness.Deadline(t))
	bufio.NewReader(c).ReadString('\n')
	c.Close()
}

// postInit POSTs initialize over TLS (the certificate is the test's own).
func postInit(t *testing.T, port string) {
	t.Helper()
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, _ := http.NewRequest("POST", "https://127.0.0.1:"+port+"/mcp", strings.NewReader(harness.InitLine))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("initialize over HTTPS: %s", resp.Status)
	}
}

// With --log-format json every line on stderr is a JSON log line: the
// URL, the non-loopback warning (once, naming 0.0.0.0 as given), and
// net/http's TLS handshake error, which reaches the log file too; the
// access log names the request's JSON-RPC method.
func TestLogFormatJSONCoversEveryLine(t *testing.T) {
	cert, key := selfSigned(t, t.TempDir())
	d := startLogHTTP(t, []string{"--log-format", "json", "--http-bind", "0.0.0.0", "--tls-cert", cert, "--tls-key", key})
	port := d.port(t, regexp.MustCompile(`"msg":"serving https://0\.0\.0\.0:(\d+)/mcp"`))
	tlsGarbage(t, port)
	postInit(t, port)
	proctest.WaitUntil(t, harness.Deadline(t), "the TLS handshake error in the log file", func() (bool, string) {
		b, _ := os.ReadFile(d.log)
		return strings.Contains(string(b), "TLS handshake error") && strings.Contains(string(b), `"mcp_method":"initialize"`), string(b)
	})
	proctest.WaitUntil(t, harness.Deadline(t), "the TLS handshake error on stderr", func() (bool, string) {
		return strings.Contains(d.Stderr.String(), "TLS handshake error"), d.Stderr.String()
	})
	warnings := 0
	for _, line := range strings.Split(strings.TrimSpace(d.Stderr.String()), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("--log-format json: a stderr line that is not JSON: %q", line)
		}
		if strings.Contains(rec.Msg, "without --auth-token-file") {
			warnings++
			if rec.Level != "warn" || !strings.Contains(rec.Msg, "0.0.0.0:"+port) {
				t.Errorf("the non-loopback warning: %q", line)
			}
		}
	}
	if warnings != 1 {
		t.Errorf("the non-loopback warning printed %d times:\n%s", warnings, d.Stderr.String())
	}
}

// In the console format (the default) the warning is one line too, the
// URL names 0.0.0.0, net/http's errors are console lines; with
// MCP_LOG_STDERR=0 they reach the log file only.
func TestLogConsoleHTTPLines(t *testing.T) {
	cert, key := selfSigned(t, t.TempDir())
	d := startLogHTTP(t, []string{"--http-bind", "0.0.0.0", "--tls-cert", cert, "--tls-key", key})
	port := d.port(t, regexp.MustCompile(`(?m)^mcp-bashd: serving https://0\.0\.0\.0:(\d+)/mcp$`))
	tlsGarbage(t, port)
	proctest.WaitUntil(t, harness.Deadline(t), "the TLS handshake error on stderr", func() (bool, string) {
		return regexp.MustCompile(`(?m)^mcp-bashd: WARN http: http: TLS handshake error from `).MatchString(d.Stderr.String()), d.Stderr.String()
	})
	e := d.Stderr.String()
	if n := strings.Count(e, "without --auth-token-file"); n != 1 || !strings.Contains(e, "mcp-bashd: WARNING: serving on 0.0.0.0:"+port+" without") {
		t.Errorf("the non-loopback warning (%d times):\n%s", n, e)
	}

	quiet := startLogHTTP(t, []string{"--tls-cert", cert, "--tls-key", key}, "MCP_LOG_STDERR=0")
	port = quiet.port(t, regexp.MustCompile(`(?m)^mcp-bashd: serving https://127\.0\.0\.1:(\d+)/mcp$`))
	tlsGarbage(t, port)
	proctest.WaitUntil(t, harness.Deadline(t), "the TLS handshake error in the log file", func() (bool, string) {
		b, _ := os.ReadFile(quiet.log)
		return strings.Contains(string(b), "TLS handshake error"), string(b)
	})
	if e := quiet.Stderr.String(); strings.Contains(e, "TLS handshake") {
		t.Errorf("MCP_LOG_STDERR=0: net/http wrote on stderr:\n%s", e)
	}
}

// A log file in a directory that does not exist yet: the directory is
// made (as the 2026 SDK does for its examples' logs/NAME.log beside the
// script, the drop-in form exporting it to the daemon); a log file that
// still cannot be opened is said once on stderr and the server serves.
func TestLogFileDirectoryMadeAndUnopenableFileNotFatal(t *testing.T) {
	base := d2Write(t, `MCP_LOG_FILE="$(cd "$(dirname "$0")" && pwd)/logs/movieserver.log"
source "$SHIM"
tool_hi() { echo hi; }
run_mcp_server "$@"
`, "hi")
	dir := filepath.Join(base, "srv")
	r := harness.Start(t, d2Server(dir, filepath.Join(dir, "server.sh"), nil))
	r.RoundTrip(harness.InitLine)
	r.CloseAndWait()
	b, err := os.ReadFile(filepath.Join(dir, "logs", "movieserver.log"))
	if err != nil || !strings.Contains(string(b), `"msg":"initialize"`) {
		t.Errorf("logs/movieserver.log: %v %q\nstderr:\n%s", err, b, r.Stderr.String())
	}

	// A file under /proc/self can be neither made nor opened.
	bad := "/proc/self/no-such-dir/x.log"
	srv := harness.WriteFiles(t, map[string]string{"server.sh": logToolBody, "tools.json": harness.ToolsJSON("hi")})
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(srv, "server.sh")}, CleanEnv: true, Shim: true, Env: []string{"MCP_LOG_FILE=" + bad}})
	if got := s.RoundTrip(harness.InitLine); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize with an unopenable log file: %q\nstderr:\n%s", got, s.Stderr.String())
	}
	s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi","arguments":{}}}`)
	if ee := s.CloseAndWait(); ee != nil {
		t.Errorf("exit %v", ee)
	}
	if e := s.Stderr.String(); strings.Count(e, bad) != 1 || !strings.Contains(e, "serving without it") {
		t.Errorf("stderr, want the file named once:\n%s", e)
	}
}
