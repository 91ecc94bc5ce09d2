package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Icons (2025-11-25 and later: Implementation, Tool, Resource,
// ResourceTemplate and Prompt carry an optional "icons" array of
// {src, mimeType?, sizes?, theme?}) are declared in the files as written
// and passed through to clients of the revisions that have them
// (mcp.stripIcons removes them for older ones). LintIcons is what
// `mcp-bashd check` says of them.

// iconPlaces are where each file declares icons: the path of keys to an
// icons array ("*" is any element of an array).
var iconPlaces = map[string][][]string{
	"config":    {{"serverInfo", "icons"}},
	"tools":     {{"tools", "*", "icons"}},
	"resources": {{"resources", "*", "icons"}, {"resourceTemplates", "*", "icons"}},
	"prompts":   {{"prompts", "*", "icons"}},
}

// LintIcons checks every icons array of config.json, tools.json,
// resources.json and prompts.json ("" or a missing file: nothing to
// check): an array of objects whose src is an https: or data: URI,
// mimeType a string, sizes an array of strings and theme "light" or
// "dark". Each problem names the file and the icons line.
func LintIcons(config, tools, resources, prompts string) []Problem {
	var ps []Problem
	for _, f := range []struct{ kind, path string }{{"config", config}, {"tools", tools}, {"resources", resources}, {"prompts", prompts}} {
		data, err := os.ReadFile(f.path)
		if f.path == "" || err != nil {
			continue // an unreadable file is the other checks' finding
		}
		walkIcons(data, iconPlaces[f.kind], func(off int64, raw json.RawMessage) {
			line := 1 + bytes.Count(data[:off], []byte("\n"))
			for _, msg := range iconProblems(raw) {
				ps = append(ps, Problem{File: f.path, Line: line, Msg: msg})
			}
		})
	}
	return ps
}

// iconProblems is what is wrong with one icons value.
func iconProblems(raw json.RawMessage) []string {
	var icons []json.RawMessage
	if json.Unmarshal(raw, &icons) != nil {
		return []string{"icons must be an array of icon objects"}
	}
	var out []string
	for i, ic := range icons {
		var m map[string]json.RawMessage
		if json.Unmarshal(ic, &m) != nil || m == nil {
			out = append(out, fmt.Sprintf("icons[%d] must be an object with a src", i))
			continue
		}
		var src string
		if json.Unmarshal(m["src"], &src) != nil || src == "" {
			out = append(out, fmt.Sprintf("icons[%d].src must be a string (an https: or data: URI)", i))
		} else if l := strings.ToLower(src); !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "data:") {
			out = append(out, fmt.Sprintf("icons[%d].src %q must be an https: or data: URI", i, src))
		}
		var s string
		if v, ok := m["mimeType"]; ok && json.Unmarshal(v, &s) != nil {
			out = append(out, fmt.Sprintf("icons[%d].mimeType must be a string", i))
		}
		var sizes []string
		if v, ok := m["sizes"]; ok && json.Unmarshal(v, &sizes) != nil {
			out = append(out, fmt.Sprintf("icons[%d].sizes must be an array of strings (\"48x48\", \"any\")", i))
		}
		if v, ok := m["theme"]; ok && (json.Unmarshal(v, &s) != nil || (s != "light" && s != "dark")) {
			out = append(out, fmt.Sprintf("icons[%d].theme must be \"light\" or \"dark\"", i))
		}
	}
	return out
}

// walkIcons calls found with the offset of the key and the raw value of
// every member at one of places. A file that is not JSON stops the walk
// (its parse error is reported elsewhere).
func walkIcons(data []byte, places [][]string, found func(int64, json.RawMessage)) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var path []string
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := keyTok.(string)
				off := dec.InputOffset()
				path = append(path, key)
				if matchPlace(path, places) {
					var raw json.RawMessage
					if err := dec.Decode(&raw); err != nil {
						return err
					}
					found(off, raw)
				} else if err := walk(); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
			_, err = dec.Token()
		case json.Delim('['):
			path = append(path, "*")
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			path = path[:len(path)-1]
			_, err = dec.Token()
		}
		return err
	}
	if err := walk(); err != nil && !errors.Is(err, io.EOF) {
		return
	}
}

func matchPlace(path []string, places [][]string) bool {
	for _, p := range places {
		if len(p) != len(path) {
			continue
		}
		ok := true
		for i := range p {
			if p[i] != "*" && p[i] != path[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
