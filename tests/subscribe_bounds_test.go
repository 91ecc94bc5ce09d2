package tests

// Issue 23, item 6: what resources/subscribe lets a client make the
// daemon keep. 24 subscriptions to 8 MiB URIs raised RSS from 14 to
// 207 MiB for the session's life; now a URI past 4096 bytes and a 257th
// subscription are refused (-32602), and the URIs are not kept. URIs
// that name no declared resource stay allowed (prefixes, and URIs tools
// announce: TestSubscriptionsSessionEra).

import (
	"fmt"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"strings"
	"testing"
)

func TestSubscribeIsBounded(t *testing.T) {
	r := harness.Start(t, rl2Server(t, sbFiles))
	r.Request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sb","version":"0"}}`)
	r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	pid := r.Cmd.Process.Pid
	before := vmRSSKiB(t, pid)
	huge := "notes://" + strings.Repeat("x", 8<<20)
	for i := 0; i < 24; i++ {
		got := r.Request("resources/subscribe", fmt.Sprintf(`{"uri":"%s%d"}`, huge, i))
		if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "uri longer than 4096 bytes") {
			t.Fatalf("subscribe to an 8 MiB URI: %.300s", got)
		}
	}
	after := vmRSSKiB(t, pid)
	for i := 0; i < 256; i++ {
		if got := r.Request("resources/subscribe", fmt.Sprintf(`{"uri":"notes://dir/%d"}`, i)); !strings.Contains(got, `"result":{}`) {
			t.Fatalf("subscription %d: %s", i+1, got)
		}
	}
	if got := r.Request("resources/subscribe", `{"uri":"notes://dir/again"}`); !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "already subscribed to 256 URIs") {
		t.Fatalf("a 257th subscription: %s", got)
	}
	// Again to one already held, and after an unsubscribe: allowed.
	if got := r.Request("resources/subscribe", `{"uri":"notes://dir/0"}`); !strings.Contains(got, `"result":{}`) {
		t.Fatalf("subscribing again to a held URI: %s", got)
	}
	r.Request("resources/unsubscribe", `{"uri":"notes://dir/1"}`)
	if got := r.Request("resources/subscribe", `{"uri":"notes://dir/again"}`); !strings.Contains(got, `"result":{}`) {
		t.Fatalf("subscribe after an unsubscribe: %s", got)
	}
	t.Logf("daemon VmRSS %d KiB before, %d KiB after 24 subscribe requests with 8 MiB URIs", before, after)
}
