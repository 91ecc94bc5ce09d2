package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// Cursor pagination of the list methods (--page-size), driven by the
// official Go SDK client through every page, in its default 2026-07-28
// session and pinned to each older revision.

const pgPageSize = 100

// pgServer writes a server with tools tools, resources resources,
// templates resource templates and prompts prompts, and returns its
// script's path.
func pgServer(t *testing.T, tools, resources, templates, prompts int) string {
	t.Helper()
	names := make([]string, tools)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%04d", i)
	}
	var rs, ts, ps []string
	for i := 0; i < resources; i++ {
		rs = append(rs, fmt.Sprintf(`{"uri":"pg://r/%d","name":"r%d","mimeType":"text/plain"}`, i, i))
	}
	for i := 0; i < templates; i++ {
		ts = append(ts, fmt.Sprintf(`{"uriTemplate":"pg://t%d/{x}","name":"t%d"}`, i, i))
	}
	for i := 0; i < prompts; i++ {
		ps = append(ps, fmt.Sprintf(`{"name":"p%d","description":"prompt %d"}`, i, i))
	}
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":      `tool_tool_0000() { echo one; }`,
		"tools.json":     harness.ToolsJSON(names...),
		"resources.json": `{"resources":[` + strings.Join(rs, ",") + `],"resourceTemplates":[` + strings.Join(ts, ",") + `]}`,
		"prompts.json":   `{"prompts":[` + strings.Join(ps, ",") + `]}`,
	})
	return filepath.Join(dir, "server.sh")
}

// pgEvery fails unless got is want0 … want(n-1), each once, and pages is
// the number of pages n entries make.
func pgEvery(t *testing.T, what string, got []string, pages int, n int, name func(int) string) {
	t.Helper()
	if len(got) != n {
		t.Errorf("%s: %d entries over %d pages, want %d", what, len(got), pages, n)
	}
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	for i := 0; i < n; i++ {
		if seen[name(i)] != 1 {
			t.Errorf("%s: %s listed %d times, want once", what, name(i), seen[name(i)])
		}
	}
	if want := (n + pgPageSize - 1) / pgPageSize; pages != want {
		t.Errorf("%s: %d pages, want %d of %d", what, pages, want, pgPageSize)
	}
}

// pgPages lists every page with list, which returns one page's names and
// its nextCursor, until no nextCursor.
func pgPages(t *testing.T, what string, list func(cursor string) ([]string, string, error)) ([]string, int) {
	t.Helper()
	var all []string
	cursor, pages := "", 0
	for {
		names, next, err := list(cursor)
		if err != nil {
			t.Fatalf("%s page %d (cursor %q): %v", what, pages+1, cursor, err)
		}
		pages++
		if len(names) > pgPageSize {
			t.Errorf("%s page %d has %d entries, more than --page-size %d", what, pages, len(names), pgPageSize)
		}
		all = append(all, names...)
		if next == "" {
			return all, pages
		}
		if pages > 1000 {
			t.Fatalf("%s: no end of pages", what)
		}
		cursor = next
	}
}

func TestPaginationToolsEveryPage(t *testing.T) {
	script := pgServer(t, 1000, 0, 0, 0)
	for _, v := range append([]string{""}, clLegacyVersions...) {
		t.Run("v="+v, func(t *testing.T) {
			c := clGoConnect(t, v, harness.Mark(t, "pg"), nil, "--page-size", fmt.Sprint(pgPageSize), script)
			ctx, cancel := c.ctx()
			defer cancel()
			got, pages := pgPages(t, "tools/list", func(cursor string) ([]string, string, error) {
				res, err := c.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				var names []string
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				return names, res.NextCursor, nil
			})
			pgEvery(t, "tools/list", got, pages, 1000, func(i int) string { return fmt.Sprintf("tool_%04d", i) })
			if text, isErr := c.call("tool_0000", map[string]any{}); text != "one" || isErr {
				t.Errorf("tool_0000 = %q isError=%v", text, isErr)
			}
		})
	}
}

func TestPaginationResourcesAndPromptsEveryPage(t *testing.T) {
	script := pgServer(t, 1, 250, 120, 230)
	for _, v := range append([]string{""}, clLegacyVersions...) {
		t.Run("v="+v, func(t *testing.T) {
			c := clGoConnect(t, v, harness.Mark(t, "pg"), nil, "--page-size", fmt.Sprint(pgPageSize), script)
			ctx, cancel := c.ctx()
			defer cancel()
			got, pages := pgPages(t, "resources/list", func(cursor string) ([]string, string, error) {
				res, err := c.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				var names []string
				for _, r := range res.Resources {
					names = append(names, r.URI)
				}
				return names, res.NextCursor, nil
			})
			pgEvery(t, "resources/list", got, pages, 250, func(i int) string { return fmt.Sprintf("pg://r/%d", i) })
			got, pages = pgPages(t, "resources/templates/list", func(cursor string) ([]string, string, error) {
				res, err := c.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				var names []string
				for _, r := range res.ResourceTemplates {
					names = append(names, r.Name)
				}
				return names, res.NextCursor, nil
			})
			pgEvery(t, "resources/templates/list", got, pages, 120, func(i int) string { return fmt.Sprintf("t%d", i) })
			got, pages = pgPages(t, "prompts/list", func(cursor string) ([]string, string, error) {
				res, err := c.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				var names []string
				for _, p := range res.Prompts {
					names = append(names, p.Name)
				}
				return names, res.NextCursor, nil
			})
			pgEvery(t, "prompts/list", got, pages, 230, func(i int) string { return fmt.Sprintf("p%d", i) })
		})
	}
}

// pgCode is the JSON-RPC error code of err (0: none).
func pgCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// A cursor this server never issued is -32602 on every list method; so is
// one from a catalog a hot reload replaced, whose message says to list
// again from the start.
func TestPaginationBadCursorInvalidParams(t *testing.T) {
	script := pgServer(t, 250, 10, 10, 10)
	c := clGoConnect(t, "2025-11-25", harness.Mark(t, "pg"), nil, "--page-size", fmt.Sprint(pgPageSize), script)
	ctx, cancel := c.ctx()
	defer cancel()
	for _, bad := range []string{"garbage", "cDEuLjA"} {
		_, err := c.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: bad})
		if pgCode(err) != -32602 {
			t.Errorf("tools/list cursor %q: err %v, want -32602", bad, err)
		}
		_, err = c.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: bad})
		if pgCode(err) != -32602 {
			t.Errorf("resources/list cursor %q: err %v, want -32602", bad, err)
		}
		_, err = c.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: bad})
		if pgCode(err) != -32602 {
			t.Errorf("resources/templates/list cursor %q: err %v, want -32602", bad, err)
		}
		_, err = c.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: bad})
		if pgCode(err) != -32602 {
			t.Errorf("prompts/list cursor %q: err %v, want -32602", bad, err)
		}
	}
	first, err := c.cs.ListTools(ctx, nil)
	if err != nil || first.NextCursor == "" || len(first.Tools) != pgPageSize {
		t.Fatalf("first page: %d tools, nextCursor %q, err %v", len(first.Tools), first.NextCursor, err)
	}
	names := make([]string, 260)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%04d", i)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(script), "tools.json"), []byte(harness.ToolsJSON(names...)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = c.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: first.NextCursor})
	if pgCode(err) != -32602 || !strings.Contains(err.Error(), "list again") {
		t.Errorf("cursor from before the reload: err %v, want -32602 saying to list again", err)
	}
	again, err := c.cs.ListTools(ctx, nil)
	if err != nil || len(again.Tools) != pgPageSize || again.NextCursor == "" {
		t.Errorf("after the reload the first page: %d tools, nextCursor %q, err %v", len(again.Tools), again.NextCursor, err)
	}
}

// Without --page-size every list comes in one page, without nextCursor,
// as before the flag existed.
func TestPaginationOffByDefault(t *testing.T) {
	c := clGoConnect(t, "2025-11-25", harness.Mark(t, "pg"), nil, pgServer(t, 1000, 0, 0, 0))
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1000 || res.NextCursor != "" {
		t.Errorf("tools/list without --page-size: %d tools, nextCursor %q, err %v", len(res.Tools), res.NextCursor, err)
	}
}

// `mcp-bashd tools --url` follows nextCursor: a paged server's table and
// --json hold every tool.
func TestPaginationToolsURLEveryPage(t *testing.T) {
	script := pgServer(t, 250, 0, 0, 0)
	d := harness.StartHTTP(t, harness.Options{Script: script, Flags: []string{"--page-size", fmt.Sprint(pgPageSize)}, Marked: harness.Mark(t, "pg")})
	for _, asJSON := range []bool{false, true} {
		args := []string{"tools", "--url", d.URL}
		if asJSON {
			args = append(args, "--json")
		}
		out, err := exec.Command(harness.Binary, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		for i := 0; i < 250; i++ {
			if n := strings.Count(string(out), fmt.Sprintf("tool_%04d", i)); n != 1 {
				t.Errorf("%v: tool_%04d appears %d times, want once", args, i, n)
				break
			}
		}
		if strings.Contains(string(out), "nextCursor") {
			t.Errorf("%v: the joined list still carries a nextCursor", args)
		}
	}
}
