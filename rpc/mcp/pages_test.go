package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Paging a list walks every entry once; a cursor from another list, or
// one never issued, is -32602.
func TestPageWalksEveryEntryOnce(t *testing.T) {
	s := &Server{opt: Options{PageSize: 7}}
	var items []string
	for i := 0; i < 50; i++ {
		items = append(items, fmt.Sprintf(`{"name":"t%d"}`, i))
	}
	list := json.RawMessage(`{"tools":[` + strings.Join(items, ",") + `],"x":1}`)
	var p listParams
	var seen []string
	for pages := 0; ; pages++ {
		out, e := s.page(list, "tools", p)
		if e != nil {
			t.Fatalf("page %d: %v", pages, e)
		}
		var res struct {
			Tools []struct{ Name string } `json:"tools"`
			X     int                     `json:"x"`
			Next  *string                 `json:"nextCursor"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.X != 1 || len(res.Tools) > 7 {
			t.Fatalf("page %d: %s (%v)", pages, out, err)
		}
		for _, tl := range res.Tools {
			seen = append(seen, tl.Name)
		}
		if res.Next == nil {
			break
		}
		p.Cursor = res.Next
	}
	if len(seen) != 50 || seen[0] != "t0" || seen[49] != "t49" {
		t.Errorf("walked %d entries: %v", len(seen), seen)
	}
	other := json.RawMessage(`{"tools":[{"name":"other"}]}`)
	first, _ := s.page(list, "tools", listParams{})
	var res struct {
		Next string `json:"nextCursor"`
	}
	json.Unmarshal(first, &res)
	for _, c := range []string{res.Next, "nope", ""} {
		if _, e := s.page(other, "tools", listParams{Cursor: &c}); e == nil || e.Code != -32602 {
			t.Errorf("cursor %q on another list: %v, want -32602", c, e)
		}
	}
}

// Without a page size and a cursor the list is answered as it is.
func TestPageOffKeepsTheList(t *testing.T) {
	s := &Server{}
	list := json.RawMessage(`{"tools":[{"name":"a"}] }`)
	if out, e := s.page(list, "tools", listParams{}); e != nil || string(out) != string(list) {
		t.Errorf("page off: %s %v", out, e)
	}
}

// An empty cursor is the start before 2026-07-28 and a cursor never
// issued (-32602, once paged) in 2026-07-28; a cursor that is not a
// string is -32602.
func TestDecodeListEmptyCursorByEra(t *testing.T) {
	req := func(era transport.Era, params string) *request {
		return &request{Request: &transport.Request{Era: era, Msg: &wire.Message{Params: json.RawMessage(params)}}}
	}
	if p, e := decodeList(req(transport.Legacy, `{"cursor":""}`)); e != nil || p.Cursor != nil {
		t.Errorf("legacy empty cursor: %v %v, want the start", p.Cursor, e)
	}
	p, e := decodeList(req(transport.Modern, `{"cursor":""}`))
	if e != nil || p.Cursor == nil {
		t.Fatalf("2026 empty cursor: %v %v, want kept", p.Cursor, e)
	}
	s := &Server{opt: Options{PageSize: 2}}
	if _, e := s.page(json.RawMessage(`{"tools":[1,2,3]}`), "tools", p); e == nil || e.Code != -32602 {
		t.Errorf("2026 empty cursor on a paged list: %v, want -32602", e)
	}
	if _, e := decodeList(req(transport.Legacy, `{"cursor":7}`)); e == nil || e.Code != -32602 {
		t.Errorf("numeric cursor: %v, want -32602", e)
	}
	if p, e := decodeList(req(transport.Legacy, ``)); e != nil || p.Cursor != nil {
		t.Errorf("no params: %v %v", p.Cursor, e)
	}
}
