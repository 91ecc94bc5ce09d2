package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/schema"
)

// A tools directory (--tools-dir): every executable in it that answers
// `EXE list` with one tool JSON object per line contributes those tools; a
// call runs `EXE NAME ARGS_JSON` under the same supervisor as a bash tool.

// Lister runs `EXE list`.
type Lister interface {
	ListTools(ctx context.Context, exe string) ([]byte, error)
}

type dirCatalog struct {
	err    error // duplicate names or a list that is not JSON: tools/list fails with it
	byName map[string]*tool
	public []json.RawMessage
}

type toolsDir struct {
	dir    string
	lister Lister
	log    *zap.Logger
	mu     sync.Mutex
	stamp  string
	cur    *dirCatalog
}

// get returns the directory's tools, listing the executables again when
// the directory or any file in it changed.
func (d *toolsDir) get() *dirCatalog {
	st := DirStamp(d.dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur == nil || st != d.stamp {
		d.stamp = st
		d.cur = d.load()
	}
	return d.cur
}

func (d *toolsDir) load() *dirCatalog {
	c := &dirCatalog{byName: map[string]*tool{}}
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		c.err = fmt.Errorf("tools directory %s: %w", d.dir, err)
		return c
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		exe := filepath.Join(d.dir, e.Name())
		fi, err := os.Stat(exe)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			continue
		}
		out, err := d.lister.ListTools(context.Background(), exe)
		if err != nil {
			// Only executables that answer `list` are tool providers.
			d.log.Warn("tools directory entry does not list tools; skipped", zap.String("file", exe), zap.Error(err))
			continue
		}
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
				c.err = fmt.Errorf("Invalid tool JSON from %s line %d: %v", exe, line, err)
				return c
			}
			t, pub := parseTool(obj)
			if t == nil {
				c.err = fmt.Errorf("Invalid tool JSON from %s line %d: no string name", exe, line)
				return c
			}
			t.exe = exe
			if prev, dup := c.byName[t.name]; dup {
				// The wording of the system this mode comes from.
				c.err = fmt.Errorf("Duplicate tool names: %s:%s,%s", t.name, exe, prev.exe)
				return c
			}
			if t.hasSchema && t.schema == nil && t.schemaErr == nil {
				t.schema, t.schemaErr = schema.Compile(t.name, json.RawMessage(`{"type":"object"}`))
			}
			c.byName[t.name] = t
			c.public = append(c.public, pub)
		}
	}
	return c
}

// mergeList appends a tools directory's tools to a tools/list result.
func mergeList(list json.RawMessage, extra []json.RawMessage) json.RawMessage {
	if len(extra) == 0 {
		return list
	}
	body := bytes.TrimSuffix(bytes.TrimSpace(list), []byte("]}"))
	var b bytes.Buffer
	b.Write(body)
	for i, p := range extra {
		if i > 0 || !bytes.HasSuffix(body, []byte("[")) {
			b.WriteByte(',')
		}
		b.Write(p)
	}
	b.WriteString("]}")
	return b.Bytes()
}
