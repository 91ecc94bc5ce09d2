package supervisor

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Bash reports an error in a function as "FILE: line N: …", where FILE is
// the file that defined the function. Calls define the server's
// functions by sourcing the snapshot, so a tool's error would point into
// it ("…/snapshot.3.sh: line 81: NOPE: unbound variable"); under the bash
// SDK, which sourced the script itself, it read "server.sh: line 42: …".
// MapLocations turns the one into the other.
//
// The snapshot holds each function as `declare -f` prints it (reformatted:
// one command per line, comments and blank lines gone), after a
// "#def NAME LINE FILE" line saying where bash says it was defined. A
// snapshot line inside a function is mapped by walking the printed body
// and the script's source side by side from that line, matching each
// printed command to the source line that holds it. When the source no
// longer matches (edited since the load), the location says the function
// instead: "server.sh: in tool_x (defined at line 40)".

// funcSpan is where one function of the script lies in the snapshot.
type funcSpan struct {
	name       string
	first      int // the snapshot line of "NAME ()" (1-based)
	last       int // the snapshot line of its closing "}"
	file       string
	sourceLine int // the line bash says NAME was defined at in file
}

// spans finds the functions of a stored snapshot that have a #def line
// (the shim's own, stubbed, have none).
func spans(data []byte) []funcSpan {
	var out []funcSpan
	var cur *funcSpan
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if cur != nil {
			if line == snapFuncClose {
				cur.last = n
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		if name, at, file, ok := parseDef(line); ok && at > 0 {
			cur = &funcSpan{name: name, first: n + 1, file: file, sourceLine: at}
		}
	}
	return out
}

// snapshotLine is a location after the snapshot's name: "line N:", or an
// eval's, "eval: line N:".
var snapshotLine = regexp.MustCompile(`(eval: )?line ([0-9]+):`)

// MapLocations rewrites "SNAPSHOT: line N:" in a tool's output to the
// script's own file and line. Output that does not name the snapshot is
// returned as it is, without a copy.
func (sn *Snapshot) MapLocations(b []byte) []byte {
	if sn == nil || len(b) == 0 || !bytes.Contains(b, []byte(sn.Path+": ")) {
		return b
	}
	data, err := os.ReadFile(sn.Path)
	if err != nil {
		return b
	}
	lines := strings.Split(string(data), "\n")
	fs := spans(data)
	prefix := []byte(sn.Path + ": ")
	var out bytes.Buffer
	for len(b) > 0 {
		i := bytes.Index(b, prefix)
		if i < 0 {
			out.Write(b)
			break
		}
		out.Write(b[:i])
		rest := b[i+len(prefix):]
		m := snapshotLine.FindSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			out.Write(prefix)
			b = rest
			continue
		}
		n, _ := strconv.Atoi(string(rest[m[4]:m[5]]))
		loc := locate(fs, lines, n)
		if m[2] >= 0 {
			// An eval's error: bash names the line of the eval command.
			loc = strings.Replace(loc, "line ", "eval: line ", 1)
		}
		out.WriteString(loc)
		out.WriteByte(':')
		b = rest[m[1]:]
	}
	return out.Bytes()
}

// locate is "FILE: line M" for snapshot line n, or the function's
// definition when the line cannot be matched, or the snapshot's own line
// outside any function of the script.
func locate(fs []funcSpan, snapshot []string, n int) string {
	for _, f := range fs {
		if n < f.first || n > f.last {
			continue
		}
		if m, ok := sourceLineOf(f, snapshot, n); ok {
			return f.file + ": line " + strconv.Itoa(m)
		}
		return f.file + ": in " + f.name + " (defined at line " + strconv.Itoa(f.sourceLine) + ")"
	}
	return "line " + strconv.Itoa(n)
}

// sourceLineOf walks the printed body (from the line after "NAME ()")
// and the source (from the definition) together: each printed command is
// found on the current source line or a later one.
func sourceLineOf(f funcSpan, snapshot []string, n int) (int, bool) {
	src, err := os.ReadFile(f.file)
	if err != nil {
		return 0, false
	}
	source := strings.Split(string(src), "\n")
	at := f.sourceLine - 1 // 0-based cursor in source
	for p := f.first + 1; p <= n; p++ {
		key := commandKey(snapshot[p-1])
		if key == "" {
			continue // "{" or "}": structure, not a command
		}
		found := false
		for s := at; s < len(source) && s < at+200; s++ {
			if strings.Contains(squash(source[s]), key) {
				at, found = s, true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return at + 1, true
}

// commandKey is what of a printed line must appear in its source line:
// its first 16 characters with whitespace squashed and the ";" bash adds
// dropped ("" for a line of braces alone).
func commandKey(printed string) string {
	k := strings.TrimSuffix(squash(printed), ";")
	k = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(k, "{"), "}"))
	if len(k) > 16 {
		k = k[:16]
	}
	return k
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }
