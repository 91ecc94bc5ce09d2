# Homebrew formula of mcp-bashd, built from source. This repository is its
# own tap (Homebrew looks for formulae in Formula/):
#   brew tap mcp-bashd/mcp-bashd https://github.com/mcp-bashd/mcp-bashd
#   brew install --HEAD mcp-bashd
# and so is a checkout: brew tap mcp-bashd/local "$PWD".
# A release's own formula, which installs its prebuilt darwin archives by
# URL and digest, is written by scripts/release as dist/mcp-bashd.rb.
class McpBashd < Formula
  desc "Serve MCP tools written as bash functions"
  homepage "https://github.com/mcp-bashd/mcp-bashd"
  license "MIT"
  head "https://github.com/mcp-bashd/mcp-bashd.git", branch: "main"

  depends_on "go" => :build

  def install
    # Static, as released: no cgo on any OS.
    ENV["CGO_ENABLED"] = "0"
    system "go", "build", *std_go_args(ldflags: "-s -w"), "./cmd/mcp-bashd"
    pkgshare.install "scripts/mcpserver_core.sh"
    doc.install "README.md", "docs/hosts.md"
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
