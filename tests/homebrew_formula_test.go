package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// brewStub is the part of Homebrew's formula DSL our formulae use, as a
// recorder: loading a formula under it runs its class body (for one
// architecture's on_arm/on_intel block) and its install method, and prints
// what they declared and installed as JSON. No Homebrew is needed, and
// none runs here (it is macOS's, or Linuxbrew's, and online).
const brewStub = `
require "json"
$rec = {"deps" => [], "installs" => [], "system" => [], "urls" => [], "sha256" => []}
$arch = ENV.fetch("BREW_ARCH", "arm")
class Dest
  def initialize(name); @name = name; end
  def install(*files); files.each { |f| $rec["installs"] << [@name, f.to_s] }; end
  def to_s; @name; end
end
class Formula
  class << self
    def desc(s); $rec["desc"] = s; end
    def homepage(s); $rec["homepage"] = s; end
    def version(s); $rec["version"] = s; end
    def license(s); $rec["license"] = s; end
    def url(u, **o); $rec["urls"] << u; end
    def sha256(s); $rec["sha256"] << s; end
    def head(u, **o); $rec["head"] = u; end
    def depends_on(d); $rec["deps"] << (d.is_a?(Hash) ? d.map { |k, v| "#{k}:#{v}" }.join : d.to_s); end
    def on_macos; yield; end
    def on_linux; end
    def on_arm; yield if $arch == "arm"; end
    def on_intel; yield if $arch == "intel"; end
    def test(&b); $rec["test"] = !b.nil?; end
  end
  def bin; Dest.new("bin"); end
  def pkgshare; Dest.new("pkgshare"); end
  def doc; Dest.new("doc"); end
  def opt_pkgshare; "OPT/share/mcp-bashd"; end
  def version; $rec["version"] || "HEAD"; end
  def std_go_args(output: "bin/mcp-bashd", ldflags: nil); ["-o", output.to_s] + (ldflags ? ["-ldflags", ldflags] : []); end
  def system(*a); $rec["system"] << a.map(&:to_s); end
end
load ARGV[0]
k = ObjectSpace.each_object(Class).find { |c| c < Formula }
$rec["class"] = k.name
f = k.new
f.install
$rec["caveats"] = f.caveats
puts JSON.generate($rec)
`

// brewRecord is what brewStub prints.
type brewRecord struct {
	Class, Desc, Homepage, Version, Head, Caveats string
	Deps                                          []string
	Installs                                      [][2]string
	System                                        [][]string
	URLs                                          []string
	SHA256                                        []string
	Test                                          bool
}

// brewLoad checks formula's syntax (ruby -c) and loads it under brewStub
// for arch ("arm" or "intel"). Without ruby it skips, except in CI.
func brewLoad(t *testing.T, formula, arch string) brewRecord {
	t.Helper()
	if _, err := exec.LookPath("ruby"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ruby is missing (apt-get install -y ruby)")
		}
		t.Skip("ruby is missing: the Homebrew formula cannot be checked")
	}
	if b, err := exec.Command("ruby", "-c", formula).CombinedOutput(); err != nil {
		t.Fatalf("ruby -c %s: %v\n%s", formula, err, b)
	}
	stub := filepath.Join(t.TempDir(), "brewstub.rb")
	if err := os.WriteFile(stub, []byte(brewStub), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ruby", stub, formula)
	cmd.Env = append(os.Environ(), "BREW_ARCH="+arch)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("loading %s: %v", formula, err)
	}
	var r brewRecord
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return r
}

// The repository's formula (Formula/mcp-bashd.rb: the repository is its
// own tap) builds the binary from source with cgo off, as released, and
// installs it, the shim where the Linux packages put theirs (under
// share/mcp-bashd) and the docs; every file it installs is in the
// repository, and its caveats name the shim's path and the bash tools
// run under on a Mac.
func TestHomebrewFormulaInstallsBinaryAndShim(t *testing.T) {
	root := shRoot(t)
	r := brewLoad(t, filepath.Join(root, "Formula/mcp-bashd.rb"), "arm")
	if r.Class != "McpBashd" || r.Head != "https://github.com/mcp-bashd/mcp-bashd.git" || !slices.Contains(r.Deps, "go:build") || !r.Test {
		t.Errorf("formula declares %+v", r)
	}
	want := []string{"go", "build", "-o", "bin/mcp-bashd", "-ldflags", "-s -w", "./cmd/mcp-bashd"}
	if len(r.System) != 1 || !slices.Equal(r.System[0], want) {
		t.Errorf("formula builds with %q, want %q", r.System, want)
	}
	wantInstalls := [][2]string{{"pkgshare", "scripts/mcpserver_core.sh"}, {"doc", "README.md"}, {"doc", "docs/hosts.md"}}
	if !slices.Equal(r.Installs, wantInstalls) {
		t.Errorf("formula installs %q, want %q", r.Installs, wantInstalls)
	}
	for _, in := range r.Installs {
		if _, err := os.Stat(filepath.Join(root, in[1])); err != nil {
			t.Errorf("formula installs %s, which the repository lacks: %v", in[1], err)
		}
	}
	for _, s := range []string{`source "OPT/share/mcp-bashd/mcpserver_core.sh"`, "/bin/bash (3.2) unless --bash"} {
		if !strings.Contains(r.Caveats, s) {
			t.Errorf("caveats lack %q:\n%s", s, r.Caveats)
		}
	}
}
