package supervisor

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Tools reach the daemon, beyond their stdout, through two files in the
// call's root (callroot.go) written by the shim's helpers (mcp_progress, mcp_log,
// mcp_text, mcp_image, …) — from the tool or any child it starts:
//
//   - events (MCP_BASHD_EVENTS): notifications to forward while the call
//     runs, one record per line, appended (small O_APPEND writes do not
//     interleave). Tailed while the call runs and drained at its end:
//
//     progress  PROGRESS  TOTAL  MESSAGE    (mcp_progress; TOTAL may be empty)
//     log       LEVEL     DATA              (mcp_log)
//     ask       REPLY     FORM  …           (mcp_ask and its wrappers: ask.go)
//
//   - content (MCP_BASHD_CONTENT): result items, read once at the end
//     (content.go).
//
// Records are tab-separated; text fields escape backslash, newline, tab and
// CR as \\, \n, \t, \r, so a record is always one line.
//
// A log or progress message is cut at MessageCap bytes, and an events
// record is never held beyond recordCap bytes however long its line: the
// file is read in chunks and what does not fit is counted, not kept.

// MessageCap is the most of a log or progress message forwarded; past it
// the message is cut and Event.Cut says by how much. A notification is one
// line a client must take whole, and the daemon builds it in memory.
const MessageCap = 64 << 10

// recordCap is the most of one events record kept: a MessageCap message
// escaped (at most twice as long) and its other fields.
const recordCap = 2*MessageCap + 4<<10

// Event is one notification a tool asked for.
type Event struct {
	Kind     string          // "progress" or "log"
	Progress json.RawMessage // a JSON number
	Total    json.RawMessage // a JSON number or nil
	Message  string
	Level    string
	Data     string
	Cut      int64 // bytes of the message (Message or Data) past MessageCap, not kept

	ask *askRecord // an ask record: served by the call's asker, never emitted
}

// eventPoll is how often a running call's events file is checked. Progress
// and asks are human-paced; 20 ms keeps them prompt at negligible cost.
// Every call is polled, notifications or not: a tool may ask the client
// anything at any time, and a helper must never wait for nobody.
const eventPoll = 20 * time.Millisecond

// tailEvents follows path until stop is closed, then drains what is left.
func tailEvents(path string, stop <-chan struct{}, emit func(Event), wg *sync.WaitGroup) {
	defer wg.Done()
	var off int64
	var rr recordReader
	var buf []byte
	read := func() {
		f, _, err := openRegular(path)
		if err != nil {
			return
		}
		defer f.Close()
		if buf == nil {
			// Only once there is something to read: every call is
			// tailed, and most never write a record.
			buf = make([]byte, 64<<10)
		}
		for {
			n, err := f.ReadAt(buf, off)
			off += int64(n)
			rr.feed(buf[:n], func(rec []byte, dropped int64, cut bool) {
				if ev, ok := parseEvent(string(rec), dropped, cut); ok {
					emit(ev)
				}
			})
			if err != nil || n == 0 {
				return
			}
		}
	}
	t := time.NewTicker(eventPoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			read()
		case <-stop:
			read()
			return
		}
	}
}

// recordReader splits what is appended to the events file into records,
// keeping at most recordCap bytes of each and counting what it drops as the
// bytes it stands for once unescaped.
type recordReader struct {
	line    []byte
	over    bool  // the current record passed recordCap
	dropped int64 // unescaped bytes dropped from the current record
	esc     bool  // the dropped part ended inside an escape (\ and its letter)
}

// feed takes the next bytes of the file and emits each record it ends.
func (r *recordReader) feed(p []byte, emit func(rec []byte, dropped int64, cut bool)) {
	for len(p) > 0 {
		seg, rest, ended := p, []byte(nil), false
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			seg, rest, ended = p[:i], p[i+1:], true
		}
		r.take(seg)
		if ended {
			if r.esc { // a lone backslash at the end stays one byte
				r.dropped++
			}
			emit(r.line, r.dropped, r.over)
			r.line, r.over, r.dropped, r.esc = r.line[:0], false, 0, false
		}
		p = rest
	}
}

// take appends seg to the current record up to recordCap and counts the rest.
func (r *recordReader) take(seg []byte) {
	if !r.over {
		room := recordCap - len(r.line)
		if len(seg) <= room {
			r.line = append(r.line, seg...)
			return
		}
		r.line = append(r.line, seg[:room]...)
		seg = seg[room:]
		r.over = true
		// An escape the cut splits goes to the dropped part whole.
		if n := len(r.line) - len(bytes.TrimRight(r.line, `\`)); n%2 == 1 {
			r.line = r.line[:len(r.line)-1]
			r.esc = true
		}
	}
	for _, c := range seg {
		switch {
		case r.esc:
			r.esc = false
			r.dropped++
		case c == '\\':
			r.esc = true
		default:
			r.dropped++
		}
	}
}

// parseEvent reads one record; dropped is what was cut off its end (the
// message's tail) when cut. A record cut before its message is refused: its
// numbers or level may be the cut ones.
func parseEvent(line string, dropped int64, cut bool) (Event, bool) {
	f := strings.Split(line, "\t")
	switch f[0] {
	case "progress":
		if len(f) < 2 || !isNumber(f[1]) || (cut && len(f) < 4) {
			return Event{}, false
		}
		ev := Event{Kind: "progress", Progress: json.RawMessage(f[1])}
		if len(f) > 2 && isNumber(f[2]) {
			ev.Total = json.RawMessage(f[2])
		}
		if len(f) > 3 {
			ev.Message, ev.Cut = capMessage(unescape(f[3]), dropped)
		}
		return ev, true
	case "ask":
		if len(f) < 2 {
			return Event{}, false
		}
		rec := parseAsk(f[1:], cut)
		return Event{Kind: "ask", ask: &rec}, true
	case "log":
		if len(f) < 3 {
			return Event{}, false
		}
		ev := Event{Kind: "log", Level: strings.ToLower(f[1])}
		ev.Data, ev.Cut = capMessage(unescape(f[2]), dropped)
		return ev, true
	}
	return Event{}, false
}

// capMessage cuts m to MessageCap bytes, before a character the cut would
// split; cut is how many bytes of the message are not kept.
func capMessage(m string, dropped int64) (string, int64) {
	if len(m) <= MessageCap {
		return m, dropped
	}
	n := MessageCap
	for n > 0 && !utf8.RuneStart(m[n]) {
		n--
	}
	return m[:n], int64(len(m)-n) + dropped
}

func isNumber(s string) bool {
	var n json.Number
	return s != "" && json.Unmarshal([]byte(s), &n) == nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
