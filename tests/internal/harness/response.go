package harness

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Response is a JSON-RPC response as the tests read it.
type Response struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	// Raw is the line the response was decoded from.
	Raw string `json:"-"`
}

// Parse decodes one response line, failing the test if it is not JSON.
func Parse(t testing.TB, line string) Response {
	t.Helper()
	var r Response
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("response is not JSON: %v: %.500q", err, line)
	}
	r.Raw = line
	return r
}

// Text returns the single text item of a tools/call result and isError,
// failing the test for anything else.
func (r Response) Text(t testing.TB) (string, bool) {
	t.Helper()
	if r.Result == nil || len(r.Result.Content) != 1 {
		t.Fatalf("not a one-item tools/call result: %s", r.Raw)
	}
	return r.Result.Content[0].Text, r.Result.IsError
}

// CallLine builds a tools/call request; args "" leaves "arguments" out.
func CallLine(id int, name, args string) string {
	n, _ := json.Marshal(name)
	if args == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s}}`, id, n)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":%s}}`, id, n, args)
}

// First is the first content text of a tools/call result ("" otherwise).
func (r Response) First() string {
	if r.Result == nil || len(r.Result.Content) == 0 {
		return ""
	}
	return r.Result.Content[0].Text
}

// TextItem is the text of a tools/call result holding exactly one text
// item; ok is false for anything else.
func (r Response) TextItem() (text string, ok bool) {
	if r.Result == nil || len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" {
		return "", false
	}
	return r.Result.Content[0].Text, true
}

// String is the line the response was decoded from (at most 500 bytes),
// for failure messages.
func (r Response) String() string { return fmt.Sprintf("%.500s", r.Raw) }
