package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// remoteCall makes one tools/call on a Streamable HTTP server, as a
// 2025-11-25 client: initialize (for the session), the call with a
// progress token (its notifications shown as they arrive), then the
// session ended. Cancelling ctx drops the connection, which cancels the
// call on the server.
func remoteCall(ctx context.Context, cf callFlags, tool string, args json.RawMessage, show *progress) (json.RawMessage, *wire.Error, error) {
	c := &httpClient{url: cf.url}
	if cf.tokenFile != "" {
		b, err := os.ReadFile(cf.tokenFile)
		if err != nil {
			return nil, nil, fmt.Errorf("auth token file: %w", err)
		}
		c.token = strings.TrimSpace(string(b))
	}
	res, rerr, err := c.post(ctx, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-bashd call","version":"`+version+`"}}`, nil)
	if err != nil || rerr != nil {
		return nil, rerr, err
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(res, &init)
	c.version = init.ProtocolVersion
	defer c.end()
	if _, _, err := c.post(ctx, "notifications/initialized", "", nil); err != nil {
		return nil, nil, err
	}
	// Every log record the tool sends, as a local call shows them; a
	// server that does not do logging answers an error, which is fine.
	if _, _, err := c.post(ctx, "logging/setLevel", `{"level":"debug"}`, nil); err != nil {
		return nil, nil, err
	}
	params := wire.Object(wire.Member{Key: "name", Val: wire.Quote(tool)}, wire.Member{Key: "arguments", Val: args},
		wire.Member{Key: "_meta", Val: json.RawMessage(`{"progressToken":"call"}`)})
	return c.post(ctx, "tools/call", string(params), show)
}

// httpClient is the little of a Streamable HTTP client that call needs.
type httpClient struct {
	url, token, session, version string
	id                           int
}

// post sends one request (a notification when params is "" and the method
// starts with notifications/) and reads its answer, JSON or SSE.
func (c *httpClient) post(ctx context.Context, method, params string, show *progress) (json.RawMessage, *wire.Error, error) {
	body := `{"jsonrpc":"2.0","method":"` + method + `"`
	note := strings.HasPrefix(method, "notifications/")
	if !note {
		c.id++
		body += fmt.Sprintf(`,"id":%d`, c.id)
	}
	if params != "" {
		body += `,"params":` + params
	}
	body += "}"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	c.headers(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if note {
		return nil, nil, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return readEvents(resp.Body, show)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 != 2 && !json.Valid(data) {
		return nil, nil, fmt.Errorf("%s: %s: %s", c.url, resp.Status, bytes.TrimSpace(data))
	}
	return response(data)
}

func (c *httpClient) headers(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
}

// end ends the session (DELETE), best effort.
func (c *httpClient) end() {
	if c.session == "" {
		return
	}
	req, err := http.NewRequest(http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	c.headers(req)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// readEvents reads an SSE response: notifications go to show, the
// response ends it.
func readEvents(r io.Reader, show *progress) (json.RawMessage, *wire.Error, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(data), &m) == nil && m.Method != "" {
			if show != nil {
				show.Notify(m.Method, m.Params)
			}
			continue
		}
		return response([]byte(data))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	return nil, nil, errors.New("the server ended the stream without a response")
}

func response(data []byte) (json.RawMessage, *wire.Error, error) {
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, nil, fmt.Errorf("not a JSON-RPC response: %.200s", data)
	}
	if r.Error != nil {
		return nil, wire.Errorf(r.Error.Code, r.Error.Message), nil
	}
	return r.Result, nil, nil
}
