package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Cursor pagination of the four list methods (tools/list, resources/list,
// resources/templates/list, prompts/list), in every era that has them.
// Options.PageSize 0 (the default) answers every list in one page, as the
// bash SDKs did and every host expects of a small catalog; N>0 cuts each
// list into pages of N entries and adds nextCursor while more remain.
//
// A cursor is opaque to clients; inside it is "p1.STAMP.OFFSET", base64url:
// STAMP is a hash of the whole list it was cut from. A hot reload that
// changes the list changes the stamp, so a cursor from the older catalog
// is refused -32602 (naming the reason: list again from the start) rather
// than silently skipping or repeating entries of a list that moved under
// it. A reload that leaves the list byte-identical keeps cursors valid.

// listParams are a list method's params: the spec's PaginatedRequestParams.
type listParams struct {
	Cursor *string `json:"cursor"`
}

// decodeList reads a list method's params; absent or null params are no
// cursor. A cursor that is not a string is -32602, and so are params that
// are not an object (the spec's PaginatedRequestParams).
func decodeList(r *request) (listParams, *wire.Error) {
	var p listParams
	raw := bytes.TrimSpace(r.Msg.Params)
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, wire.InvalidParams("cursor must be a string")
	}
	// An empty cursor: before 2026-07-28 the spec leaves it unsaid, and a
	// client sending "" means the start. 2026-07-28 makes "" a cursor like
	// any other, and this server never issues it: -32602 (cursorOffset).
	if p.Cursor != nil && *p.Cursor == "" && !r.modern() {
		p.Cursor = nil
	}
	return p, nil
}

const cursorPrefix = "p1."

// listStamp is the stamp of a list: its entries' bytes hashed.
func listStamp(items []json.RawMessage) string {
	h := fnv.New64a()
	for _, it := range items {
		h.Write(it)
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

func encodeCursor(stamp string, off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + stamp + "." + strconv.Itoa(off)))
}

// cursorOffset is where the cursor says the next page starts, or why it
// cannot be used.
func cursorOffset(cursor, stamp string, n int) (int, *wire.Error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	s := string(raw)
	if err != nil || !strings.HasPrefix(s, cursorPrefix) {
		return 0, wire.InvalidParams("invalid cursor (not one this server issued)")
	}
	st, offs, ok := strings.Cut(strings.TrimPrefix(s, cursorPrefix), ".")
	off, aerr := strconv.Atoi(offs)
	if !ok || aerr != nil || off < 0 || off > n {
		return 0, wire.InvalidParams("invalid cursor (not one this server issued)")
	}
	if st != stamp {
		return 0, wire.InvalidParams("invalid cursor: the list changed since it was issued (the catalog was reloaded); list again without a cursor")
	}
	return off, nil
}

// page cuts a list result ({"KEY":[...],...}) to the page the cursor
// names, adding nextCursor when entries remain. Without a cursor and
// without paging the list is returned as it is.
func (s *Server) page(list json.RawMessage, key string, p listParams) (json.RawMessage, *wire.Error) {
	size := s.opt.PageSize
	if p.Cursor == nil && size <= 0 {
		return list, nil
	}
	ms, err := wire.SplitObject(list)
	if err != nil {
		return list, nil // not an object: nothing to cut (the list's own error path answers)
	}
	at := -1
	var items []json.RawMessage
	for i, m := range ms {
		if m.Key == key && json.Unmarshal(m.Val, &items) == nil {
			at = i
			break
		}
	}
	if at < 0 {
		return list, nil
	}
	stamp := listStamp(items)
	off := 0
	if p.Cursor != nil {
		var e *wire.Error
		if off, e = cursorOffset(*p.Cursor, stamp, len(items)); e != nil {
			return nil, e
		}
	}
	end := len(items)
	if size > 0 && off+size < end {
		end = off + size
	}
	ms[at].Val = rawArray(items[off:end])
	out := make([]wire.Member, 0, len(ms)+1)
	for _, m := range ms {
		if m.Key != "nextCursor" {
			out = append(out, m)
		}
	}
	if end < len(items) {
		out = append(out, wire.Member{Key: "nextCursor", Val: wire.Quote(encodeCursor(stamp, end))})
	}
	return wire.Object(out...), nil
}

func rawArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}
