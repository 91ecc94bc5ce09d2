package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/sandbox"
)

// limitFlags are the daemon-wide defaults of every tool's sandbox (a
// tool's x-mcp-bashd limits, filesystem and network override them key by
// key). The daemon and `mcp-bashd call` take them.
type limitFlags struct {
	fs                    *flag.FlagSet
	memory, cpu, fileSize string
	processes, openFiles  int64
	read, write           string
	noNetwork             bool
	parsed                *sandbox.Spec
}

func addLimitFlags(fs *flag.FlagSet) *limitFlags {
	l := &limitFlags{fs: fs}
	fs.StringVar(&l.memory, "limit-memory", "", "default memory limit of a call, e.g. 256MiB (cgroup: the whole call; else RLIMIT_DATA per process)")
	fs.StringVar(&l.cpu, "limit-cpu", "", "default CPU time per process of a call, e.g. 10s (RLIMIT_CPU)")
	fs.Int64Var(&l.processes, "limit-processes", 0, "default process limit of a call (pids cgroup)")
	fs.StringVar(&l.fileSize, "limit-file-size", "", "default largest file a call may write, e.g. 100MiB (RLIMIT_FSIZE)")
	fs.Int64Var(&l.openFiles, "limit-open-files", 0, "default open files per process of a call (RLIMIT_NOFILE)")
	fs.StringVar(&l.read, "fs-read", "", "comma-separated `paths` calls may read and execute, nothing else (Landlock; $MCP_CALL_TMPDIR allowed)")
	fs.StringVar(&l.write, "fs-write", "", "comma-separated `paths` calls may write, nothing else (Landlock; $MCP_CALL_TMPDIR allowed)")
	fs.BoolVar(&l.noNetwork, "no-network", false, "run calls in a new network namespace (no network, loopback included) unless a tool says \"network\": true")
	return l
}

// spec is the defaults the flags give (nil: none), once they are parsed.
func (l *limitFlags) spec() (*sandbox.Spec, error) {
	var read, write *string
	l.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "fs-read":
			read = &l.read
		case "fs-write":
			write = &l.write
		}
	})
	var err error
	l.parsed, err = sandbox.FromFlags(l.memory, l.cpu, l.fileSize, l.processes, l.openFiles, read, write, l.noNetwork)
	return l.parsed, err
}

// printLimits shows how each limit of a tool is enforced on this machine,
// and which the kernel or the privileges could not enforce.
func printLimits(w io.Writer, tool string, lines []sandbox.Line) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "mcp-bashd call: limits of %s:\n", tool)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", l.Key, l.Value, l.How)
	}
	tw.Flush()
}

// limitRefusals are check's problems for the limits this OS cannot hold
// and refuses rather than run a call without (macOS, the portable build:
// sandbox_posix.go): every call of such a tool fails, so the check does.
func limitRefusals(toolsFile string) []catalog.Problem {
	if !sandbox.RefusesUnenforceable {
		return nil
	}
	tools, err := catalog.InspectTools(toolsFile)
	if err != nil {
		return nil // Lint reported it
	}
	m := sandbox.New(sandbox.Options{})
	var out []catalog.Problem
	for _, t := range tools {
		for _, l := range m.Describe(t.Sandbox) {
			if l.Refused {
				out = append(out, catalog.Problem{File: toolsFile, Line: t.Line, Msg: fmt.Sprintf("tool %q: %s %s: %s, so its calls are refused",
					t.Name, l.Key, l.Value, strings.TrimPrefix(l.How, "refused: "))})
			}
		}
	}
	return out
}
