package bundle

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBundleAndRegistryJSON(t *testing.T) {
	dir, bins := t.TempDir(), t.TempDir()
	w := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w(filepath.Join(dir, "server.sh"), "tool_hi() { echo \"$KEY\"; }\n")
	w(filepath.Join(dir, "tools.json"), `{"tools":[{"name":"hi","description":"says hi","inputSchema":{"type":"object"}}]}`)
	w(filepath.Join(dir, "config.json"), `{"serverInfo":{"name":"hi","version":"1.2.3"},"x-mcp-bashd":{"registry_name":"io.github.x/hi","user_config":{"key":{"type":"string","sensitive":true,"env":"KEY"}}}}`)
	for _, p := range Platforms {
		w(filepath.Join(bins, "mcp-bashd-"+p[0]+"-"+p[1]), "bin")
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), s.FileName())
	if err := s.Write(out, bins); err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	names := map[string]bool{}
	var man map[string]any
	for _, f := range z.File {
		names[f.Name] = true
		if f.Modified.Year() != 1980 || f.Modified.Month() != 1 {
			t.Errorf("%s: modified %v, want the fixed 1980-01-01", f.Name, f.Modified)
		}
		if f.Name == "manifest.json" {
			r, _ := f.Open()
			if err := json.NewDecoder(r).Decode(&man); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range []string{"bin/mcp-bashd", "bin/mcp-bashd-linux-arm64", "server/server.sh", "server/tools.json", "server/config.json"} {
		if !names[n] {
			t.Errorf("bundle lacks %s: %v", n, names)
		}
	}
	env := man["server"].(map[string]any)["mcp_config"].(map[string]any)["env"].(map[string]any)
	if man["manifest_version"] != "0.3" || env["KEY"] != "${user_config.key}" {
		t.Errorf("manifest: %v", man)
	}
	b, err := s.RegistryJSON(out, "https://example.com/hi.mcpb")
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		Packages []struct{ FileSha256 string }
	}
	json.Unmarshal(b, &reg)
	raw, _ := os.ReadFile(out)
	sum := sha256.Sum256(raw)
	if len(reg.Packages) != 1 || reg.Packages[0].FileSha256 != hex.EncodeToString(sum[:]) {
		t.Errorf("server.json: %s", b)
	}
}

// A tool without a description gets none in the manifest (the schema
// rejects null), and a user_config default the schema rejects is refused
// naming the field.
func TestManifestOmitsMissingDescriptionsAndRefusesBadDefaults(t *testing.T) {
	dir := t.TempDir()
	w := func(p, s string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("server.sh", "")
	w("tools.json", `{"tools":[{"name":"bare","inputSchema":{"type":"object"}}]}`)
	w("prompts.json", `{"prompts":[{"name":"p"}]}`)
	w("config.json", `{"serverInfo":{"name":"x","version":"1"}}`)
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Manifest()
	tool, prompt := m["tools"].([]map[string]any)[0], m["prompts"].([]map[string]any)[0]
	if _, ok := tool["description"]; ok {
		t.Errorf("tool: %v, want no description", tool)
	}
	if _, ok := prompt["description"]; ok || prompt["text"] != "p" {
		t.Errorf("prompt: %v, want no description and text p", prompt)
	}
	w("config.json", `{"serverInfo":{"name":"x","version":"1"},"x-mcp-bashd":{"user_config":{"k":{"type":"string","env":"K","default":{"a":1}}}}}`)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "x-mcp-bashd.user_config.k.default") {
		t.Errorf("object default: %v, want an error naming x-mcp-bashd.user_config.k.default", err)
	}
	w("config.json", `{"serverInfo":{"name":"x","version":"1"}}`)
	w("tools.json", `{"tools":[{"description":"no name"}]}`)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "tools[0].name") {
		t.Errorf("nameless tool: %v, want an error naming tools[0].name", err)
	}
}

// server.json holds to the registry schema's limits: a name of one '/'
// and its character set, a description of at most 100 characters cut on
// a character boundary, no "latest".
func TestRegistryJSONLimits(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "b.mcpb")
	if err := os.WriteFile(out, []byte("zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "noslash", "a/b/c", "io.github.x/has space"} {
		s := &Server{Name: "x", Version: "1", Decl: Decl{RegistryName: bad}}
		if _, err := s.RegistryJSON(out, "https://example.com/b.mcpb"); err == nil || !strings.Contains(err.Error(), "registry_name") {
			t.Errorf("registry_name %q: %v, want an error naming registry_name", bad, err)
		}
	}
	s := &Server{Name: "x", Version: "latest", Decl: Decl{RegistryName: "io.github.x/x"}}
	if _, err := s.RegistryJSON(out, "u"); err == nil || !strings.Contains(err.Error(), "serverInfo.version") {
		t.Errorf("version latest: %v", err)
	}
	s = &Server{Name: "x", Version: "1", Description: strings.Repeat("é", 150), Decl: Decl{RegistryName: "io.github.x/x_y-z.1"}}
	b, err := s.RegistryJSON(out, "u")
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Description string }
	if err := json.Unmarshal(b, &v); err != nil || v.Description != strings.Repeat("é", 100) {
		t.Errorf("description %q (%v), want 100 é", v.Description, err)
	}
}
