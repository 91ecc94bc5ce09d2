package mcp

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Protocol revisions answered by initialize, oldest first.
var legacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

const (
	newestLegacy = "2025-11-25"
	sdkDefault   = "2024-11-05" // the bash SDK's answer when nothing is configured
)

// LegacyVersions are the revisions initialize negotiates.
func LegacyVersions() []string { return append([]string(nil), legacyVersions...) }

// negotiate picks the protocol version to answer: the client's when we
// speak it; otherwise the configured preference when we speak that; else
// the newest. A client that sends none gets the configured version or the
// SDK's default, byte for byte as the bash SDK answered.
func negotiate(requested string, hasRequested bool, configured string) string {
	if !hasRequested {
		if configured != "" {
			return configured
		}
		return sdkDefault
	}
	if slices.Contains(legacyVersions, requested) {
		return requested
	}
	if slices.Contains(legacyVersions, configured) {
		return configured
	}
	return newestLegacy
}

// field is one member of a result object under construction; object
// writes them in order, leaving out nil values.
type field struct {
	key string
	val json.RawMessage
}

func object(fields ...field) json.RawMessage {
	ms := make([]wire.Member, len(fields))
	for i, f := range fields {
		ms[i] = wire.Member{Key: f.key, Val: f.val}
	}
	return wire.Object(ms...)
}

// initializeResult is the initialize result in the SDK's key order:
// protocolVersion, serverInfo, capabilities, then instructions when set.
// serverInfo and capabilities are config.json's values whatever their type
// (the SDK printed them as they were), defaults only when absent or null.
func initializeResult(cfg *catalog.Config, version string, caps json.RawMessage) json.RawMessage {
	return object(
		field{"protocolVersion", wire.Quote(version)},
		field{"serverInfo", serverInfoIn(version, asWritten(cfg.Field("serverInfo"), cfg.ServerInfo()))},
		field{"capabilities", caps},
		field{"instructions", cfg.Instructions()},
	)
}

// discoverResult is the server/discover result (before modernResult adds
// _meta): the same declarations as initialize's (caps), in the 2026 shape
// and in the 2026 SDK's member order (instructions after resultType).
func discoverResult(cfg *catalog.Config, caps json.RawMessage, cache catalog.CacheHints) json.RawMessage {
	return object(
		field{"supportedVersions", wire.Marshal(cfg.ModernVersions())},
		field{"capabilities", caps},
		field{"ttlMs", cache.TTL},
		field{"cacheScope", cache.Scope},
		field{"resultType", json.RawMessage(`"complete"`)},
		field{"instructions", cfg.Instructions()},
	)
}

func asWritten(raw, def json.RawMessage) json.RawMessage {
	if raw == nil || wire.FirstByte(raw) == 'n' {
		return def
	}
	return raw
}

// modernResult adds what every 2026 result carries: any extra fields
// (ttlMs, cacheScope), then resultType, then _meta with serverInfo — the
// 2026 SDK's member order. A tool's own result (mcp_result) may already
// carry resultType or _meta; those are kept rather than duplicated.
func modernResult(obj json.RawMessage, info json.RawMessage, extra []field) json.RawMessage {
	has := map[string]bool{}
	if ms, err := wire.SplitObject(obj); err == nil {
		for _, m := range ms {
			has[m.Key] = true
		}
	}
	body := bytes.TrimSuffix(bytes.TrimSpace(obj), []byte("}"))
	tail := modernMembers(has, info, extra) // {"k":v,...}
	var b bytes.Buffer
	b.Grow(len(body) + len(tail))
	b.Write(body)
	if len(tail) > 2 {
		if len(bytes.TrimSpace(body)) > 1 {
			b.WriteByte(',')
		}
		b.Write(tail[1:])
	} else {
		b.WriteByte('}')
	}
	return b.Bytes()
}

// modernMembers is what modernResult adds to a result whose keys are has,
// as an object.
func modernMembers(has map[string]bool, info json.RawMessage, extra []field) json.RawMessage {
	add := append([]field(nil), extra...)
	if !has["resultType"] {
		add = append(add, field{"resultType", json.RawMessage(`"complete"`)})
	}
	if !has["_meta"] {
		add = append(add, field{"_meta", object(field{transport.MetaInfo, info})})
	}
	return object(add...)
}

// serverInfoIn is serverInfo as a client of version gets it: without
// icons before the revision that has them (icons.go).
func serverInfoIn(version string, info json.RawMessage) json.RawMessage {
	if version < iconsVersion {
		return dropIcons(info)
	}
	return info
}
