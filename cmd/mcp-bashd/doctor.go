package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/internal/doctor"
	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/sandbox"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

const doctorUsage = `Usage: mcp-bashd doctor [flags] [SERVER.sh|DIR]

Says, one line each, OK, WARN or FAIL with the fix: which mcp-bashd and
which bash a host would run, whether that bash is new enough for the
script (3.2 is, unless it uses bash 4: declare -A, mapfile, ${v,,}), that
the script loads and passes check, that its files resolve from any
working directory, where its log goes, the temp dir's free space, which
sandbox limits this OS and user enforce, and the host configs on this
machine that name SERVER. Without SERVER, the checks that need none.

Exit status: 0 all OK, 1 a WARN (it serves, a host may see less), 2 a FAIL
(or a usage error).

Example:
  mcp-bashd doctor ./myserver
  mcp-bashd doctor --json ./myserver
`

// minFree is the temp space below which calls writing temp files may fail.
const minFree = 100 << 20

func doctorCommand(args []string, std streams) int {
	var asJSON bool
	extra := func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print the report as JSON") }
	f, rest, code := cliFlags("doctor", doctorUsage, args, extra, func(first string) bool { return first == "" }, std)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(std.err, "mcp-bashd doctor: one SERVER at a time, not also %q\n", strings.Join(rest, " "))
		return 2
	}
	r := diagnose(f)
	if asJSON {
		if err := r.JSON(std.out); err != nil {
			fmt.Fprintln(std.err, "mcp-bashd doctor:", err)
			return 2
		}
	} else {
		r.Print(std.out)
	}
	return int(r.Worst())
}

func diagnose(f *cliFiles) doctor.Report {
	var r doctor.Report
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	switch {
	case err != nil:
		r.Add("mcp-bashd", doctor.Warn, "this binary's path: "+err.Error(), "")
	case hostUnseen() != "":
		// Not a fault: the snippets config prints name it by its path.
		r.Add("mcp-bashd", doctor.OK, self+" "+buildVersion()+" (a host's PATH, "+strings.Join(hostPath, ":")+", finds no mcp-bashd: name it by this path)",
			"")
	default:
		r.Add("mcp-bashd", doctor.OK, self+" "+buildVersion(), "")
	}

	bashOK := checkBash(&r, f)
	if f.script != "" && bashOK {
		checkScript(&r, f)
	}

	tmp := os.TempDir()
	if free, err := doctor.FreeBytes(tmp); err != nil {
		r.Add("temp", doctor.Warn, tmp+": "+err.Error(), "set TMPDIR to a writable directory")
	} else if free < minFree {
		r.Add("temp", doctor.Warn, fmt.Sprintf("%s: %s free", tmp, sandbox.FormatSize(int64(free))), "free space there, or set TMPDIR elsewhere")
	} else {
		r.Add("temp", doctor.OK, fmt.Sprintf("%s: %s free", tmp, sandbox.FormatSize(int64(free))), "")
	}

	checkSandbox(&r, self)

	if f.script != "" {
		home, _ := os.UserHomeDir()
		found, errs := doctor.Naming(doctor.HostConfigs(home), f.script)
		for _, e := range errs {
			r.Add("hosts", doctor.Warn, e.Error(), "fix the JSON: the host reads none of its servers")
		}
		if len(found) == 0 {
			r.Add("hosts", doctor.OK, "no host config on this machine names "+f.script, "to add it: mcp-bashd config --client NAME "+f.script)
		}
		for _, h := range found {
			r.Add("hosts", doctor.OK, h, "")
		}
	}
	return r
}

// checkBash is the bash line; false when there is no bash to load with.
func checkBash(r *doctor.Report, f *cliFiles) bool {
	bash, err := f.bashPath()
	if err != nil {
		r.Add("bash", doctor.Fail, "no bash on PATH", "install bash, or give --bash PATH (and the same in the host's config)")
		return false
	}
	v, major, err := doctor.BashVersion(bash)
	if err != nil {
		r.Add("bash", doctor.Fail, bash+": "+err.Error(), "give --bash PATH of a bash 3.2 or newer")
		return false
	}
	if major < 4 && f.script != "" {
		if at := doctor.NeedsBash4(f.script); at != "" {
			r.Add("bash", doctor.Fail, bash+" is "+v+"; the script needs bash 4: "+at,
				"install a newer bash (brew install bash) and give --bash /opt/homebrew/bin/bash")
			return true
		}
	}
	r.Add("bash", doctor.OK, bash+" "+v, "")
	return true
}

// checkScript is check's findings, the cwd-dependent paths, and the log.
func checkScript(r *doctor.Report, f *cliFiles) {
	sn, in := loadForLint(f)
	problems, n := catalog.Lint(in)
	problems = append(problems, limitRefusals(f.tools)...)
	failed := false
	for _, p := range problems {
		if p.Warning {
			r.Add("script", doctor.Warn, p.String(), "see mcp-bashd check "+f.script)
		} else {
			failed = true
			r.Add("script", doctor.Fail, p.String(), "fix it, then mcp-bashd check "+f.script)
		}
	}
	if !failed {
		r.Add("script", doctor.OK, fmt.Sprintf("%s loads, %d tools", f.script, n), "")
	}
	if sn == nil {
		return
	}
	cwd := cwdWarnings(f, sn)
	for _, p := range cwd {
		r.Add("cwd", doctor.Warn, p.String(), "name the file by the script's directory: \"$(dirname \"${BASH_SOURCE[0]}\")/...\"")
	}
	if len(cwd) == 0 {
		r.Add("cwd", doctor.OK, "its files resolve from any working directory", "")
	}
	checkLog(r, sn)
}

func checkLog(r *doctor.Report, sn *supervisor.Snapshot) {
	log := sn.Vars["MCP_LOG_FILE"]
	if log == "" {
		r.Add("log", doctor.OK, "stderr (the host keeps it in its own log)", "")
		return
	}
	if !filepath.IsAbs(log) {
		return // cwdWarnings said so
	}
	dir := filepath.Dir(log)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		r.Add("log", doctor.Warn, "MCP_LOG_FILE "+log+": its directory is missing", "mkdir -p "+dir)
		return
	}
	r.Add("log", doctor.OK, "MCP_LOG_FILE "+log, "")
}

// checkSandbox says how each tools.json limit would be held here.
func checkSandbox(r *doctor.Report, self string) {
	all := "/"
	spec, err := sandbox.FromFlags("1G", "1m", "1G", 64, 256, &all, &all, true)
	if err != nil {
		r.Add("sandbox", doctor.Warn, err.Error(), "")
		return
	}
	m := sandbox.New(sandbox.Options{Self: self})
	defer m.Close()
	// What this machine offers, not a fault of the server's: a limit
	// tools.json declares and cannot be held here is check's (limitRefusals).
	for _, l := range m.Describe(spec) {
		r.Add("sandbox", doctor.OK, l.Key+": "+l.How, "")
	}
}
