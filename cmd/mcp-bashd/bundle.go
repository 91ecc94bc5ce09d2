package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcp-bashd/mcp-bashd/internal/bundle"
)

const bundleUsage = `Usage: mcp-bashd bundle [--binaries DIR] [--source DIR] [-o OUT] [--registry-json URL] [DIR]

Packs the server in DIR (default .: server.sh, tools.json, config.json,
resources.json, prompts.json and config.json's x-mcp-bashd.files) into
NAME-VERSION.mcpb, an MCP Bundle (manifest_version 0.3) with mcp-bashd for
darwin and linux, amd64 and arm64. The binaries are cross-compiled from the
source tree in --source (default: the current directory, if it is this
module) or taken from --binaries DIR (mcp-bashd-OS-ARCH). With
--registry-json URL, also writes server.json for the MCP Registry naming
the bundle at URL with its SHA-256. See docs/bundle.md.

Example:
  mcp-bashd bundle -o weather.mcpb examples/weather

Flags:
`

func bundleCommand(args []string, std streams) int {
	fs := flag.NewFlagSet("bundle", flag.ContinueOnError)
	fs.SetOutput(std.err)
	bins := fs.String("binaries", "", "take mcp-bashd-OS-ARCH from `DIR` instead of building them")
	src := fs.String("source", ".", "the mcp-bashd source tree to cross-compile (`DIR`)")
	out := fs.String("o", "", "the bundle's `path` (default NAME-VERSION.mcpb)")
	reg := fs.String("registry-json", "", "also write server.json beside the bundle, for the bundle at `URL`")
	fs.Usage = func() { fmt.Fprint(std.err, bundleUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	dir := "."
	if fs.NArg() > 1 {
		fmt.Fprintln(std.err, "mcp-bashd bundle: one DIR at most")
		return 2
	} else if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	s, err := bundle.Load(dir)
	if err != nil {
		fmt.Fprintln(std.err, "mcp-bashd", err)
		return 1
	}
	if *out == "" {
		*out = s.FileName()
	}
	if *bins == "" {
		tmp, err := os.MkdirTemp("", "mcp-bashd-bundle-")
		if err != nil {
			fmt.Fprintln(std.err, "mcp-bashd bundle:", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		if err := bundle.Build(*src, tmp, "-s -w -X main.version="+version); err != nil {
			fmt.Fprintln(std.err, "mcp-bashd", err)
			return 1
		}
		*bins = tmp
	}
	if err := s.Write(*out, *bins); err != nil {
		fmt.Fprintln(std.err, "mcp-bashd", err)
		return 1
	}
	fmt.Fprintln(std.out, *out)
	if *reg != "" {
		b, err := s.RegistryJSON(*out, *reg)
		if err == nil {
			p := filepath.Join(filepath.Dir(*out), "server.json")
			if err = os.WriteFile(p, b, 0o644); err == nil {
				fmt.Fprintln(std.out, p)
			}
		}
		if err != nil {
			fmt.Fprintln(std.err, "mcp-bashd", err)
			return 1
		}
	}
	return 0
}
