package catalog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/schema"
)

// A tools directory (--tools-dir): every executable in it that answers
// `EXE list` with one tool JSON object per line contributes those tools; a
// call runs `EXE NAME ARGS_JSON` under the same supervisor as a bash tool.

// Lister runs `EXE list` (the supervisor: own process group, lifeline,
// deadline).
type Lister interface {
	ListTools(ctx context.Context, exe string) ([]byte, error)
}

// DirTools is one listing of a tools directory. Immutable.
type DirTools struct {
	Err    error // duplicate names or a list that is not JSON: tools/list fails with it
	byName map[string]*Tool
	Public []json.RawMessage // the tools/list entries, in file-name order
}

// Tool returns the directory's tool called name, or nil.
func (d *DirTools) Tool(name string) *Tool {
	if d == nil || d.Err != nil {
		return nil
	}
	return d.byName[name]
}

// listDir runs `EXE list` for every executable in dir. It may take as long
// as the slowest provider: it never runs on a request's path while a lock
// is held (see Source).
func listDir(ctx context.Context, dir string, lister Lister, log *zap.Logger) *DirTools {
	d := &DirTools{byName: map[string]*Tool{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		d.Err = fmt.Errorf("tools directory %s: %w", dir, err)
		return d
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		exe := filepath.Join(dir, e.Name())
		fi, err := os.Stat(exe)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			continue
		}
		out, err := lister.ListTools(ctx, exe)
		if err != nil {
			// Only executables that answer `list` are tool providers.
			log.Warn("tools directory entry does not list tools; skipped", zap.String("file", exe), zap.Error(err))
			continue
		}
		if d.Err = d.add(exe, out); d.Err != nil {
			return d
		}
	}
	return d
}

// add takes the tools one provider listed.
func (d *DirTools) add(exe string, out []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		obj, err := onlyObject(raw)
		if err != nil {
			return fmt.Errorf("Invalid tool JSON from %s line %d: %v", exe, line, err)
		}
		t, pub := ParseTool(obj)
		if t == nil {
			return fmt.Errorf("Invalid tool JSON from %s line %d: no string name", exe, line)
		}
		t.Exe = exe
		if prev, dup := d.byName[t.Name]; dup {
			// The wording of the system this mode comes from.
			return fmt.Errorf("Duplicate tool names: %s:%s,%s", t.Name, exe, prev.Exe)
		}
		if t.HasSchema && t.Schema == nil && t.SchemaErr == nil {
			t.Schema, t.SchemaErr = schema.Compile(t.Name, json.RawMessage(`{"type":"object"}`))
		}
		d.byName[t.Name] = t
		d.Public = append(d.Public, pub)
	}
	return nil
}
