// Package bundle packs a server directory into an MCP Bundle (.mcpb,
// manifest_version 0.3) and describes that bundle for the MCP Registry
// (server.json). It reads the same files mcp-bashd serves: config.json,
// tools.json, prompts.json, resources.json beside server.sh.
package bundle

import (
	"archive/zip"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Platforms are the binaries a bundle carries; win32 is not one, so the
// manifest does not claim it.
var Platforms = [][2]string{{"darwin", "arm64"}, {"darwin", "amd64"}, {"linux", "amd64"}, {"linux", "arm64"}}

// Launcher is the bundle's entry point. A manifest has one command for
// every platform, so a POSIX sh script (present on darwin and linux alike)
// picks the binary by uname and execs it: no per-platform override needed.
const Launcher = `#!/bin/sh
# Starts the mcp-bashd binary built for this machine.
set -e
d=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
case $(uname -s) in Darwin) os=darwin ;; Linux) os=linux ;; *) echo "mcp-bashd: unsupported OS $(uname -s)" >&2; exit 1 ;; esac
case $(uname -m) in x86_64|amd64) arch=amd64 ;; arm64|aarch64) arch=arm64 ;; *) echo "mcp-bashd: unsupported CPU $(uname -m)" >&2; exit 1 ;; esac
exec "$d/mcp-bashd-$os-$arch" "$@"
`

// UserConfig is one setting the host asks the user for, declared in
// config.json under x-mcp-bashd.user_config; Env names the variable the
// tools read it from.
type UserConfig struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	Default     any    `json:"default,omitempty"`
	Env         string `json:"env"`
}

// Decl is config.json's x-mcp-bashd object.
type Decl struct {
	Author       string                `json:"author"`
	Description  string                `json:"description"`
	RegistryName string                `json:"registry_name"`
	Files        []string              `json:"files"`
	UserConfig   map[string]UserConfig `json:"user_config"`
}

// Server is what a directory says about itself.
type Server struct {
	Dir, Script   string
	Name, Version string
	Description   string
	Decl          Decl
	Tools         []map[string]any
	Prompts       []map[string]any
	files         []string // relative to Dir, copied under server/
}

func readJSON(path string, v any, optional bool) error {
	b, err := os.ReadFile(path)
	if optional && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Load reads the server in dir (server.sh and its files).
func Load(dir string) (*Server, error) {
	s := &Server{Dir: dir, Script: "server.sh"}
	if _, err := os.Stat(filepath.Join(dir, s.Script)); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	var cfg struct {
		ServerInfo struct {
			Name, Version, Description string
		} `json:"serverInfo"`
		Instructions string `json:"instructions"`
		X            Decl   `json:"x-mcp-bashd"`
	}
	if err := readJSON(filepath.Join(dir, "config.json"), &cfg, true); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	s.Name, s.Version, s.Decl = cfg.ServerInfo.Name, cfg.ServerInfo.Version, cfg.X
	if s.Name == "" {
		s.Name = filepath.Base(filepath.Clean(dir))
	}
	if s.Version == "" {
		return nil, fmt.Errorf("bundle: %s: serverInfo.version is required (a bundle is named NAME-VERSION)", filepath.Join(dir, "config.json"))
	}
	s.Description = cmp.Or(cfg.X.Description, cfg.ServerInfo.Description, cfg.Instructions, s.Name+" (bash tools served by mcp-bashd)")
	for k, u := range s.Decl.UserConfig {
		if u.Env == "" {
			return nil, fmt.Errorf("bundle: config.json: x-mcp-bashd.user_config.%s.env is required (the variable the tools read)", k)
		}
		switch u.Type {
		case "string", "number", "boolean", "directory", "file":
		default:
			return nil, fmt.Errorf("bundle: config.json: x-mcp-bashd.user_config.%s.type %q is not string, number, boolean, directory or file", k, u.Type)
		}
		// The manifest schema allows a string, number, boolean or list of
		// strings as a default; anything else fails mcpb validate.
		switch d := u.Default.(type) {
		case nil, string, float64, bool:
		case []any:
			for _, e := range d {
				if _, ok := e.(string); !ok {
					return nil, fmt.Errorf("bundle: config.json: x-mcp-bashd.user_config.%s.default: a list default holds strings only", k)
				}
			}
		default:
			return nil, fmt.Errorf("bundle: config.json: x-mcp-bashd.user_config.%s.default must be a string, number, boolean or list of strings", k)
		}
	}
	var tools struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := readJSON(filepath.Join(dir, "tools.json"), &tools, false); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	for i, t := range tools.Tools {
		if str(t["name"]) == "" {
			return nil, fmt.Errorf("bundle: %s: tools[%d].name must be a non-empty string", filepath.Join(dir, "tools.json"), i)
		}
		s.Tools = append(s.Tools, described(map[string]any{"name": t["name"]}, t["description"]))
	}
	var prompts struct {
		Prompts []map[string]any `json:"prompts"`
	}
	if err := readJSON(filepath.Join(dir, "prompts.json"), &prompts, true); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	for i, p := range prompts.Prompts {
		if str(p["name"]) == "" {
			return nil, fmt.Errorf("bundle: %s: prompts[%d].name must be a non-empty string", filepath.Join(dir, "prompts.json"), i)
		}
		// manifest 0.3 prompts carry a text; the server renders the real one.
		s.Prompts = append(s.Prompts, described(map[string]any{"name": p["name"], "text": cmp.Or(str(p["description"]), str(p["name"]))}, p["description"]))
	}
	s.files = []string{s.Script}
	for _, f := range append([]string{"tools.json", "config.json", "resources.json", "prompts.json", "mcpserver_core.sh"}, s.Decl.Files...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			s.files = append(s.files, f)
		} else if slices.Contains(s.Decl.Files, f) {
			return nil, fmt.Errorf("bundle: config.json: x-mcp-bashd.files names %s: %w", f, err)
		}
	}
	return s, nil
}

func str(v any) string { s, _ := v.(string); return s }

// described adds description when it is a non-empty string: the manifest
// schema (mcpb validate) rejects a null or non-string description, which
// a tool or prompt without one would otherwise get.
func described(m map[string]any, d any) map[string]any {
	if str(d) != "" {
		m["description"] = d
	}
	return m
}

// FileName is NAME-VERSION.mcpb.
func (s *Server) FileName() string { return s.Name + "-" + s.Version + ".mcpb" }

// Manifest is the bundle's manifest.json.
func (s *Server) Manifest() map[string]any {
	env := map[string]string{}
	uc := map[string]any{}
	keys := make([]string, 0, len(s.Decl.UserConfig))
	for k := range s.Decl.UserConfig {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		u := s.Decl.UserConfig[k]
		env[u.Env] = "${user_config." + k + "}"
		m := map[string]any{"type": u.Type, "title": cmp.Or(u.Title, k), "description": cmp.Or(u.Description, k)}
		if u.Required {
			m["required"] = true
		}
		if u.Sensitive {
			m["sensitive"] = true
		}
		if u.Default != nil {
			m["default"] = u.Default
		}
		uc[k] = m
	}
	mc := map[string]any{"command": "${__dirname}/bin/mcp-bashd", "args": []string{"${__dirname}/server/" + s.Script}}
	if len(env) > 0 {
		mc["env"] = env
	}
	m := map[string]any{
		"manifest_version": "0.3",
		"name":             s.Name,
		"version":          s.Version,
		"description":      s.Description,
		"author":           map[string]string{"name": cmp.Or(s.Decl.Author, s.Name)},
		"server":           map[string]any{"type": "binary", "entry_point": "bin/mcp-bashd", "mcp_config": mc},
		"tools":            s.Tools,
		"compatibility":    map[string]any{"platforms": []string{"darwin", "linux"}},
	}
	if len(s.Prompts) > 0 {
		m["prompts"] = s.Prompts
	}
	if len(uc) > 0 {
		m["user_config"] = uc
	}
	return m
}

// Build cross-compiles mcp-bashd from the module in src (CGO off) into
// dir as mcp-bashd-OS-ARCH, one per Platforms entry.
func Build(src, dir, ldflags string) error {
	for _, p := range Platforms {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(dir, "mcp-bashd-"+p[0]+"-"+p[1]), "./cmd/mcp-bashd")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p[0], "GOARCH="+p[1])
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("bundle: go build %s/%s: %v\n%s", p[0], p[1], err, out)
		}
	}
	return nil
}

// Write packs the bundle into out, taking mcp-bashd-OS-ARCH from bins.
func (s *Server) Write(out, bins string) error {
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	z := zip.NewWriter(f)
	add := func(name string, mode os.FileMode, r io.Reader) error {
		// A fixed, valid DOS date: the zero time writes month 0
		// (1980-00-00), which some unzip tools reject; fixed keeps the
		// bundle reproducible.
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
		h.SetMode(mode)
		w, err := z.CreateHeader(h)
		if err == nil {
			_, err = io.Copy(w, r)
		}
		return err
	}
	addFile := func(name, path string) error {
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		st, err := fh.Stat()
		if err != nil {
			return err
		}
		return add(name, st.Mode().Perm(), fh)
	}
	man, _ := json.MarshalIndent(s.Manifest(), "", "  ")
	err = add("manifest.json", 0o644, strings.NewReader(string(man)+"\n"))
	if err == nil {
		err = add("bin/mcp-bashd", 0o755, strings.NewReader(Launcher))
	}
	for _, p := range Platforms {
		if err == nil {
			b := "mcp-bashd-" + p[0] + "-" + p[1]
			err = addFile("bin/"+b, filepath.Join(bins, b))
		}
	}
	for _, rel := range s.files {
		if err == nil {
			err = addFile("server/"+filepath.ToSlash(rel), filepath.Join(s.Dir, rel))
		}
	}
	if err == nil {
		err = z.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return fmt.Errorf("bundle: %s: %w", out, err)
	}
	return nil
}

// registryName is the registry schema's pattern for a server's name.
var registryName = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// RegistryJSON is server.json for the MCP Registry: the bundle at url,
// with the SHA-256 of the file at path, over stdio.
func (s *Server) RegistryJSON(path, url string) ([]byte, error) {
	name := s.Decl.RegistryName
	if !registryName.MatchString(name) || len(name) > 200 {
		return nil, fmt.Errorf("bundle: config.json: x-mcp-bashd.registry_name %q must be reverse-DNS/name (one '/', letters, digits, '.', '-', '_'), e.g. io.github.you/%s", name, s.Name)
	}
	if s.Version == "latest" || len(s.Version) > 255 {
		return nil, fmt.Errorf("bundle: config.json: serverInfo.version %q: the registry wants a specific version of at most 255 characters", s.Version)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	sum := sha256.Sum256(b)
	desc := s.Description
	if r := []rune(desc); len(r) > 100 { // the schema's maxLength counts characters, not bytes
		desc = string(r[:100])
	}
	v := map[string]any{
		"$schema":     "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
		"name":        name,
		"description": desc,
		"version":     s.Version,
		"packages": []any{map[string]any{
			"registryType": "mcpb",
			"identifier":   url,
			"version":      s.Version,
			"fileSha256":   hex.EncodeToString(sum[:]),
			"transport":    map[string]string{"type": "stdio"},
		}},
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return append(out, '\n'), nil
}
