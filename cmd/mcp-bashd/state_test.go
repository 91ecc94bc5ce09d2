package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --state that cannot be used stops the start with an error naming the
// flag, and nothing on stdout.
func TestStateFlagErrors(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("tool_x() { :; }\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--state", "http://127.0.0.1:1/0", script}, "want redis://HOST:PORT/DB"},
		{[]string{"--state-password-file", filepath.Join(dir, "pw"), script}, "--state-password-file needs --state"},
		{[]string{"--state", "redis://127.0.0.1:1/0", "--state-password-file", filepath.Join(dir, "missing"), script}, "--state-password-file"},
	} {
		// The daemon logs to the process's stderr: a file stands in for it.
		logFile, err := os.Create(filepath.Join(dir, "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		saved := os.Stderr
		os.Stderr = logFile
		code, out, _ := runCmd(t, c.args...)
		os.Stderr = saved
		logFile.Close()
		b, _ := os.ReadFile(logFile.Name())
		errs := string(b)
		if code != 1 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.args, code, out, errs, c.want)
		}
	}
}
