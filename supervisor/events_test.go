package supervisor

import (
	"strings"
	"testing"
)

// However the events file is read (byte by byte or in large chunks), a
// record is kept only up to recordCap, its message is cut at MessageCap,
// and Cut counts the message bytes not kept as the tool wrote them — an
// escape the cut splits included.
func TestRecordReaderCapsMessages(t *testing.T) {
	esc := func(s string) string {
		return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s)
	}
	big := strings.Repeat("x", 3*MessageCap)
	newlines := strings.Repeat("\n", 3*MessageCap) // two record bytes each
	mixed := strings.Repeat("ab\\c\t", MessageCap)
	cases := []struct {
		record string
		want   Event
	}{
		{"log\tINFO\tshort", Event{Kind: "log", Level: "info", Data: "short"}},
		{"log\tinfo\t" + esc(big), Event{Kind: "log", Level: "info", Data: big[:MessageCap], Cut: int64(len(big) - MessageCap)}},
		{"log\tinfo\t" + esc(newlines), Event{Kind: "log", Level: "info", Data: newlines[:MessageCap], Cut: int64(len(newlines) - MessageCap)}},
		{"log\tinfo\tx" + esc(newlines), Event{Kind: "log", Level: "info", Data: "x" + newlines[:MessageCap-1], Cut: int64(len(newlines) + 1 - MessageCap)}},
		{"log\tinfo\t" + esc(mixed), Event{Kind: "log", Level: "info", Data: mixed[:MessageCap], Cut: int64(len(mixed) - MessageCap)}},
		{"progress\t1\t2\t" + esc(big), Event{Kind: "progress", Progress: []byte("1"), Total: []byte("2"), Message: big[:MessageCap], Cut: int64(len(big) - MessageCap)}},
		{strings.Repeat("\x00", 5*recordCap), Event{}},                      // an endless line of nothing
		{"progress\t" + strings.Repeat("9", 2*recordCap) + "\t\t", Event{}}, // cut before its message
		{"log\tinfo\tafter", Event{Kind: "log", Level: "info", Data: "after"}},
	}
	var file strings.Builder
	var want []Event
	for _, c := range cases {
		file.WriteString(c.record + "\n")
		if c.want.Kind != "" {
			want = append(want, c.want)
		}
	}
	for _, chunk := range []int{1, 7, 4096, 64 << 10, file.Len()} {
		var rr recordReader
		var got []Event
		for p := []byte(file.String()); len(p) > 0; {
			n := min(chunk, len(p))
			rr.feed(p[:n], func(rec []byte, dropped int64, cut bool) {
				if len(rec) > recordCap {
					t.Fatalf("chunk %d: a record of %d bytes kept", chunk, len(rec))
				}
				if ev, ok := parseEvent(string(rec), dropped, cut); ok {
					got = append(got, ev)
				}
			})
			p = p[n:]
		}
		if len(got) != len(want) {
			t.Fatalf("chunk %d: %d events, want %d", chunk, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Kind != w.Kind || g.Level != w.Level || g.Data != w.Data || g.Message != w.Message || g.Cut != w.Cut ||
				string(g.Progress) != string(w.Progress) || string(g.Total) != string(w.Total) {
				t.Errorf("chunk %d, event %d: %s %q data %d bytes message %d bytes cut %d; want %s %q data %d message %d cut %d",
					chunk, i, g.Kind, g.Level, len(g.Data), len(g.Message), g.Cut, w.Kind, w.Level, len(w.Data), len(w.Message), w.Cut)
			}
		}
	}
}

// A cut never splits a character.
func TestCapMessageKeepsCharacters(t *testing.T) {
	m := strings.Repeat("x", MessageCap-1) + "é" + "yy"
	got, cut := capMessage(m, 5)
	if got != strings.Repeat("x", MessageCap-1) || cut != 2+2+5 {
		t.Errorf("capMessage: %d bytes ending %q, cut %d", len(got), got[len(got)-3:], cut)
	}
}
