package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// The content file (MCP_BASHD_CONTENT) holds one record per line, fields
// separated by tabs, text fields escaped as events.go says:
//
//	text        TEXT
//	image       MIME  COPY  STATUS  SOURCE    (mcp_image)
//	audio       MIME  COPY  STATUS  SOURCE    (mcp_audio)
//	resource    URI   MIME  TEXT
//	structured  JSON
//	result      JSON
//	blob        MIME  COPY  STATUS  SOURCE    (mcp_blob: a resource's binary contents)
//	role        ROLE                          (mcp_message: the role of the one item after it)
//	notfound                                  (mcp_resource_not_found)
//
// An image or audio record names the copy the shim made in the root
// (content.N, see callRoot), cat's exit status while copying, and the path
// the tool gave (for messages only: the daemon never opens it — it may be
// /dev/stdin, a FIFO, or relative to the tool's directory).

// Item is one content item of a tool's result (or of a resource's
// contents, or a prompt's messages).
type Item struct {
	Kind string // "text", "image", "audio", "resource", "blob", "notfound"
	Text string
	MIME string
	Data []byte // image/audio/blob bytes
	URI  string
	Role string // the role record right before it ("" when none): a prompt message's role
}

// errOverBudget is content past the result's budget.
var errOverBudget = errors.New("content larger than the output cap")

// readContent reads the content records a tool left in its root, and the
// copies image and audio records name (before the root is removed). The
// record file and the copies share budget bytes (< 0: no cap): records past
// it, and a copy that does not fit, end the reading there, as output past
// the cap is cut.
func readContent(root callRoot, budget int64) (items []Item, structured, result json.RawMessage, problems []string) {
	data, more, err := readRegular(root.Content(), budget)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			problems = append(problems, "content records: "+err.Error())
		}
		return nil, nil, nil, problems
	}
	if more > 0 {
		// Only whole records: what the cap cut is dropped with the rest.
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		problems = append(problems, errOverBudget.Error())
	}
	left := budget - int64(len(data))
	role := ""
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		// Text fields are unescaped where they lie and kept as strings over
		// the one buffer read: a record's text is never copied.
		rec := strings.Split(unsafe.String(unsafe.SliceData(line), len(line)), "\t")
		// A role record gives its role to the one item after it.
		itemRole := role
		if rec[0] != "role" {
			role = ""
		}
		switch rec[0] {
		case "text":
			if len(rec) >= 2 {
				items = append(items, Item{Kind: "text", Text: unescapeInPlace(rec[1]), Role: itemRole})
			}
		case "role":
			if len(rec) >= 2 {
				role = unescapeInPlace(rec[1])
			}
		case "notfound":
			items = append(items, Item{Kind: "notfound"})
		case "image", "audio", "blob":
			it, err := readCopy(root, rec, budget >= 0, &left)
			if errors.Is(err, errOverBudget) {
				return items, structured, result, append(problems, err.Error())
			}
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			it.Role = itemRole
			items = append(items, it)
		case "resource":
			if len(rec) >= 4 {
				items = append(items, Item{Kind: "resource", URI: rec[1], MIME: rec[2], Text: unescapeInPlace(rec[3]), Role: itemRole})
			}
		case "structured":
			if len(rec) >= 2 {
				structured = json.RawMessage(unescapeInPlace(rec[1]))
			}
		case "result":
			if len(rec) >= 2 {
				result = json.RawMessage(unescapeInPlace(rec[1]))
			}
		}
	}
	return items, structured, result, problems
}

// readCopy reads the copy an image or audio record names, charging it to
// *left when capped.
func readCopy(root callRoot, rec []string, capped bool, left *int64) (Item, error) {
	if len(rec) < 5 {
		return Item{}, errors.New(rec[0] + " record malformed")
	}
	source := unescape(rec[4])
	path, ok := root.copyFile(rec[2])
	if !ok {
		return Item{}, errors.New(rec[0] + " record names " + strconv.Quote(rec[2]) + ", not a copy in the call's directory")
	}
	f, size, err := openRegular(path)
	if err != nil {
		return Item{}, errors.New(rec[0] + " " + source + ": " + err.Error())
	}
	defer f.Close()
	// Size first: the shim stops its copy just past the cap, and a copy that
	// does not fit says so even when cat then failed.
	if capped && size > *left {
		return Item{}, errOverBudget
	}
	if rec[3] != "0" {
		return Item{}, errors.New(rec[0] + " " + source + ": the tool could not read it (cat exited " + rec[3] + ")")
	}
	data := make([]byte, size)
	n, _ := f.ReadAt(data, 0)
	if capped {
		*left -= int64(n)
	}
	return Item{Kind: rec[0], MIME: rec[1], Data: data[:n]}, nil
}

// unescapeInPlace undoes the shim's escaping (see events.go) in the memory
// s already occupies — the buffer readContent read, which nothing else
// uses — so a record's text costs no copy. Unescaping only shortens.
func unescapeInPlace(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	w := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			i++
			switch c = b[i]; c {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'r':
				c = '\r'
			}
		}
		b[w] = c
		w++
	}
	return unsafe.String(unsafe.SliceData(b), w)
}
