package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// darwinArches are the macOS GOARCH values released, and Homebrew's
// names for them in a formula's on_arm/on_intel blocks.
var darwinArches = []struct{ goarch, brew string }{{"arm64", "arm"}, {"amd64", "intel"}}

// writeDarwin builds and archives darwin/arm64 and darwin/amd64 and writes
// the Homebrew formula that installs those archives; it returns the files
// written. The formula's URLs are the GitHub release's (tag vVERSION).
func writeDarwin(root, work, out, version string, mtime time.Time) ([]string, error) {
	var made []string
	digests := map[string]string{}
	for _, a := range darwinArches {
		bin := filepath.Join(work, "darwin-"+a.goarch, name)
		if err := build(root, "darwin", a.goarch, version, bin); err != nil {
			return nil, err
		}
		archive, err := writeArchive(out, version, "darwin", a.goarch, payloadOf(root, bin), mtime)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(out, archive))
		if err != nil {
			return nil, err
		}
		digests[a.goarch] = fmt.Sprintf("%x", sha256.Sum256(b))
		made = append(made, archive)
	}
	const file = name + ".rb"
	if err := os.WriteFile(filepath.Join(out, file), []byte(releaseFormula(version, digests)), 0o644); err != nil {
		return nil, err
	}
	return append(made, file), nil
}

// releaseFormula is the Homebrew formula of a release's darwin archives:
// the binary into bin, the shim into share/mcp-bashd (where the Linux
// packages put it under /usr). No bash dependency: macOS has /bin/bash
// 3.2, which the shim runs under (docs/hosts.md).
func releaseFormula(version string, digests map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Homebrew formula of mcp-bashd %[1]s, written by scripts/release: it
# installs the release's darwin archives. Put it in a tap's Formula/ (or
# brew install --formula ./mcp-bashd.rb where Homebrew takes a path).
class McpBashd < Formula
  desc "%[2]s"
  homepage "%[3]s"
  license "MIT"
  version "%[1]s"

  on_macos do
`, version, summary, homepage)
	for _, a := range darwinArches {
		fmt.Fprintf(&b, `    on_%[1]s do
      url "%[2]s/releases/download/v%[3]s/%[4]s_%[3]s_darwin_%[5]s.tar.gz"
      sha256 "%[6]s"
    end
`, a.brew, homepage, version, name, a.goarch, digests[a.goarch])
	}
	b.WriteString(formulaBody)
	return b.String()
}

// formulaBody is the part of the formula every build of it shares (and
// Formula/mcp-bashd.rb, which builds from source, too).
const formulaBody = `  end

  def install
    bin.install "mcp-bashd"
    pkgshare.install "mcpserver_core.sh"
    doc.install "README.md"
  end

  def caveats
    <<~EOS
      The drop-in shim is #{opt_pkgshare}/mcpserver_core.sh:
        source "#{opt_pkgshare}/mcpserver_core.sh"
      Tools run under /bin/bash (3.2) unless --bash names another bash.
    EOS
  end

  test do
    (testpath/"server.sh").write "tool_hello() { echo hi; }\n"
    (testpath/"tools.json").write '{"tools":[{"name":"hello","description":"says hi","inputSchema":{"type":"object"}}]}'
    assert_equal "hi\n", shell_output("#{bin}/mcp-bashd call #{testpath}/server.sh hello")
  end
end
`
