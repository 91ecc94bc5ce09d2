package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// remoteCall makes one tools/call on a Streamable HTTP server, as a
// 2025-11-25 client: initialize (for the session), the call with a
// progress token (its notifications shown as they arrive), then the
// session ended. Cancelling ctx drops the connection, which cancels the
// call on the server.
func remoteCall(ctx context.Context, cf callFlags, tool string, args json.RawMessage, show *progress, ask *terminalAsker) (json.RawMessage, *wire.Error, error) {
	c, rerr, err := connect(ctx, remoteFlags{cf.url, cf.tokenFile, cf.cacert, cf.insecure}, "mcp-bashd call")
	if err != nil || rerr != nil {
		return nil, rerr, err
	}
	defer c.end()
	c.ask = ask
	// Every log record the tool sends, as a local call shows them; a
	// server that does not do logging answers an error, which is fine.
	if _, _, err := c.post(ctx, "logging/setLevel", `{"level":"debug"}`, nil); err != nil {
		return nil, nil, err
	}
	params := wire.Object(wire.Member{Key: "name", Val: wire.Quote(tool)}, wire.Member{Key: "arguments", Val: args},
		wire.Member{Key: "_meta", Val: json.RawMessage(`{"progressToken":"call"}`)})
	return c.post(ctx, "tools/call", string(params), show)
}

// remoteFlags are how the commands reach a server at --url.
type remoteFlags struct {
	url, tokenFile, cacert string
	insecure               bool
}

// connect opens a session (initialize, initialized) as a 2025-11-25
// client that can be asked (elicitation: the person at the terminal).
func connect(ctx context.Context, rf remoteFlags, name string) (*httpClient, *wire.Error, error) {
	c := &httpClient{url: rf.url}
	var err error
	if c.hc, err = tlsClient(rf); err != nil {
		return nil, nil, err
	}
	if rf.tokenFile != "" {
		b, err := os.ReadFile(rf.tokenFile)
		if err != nil {
			return nil, nil, fmt.Errorf("auth token file: %w", err)
		}
		c.token = strings.TrimSpace(string(b))
	}
	res, rerr, err := c.post(ctx, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"`+name+`","version":"`+version+`"}}`, nil)
	if err != nil || rerr != nil {
		return nil, rerr, err
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(res, &init)
	c.version = init.ProtocolVersion
	if _, _, err := c.post(ctx, "notifications/initialized", "", nil); err != nil {
		c.end()
		return nil, nil, err
	}
	return c, nil, nil
}

// tlsClient trusts --cacert's certificates besides the system's, or with
// --insecure verifies nothing.
func tlsClient(rf remoteFlags) (*http.Client, error) {
	if rf.cacert == "" && !rf.insecure {
		return http.DefaultClient, nil
	}
	conf := &tls.Config{InsecureSkipVerify: rf.insecure}
	if rf.cacert != "" {
		pem, err := os.ReadFile(rf.cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", rf.cacert)
		}
		conf.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = conf
	return &http.Client{Transport: tr}, nil
}

// httpClient is the little of a Streamable HTTP client that call needs.
type httpClient struct {
	url, token, session, version string
	id                           int
	hc                           *http.Client
	ask                          *terminalAsker // answers the server's questions (nil: none)
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
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, withTLSHint(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if note {
		return nil, nil, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return c.readEvents(ctx, resp.Body, show)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		// Refused before any call: the token, not the tool.
		hint := " (give the token with --auth-token-file FILE)"
		if c.token != "" {
			hint = " (the token in --auth-token-file is not the server's)"
		}
		return nil, nil, fmt.Errorf("%s: %s: %s%s", c.url, resp.Status, bytes.TrimSpace(data), hint)
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
	if resp, err := c.hc.Do(req); err == nil {
		resp.Body.Close()
	}
}

// readEvents reads an SSE response: notifications go to show, the
// response ends it.
func (c *httpClient) readEvents(ctx context.Context, r io.Reader, show *progress) (json.RawMessage, *wire.Error, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(data), &m) == nil && m.Method != "" && m.ID != nil {
			if err := c.answer(ctx, m.ID, m.Method, m.Params); err != nil {
				return nil, nil, err
			}
			continue
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

// answer answers a request the server sent on the call's stream (a tool's
// mcp_elicit) with the terminal's answer, or an error saying why not.
func (c *httpClient) answer(ctx context.Context, id json.RawMessage, method string, params json.RawMessage) error {
	var res []json.RawMessage
	err := errors.New("mcp-bashd call cannot answer " + method)
	if c.ask != nil {
		res, err = c.ask.ask(ctx, []supervisor.AskItem{{Method: method, Params: params}})
	}
	body := string(wire.Object(wire.Member{Key: "jsonrpc", Val: json.RawMessage(`"2.0"`)}, wire.Member{Key: "id", Val: id},
		wire.Member{Key: "error", Val: wire.Object(wire.Member{Key: "code", Val: json.RawMessage("-32603")}, wire.Member{Key: "message", Val: wire.Quote(fmt.Sprint(err))})}))
	if err == nil {
		body = string(wire.Object(wire.Member{Key: "jsonrpc", Val: json.RawMessage(`"2.0"`)}, wire.Member{Key: "id", Val: id}, wire.Member{Key: "result", Val: res[0]}))
	}
	req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if rerr != nil {
		return rerr
	}
	c.headers(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, rerr := c.hc.Do(req)
	if rerr != nil {
		return withTLSHint(rerr)
	}
	resp.Body.Close()
	return nil
}

// withTLSHint says what to do about a certificate the system does not trust.
func withTLSHint(err error) error {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("%w (a self-signed certificate? trust it with --cacert FILE, or skip the check with --insecure)", err)
	case errors.As(err, &invalid), errors.As(err, &host):
		return fmt.Errorf("%w (--insecure skips the check)", err)
	}
	return err
}

// remoteTools is `tools --url`: the server's tools/list, as a table (the
// list is read as tools.json is, from a file of its own) or as JSON.
func remoteTools(rf remoteFlags, asJSON bool, std streams) int {
	ctx := context.Background()
	c, rerr, err := connect(ctx, rf, "mcp-bashd tools")
	if err == nil && rerr == nil {
		defer c.end()
		var res json.RawMessage
		if res, rerr, err = allTools(ctx, c); err == nil && rerr == nil {
			if asJSON {
				var out bytes.Buffer
				json.Indent(&out, res, "", "  ")
				out.WriteByte('\n')
				std.out.Write(out.Bytes())
				return 0
			}
			return listTable(res, std)
		}
	}
	if rerr != nil {
		fmt.Fprintf(std.err, "mcp-bashd tools: error %d: %s\n", rerr.Code, rerr.Message)
		return 3
	}
	fmt.Fprintln(std.err, "mcp-bashd tools:", err)
	return 4
}

func listTable(list json.RawMessage, std streams) int {
	dir, err := os.MkdirTemp("", "mcp-bashd-tools.")
	if err == nil {
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "tools.json")
		if err = os.WriteFile(path, list, 0o600); err == nil {
			var tools []catalog.ToolInfo
			if tools, err = catalog.InspectTools(path); err == nil {
				toolsTable(tools, std.out)
				return 0
			}
		}
	}
	fmt.Fprintln(std.err, "mcp-bashd tools: the server's tools/list:", err)
	return 1
}

// allTools is the server's whole tools/list: every page, following
// nextCursor (a server run with --page-size answers in pages), as one
// {"tools":[...]} result.
func allTools(ctx context.Context, c *httpClient) (json.RawMessage, *wire.Error, error) {
	var all []json.RawMessage
	params := "{}"
	for pages := 0; ; pages++ {
		res, rerr, err := c.post(ctx, "tools/list", params, nil)
		if err != nil || rerr != nil {
			return nil, rerr, err
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, nil, fmt.Errorf("tools/list result: %w", err)
		}
		if pages == 0 && page.NextCursor == "" {
			return res, nil, nil // one page: shown exactly as the server sent it
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			break
		}
		if pages >= 100000 {
			return nil, nil, errors.New("tools/list: the server's pages do not end")
		}
		params = string(wire.Object(wire.Member{Key: "cursor", Val: wire.Quote(page.NextCursor)}))
	}
	return wire.Object(wire.Member{Key: "tools", Val: wire.Marshal(all)}), nil, nil
}
