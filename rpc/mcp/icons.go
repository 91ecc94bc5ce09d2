package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// icons (catalog/icons.go) exist from revision 2025-11-25 on: serverInfo,
// tools, resources, resource templates and prompts carry them as the files
// declare them. A session that negotiated an older revision, whose schema
// has no icons, gets every entry without its "icons" member.

// iconsVersion is the first revision with icons.
const iconsVersion = "2025-11-25"

// withoutIcons says whether r's answers must leave icons out: a session
// era request under a negotiated revision before iconsVersion (revisions
// are dates, so they compare as strings; "" is before initialize, answered
// as written, as before icons were known).
func (r *request) withoutIcons() bool {
	if r.modern() || r.Session == nil {
		return false
	}
	v := r.Session.Version()
	return v != "" && v < iconsVersion
}

var iconsKey = []byte(`"icons"`)

// dropIcons is obj without its icons member (obj itself when it has none
// or is not an object).
func dropIcons(obj json.RawMessage) json.RawMessage {
	if !bytes.Contains(obj, iconsKey) {
		return obj
	}
	ms, err := wire.SplitObject(obj)
	if err != nil {
		return obj
	}
	out := ms[:0]
	for _, m := range ms {
		if m.Key != "icons" {
			out = append(out, m)
		}
	}
	return wire.Object(out...)
}

// dropListIcons is a list result ({"KEY":[...]}) with every entry's icons
// member left out.
func dropListIcons(list json.RawMessage, key string) json.RawMessage {
	if !bytes.Contains(list, iconsKey) {
		return list
	}
	ms, err := wire.SplitObject(list)
	if err != nil {
		return list
	}
	for i, m := range ms {
		var items []json.RawMessage
		if m.Key != key || json.Unmarshal(m.Val, &items) != nil {
			continue
		}
		for j := range items {
			items[j] = dropIcons(items[j])
		}
		ms[i].Val = rawArray(items)
	}
	return wire.Object(ms...)
}
