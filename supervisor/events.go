package supervisor

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Tools reach the daemon, beyond their stdout, through two files in the
// call's root (callroot.go) written by the shim's helpers (mcp_progress, mcp_log,
// mcp_text, mcp_image, …) — from the tool or any child it starts:
//
//   - events (MCP_BASHD_EVENTS): notifications to forward while the call
//     runs, one record per line, appended (small O_APPEND writes do not
//     interleave). Tailed while the call runs and drained at its end.
//   - content (MCP_BASHD_CONTENT): result items, read once at the end
//     (content.go).
//
// Records are tab-separated; text fields escape backslash, newline, tab and
// CR as \\, \n, \t, \r, so a record is always one line.

// Event is one notification a tool asked for.
type Event struct {
	Kind     string          // "progress" or "log"
	Progress json.RawMessage // a JSON number
	Total    json.RawMessage // a JSON number or nil
	Message  string
	Level    string
	Data     string
}

// eventPoll is how often a running call's events file is checked. Progress
// is human-paced; 20 ms keeps it prompt at negligible cost, and only calls
// whose request can receive notifications are polled at all.
const eventPoll = 20 * time.Millisecond

// tailEvents follows path until stop is closed, then drains what is left.
func tailEvents(path string, stop <-chan struct{}, emit func(Event), wg *sync.WaitGroup) {
	defer wg.Done()
	var off int64
	var partial []byte
	read := func() {
		f, _, err := openRegular(path)
		if err != nil {
			return
		}
		defer f.Close()
		if _, err := f.Seek(off, 0); err != nil {
			return
		}
		buf := make([]byte, 64<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				off += int64(n)
				partial = append(partial, buf[:n]...)
				for {
					i := bytes.IndexByte(partial, '\n')
					if i < 0 {
						break
					}
					if ev, ok := parseEvent(string(partial[:i])); ok {
						emit(ev)
					}
					partial = partial[i+1:]
				}
			}
			if err != nil {
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

func parseEvent(line string) (Event, bool) {
	f := strings.Split(line, "\t")
	switch f[0] {
	case "progress":
		if len(f) < 2 || !isNumber(f[1]) {
			return Event{}, false
		}
		ev := Event{Kind: "progress", Progress: json.RawMessage(f[1])}
		if len(f) > 2 && isNumber(f[2]) {
			ev.Total = json.RawMessage(f[2])
		}
		if len(f) > 3 {
			ev.Message = unescape(f[3])
		}
		return ev, true
	case "log":
		if len(f) < 3 {
			return Event{}, false
		}
		return Event{Kind: "log", Level: strings.ToLower(f[1]), Data: unescape(f[2])}, true
	}
	return Event{}, false
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
