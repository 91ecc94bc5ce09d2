package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
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
//   - content (MCP_BASHD_CONTENT): result items, read once at the end.
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

// Item is one content item of a tool's result.
type Item struct {
	Kind string // "text", "image", "audio", "resource"
	Text string
	MIME string
	Data []byte // image/audio bytes
	URI  string
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
		f, err := os.Open(path)
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

// readContent reads the content records a tool left in path, loading the
// files image and audio items name (before the call's root is removed).
// Bytes beyond max in total are refused, as output is.
func readContent(path string, max int64) (items []Item, structured, result json.RawMessage, problems []string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, nil
	}
	defer f.Close()
	var total int64
	sc := bufio.NewScanner(f)
	limit := int(max) + 1
	if max <= 0 {
		limit = math.MaxInt // no cap
	}
	sc.Buffer(make([]byte, 0, 64<<10), limit)
	for sc.Scan() {
		rec := strings.Split(sc.Text(), "\t")
		switch rec[0] {
		case "text":
			if len(rec) >= 2 {
				items = append(items, Item{Kind: "text", Text: unescape(rec[1])})
			}
		case "image", "audio":
			if len(rec) < 3 {
				continue
			}
			data, err := os.ReadFile(rec[2])
			if err != nil {
				problems = append(problems, rec[0]+" file "+rec[2]+": "+err.Error())
				continue
			}
			total += int64(len(data))
			if max > 0 && total > max {
				problems = append(problems, "content larger than the output cap")
				return
			}
			items = append(items, Item{Kind: rec[0], MIME: rec[1], Data: data})
		case "resource":
			if len(rec) >= 4 {
				items = append(items, Item{Kind: "resource", URI: rec[1], MIME: rec[2], Text: unescape(rec[3])})
			}
		case "structured":
			if len(rec) >= 2 {
				structured = json.RawMessage(unescape(rec[1]))
			}
		case "result":
			if len(rec) >= 2 {
				result = json.RawMessage(unescape(rec[1]))
			}
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, "content records: "+err.Error())
	}
	return
}
