package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// eventSink turns a tool's mcp_progress/mcp_log records into notifications
// for its request, or returns nil when the request can receive none.
func (s *Server) eventSink(ctx context.Context, req *transport.Request, cfg *catalog.Config) func(supervisor.Event) {
	if req.Out == nil {
		return nil
	}
	threshold := -1
	if req.Era == transport.Modern {
		if req.Meta.HasLogLevel {
			threshold = transport.LevelRank(req.Meta.LogLevel)
		}
	} else if req.Session != nil {
		threshold = req.Session.Threshold(cfg.Declares("logging"))
	}
	token := req.Meta.ProgressToken
	if token == nil && threshold < 0 {
		return nil
	}
	var last *big.Rat
	return func(ev supervisor.Event) {
		if ctx.Err() != nil {
			return // cancelled: nothing more for this request
		}
		switch ev.Kind {
		case "progress":
			if token == nil {
				return
			}
			// "The progress value MUST increase with each notification."
			cur, ok := new(big.Rat).SetString(string(ev.Progress))
			if !ok || (last != nil && cur.Cmp(last) <= 0) {
				s.log.Info("progress not increasing; dropped", zap.ByteString("progress", ev.Progress))
				return
			}
			last = cur
			var msg json.RawMessage
			if ev.Message != "" {
				msg = wire.Quote(ev.Message + messageCut(ev))
			}
			req.Out.Notify("notifications/progress", object(field{"progressToken", token},
				field{"progress", ev.Progress}, field{"total", ev.Total}, field{"message", msg}))
		case "log":
			rank := transport.LevelRank(ev.Level)
			if threshold < 0 || rank < threshold {
				return
			}
			req.Out.Notify("notifications/message", object(field{"level", wire.Quote(transport.LogLevels[rank])},
				field{"logger", json.RawMessage(`"mcp-bashd"`)}, field{"data", wire.Quote(ev.Data + messageCut(ev))}))
		}
	}
}

// messageCut is the marker after a message the supervisor cut at
// supervisor.MessageCap, worded as the output's.
func messageCut(ev supervisor.Event) string {
	if ev.Cut == 0 {
		return ""
	}
	return fmt.Sprintf("\n[mcp-bashd: message truncated; %d more bytes not shown]", ev.Cut)
}
