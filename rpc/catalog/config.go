package catalog

import (
	"encoding/json"
	"errors"
	"io/fs"
	"slices"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// ModernVersion is the stateless revision a server may also speak; a
// config.json whose supportedVersions leaves it out makes the server
// legacy-only.
const ModernVersion = "2026-07-28"

// Config is one parse of config.json (optional at its default place: a
// missing file means defaults). Only the fields the server uses are read;
// each accessor returns the value as written, or a default, never an
// error.
type Config struct {
	Path    string
	Missing bool  // no file where none was required: defaults apply
	Err     error // the file does not hold one JSON object, or is required and missing
	fields  map[string]json.RawMessage
}

// LoadConfig reads config.json. required says the file was named
// explicitly (a flag, MCP_CONFIG_FILE): then, as under the bash SDK, a
// missing file is an error (initialize answers -32603); only the default
// path may be absent.
func LoadConfig(path string, required bool) *Config {
	c := &Config{Path: path, fields: map[string]json.RawMessage{}}
	ms, err := readObjectFile(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		c.Missing = true
		return c
	}
	if err != nil {
		c.Err = err
		return c
	}
	for _, m := range ms {
		c.fields[m.Key] = m.Val
	}
	return c
}

// Field is a top-level member as written (nil when absent).
func (c *Config) Field(key string) json.RawMessage { return c.fields[key] }

// ProtocolVersion is the configured preference ("" for none).
func (c *Config) ProtocolVersion() string {
	var v string
	_ = json.Unmarshal(c.fields["protocolVersion"], &v)
	return v
}

// ServerInfo is config.json's serverInfo object, or the SDK's default.
func (c *Config) ServerInfo() json.RawMessage {
	if raw := c.fields["serverInfo"]; wire.FirstByte(raw) == '{' {
		return raw
	}
	return json.RawMessage(`{"name":"mcp-server","version":"1.0.0"}`)
}

// Capabilities is config.json's capabilities object, or {"tools":{}}.
func (c *Config) Capabilities() json.RawMessage {
	if raw := c.fields["capabilities"]; wire.FirstByte(raw) == '{' {
		return raw
	}
	return json.RawMessage(`{"tools":{}}`)
}

// Instructions is the instructions string as raw JSON, nil when unset.
func (c *Config) Instructions() json.RawMessage {
	if raw := c.fields["instructions"]; wire.FirstByte(raw) == '"' {
		return raw
	}
	return nil
}

// Declares reports whether capabilities name capability.
func (c *Config) Declares(capability string) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.fields["capabilities"], &caps) != nil {
		return false
	}
	_, ok := caps[capability]
	return ok
}

// DeclaresListChanged reports whether capabilities.tools.listChanged is
// true. mcp-bashd reloads either way; it tells clients only when the
// server says it will (and the SDK's initialize bytes stay what they were
// for servers that do not).
func (c *Config) DeclaresListChanged() bool {
	var caps struct {
		Tools struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	}
	return json.Unmarshal(c.fields["capabilities"], &caps) == nil && caps.Tools.ListChanged
}

// ModernEnabled is false for a server whose config.json lists
// supportedVersions without 2026-07-28: it is then legacy-only, answers
// server/discover -32601 (so probing clients fall back to initialize) and
// treats every request by the older rules.
func (c *Config) ModernEnabled() bool {
	var vs []string
	if raw, ok := c.fields["supportedVersions"]; !ok || json.Unmarshal(raw, &vs) != nil {
		return true
	}
	return slices.Contains(vs, ModernVersion)
}

// DeclaresSupportedVersions reports whether config.json has the 2026 bash
// SDK's shape: it declares supportedVersions, which a bash-mcp-sdk config
// never does. Such a server keeps that SDK's dialect where the two SDKs
// answer differently (see rpc/mcp's dialect.go).
func (c *Config) DeclaresSupportedVersions() bool {
	_, ok := c.fields["supportedVersions"]
	return ok
}

// ModernVersions is what server/discover advertises: supportedVersions
// (the 2026 SDK's shape) filtered to what we speak — always the one
// revision of that era, since a list without it makes the server
// legacy-only (ModernEnabled) and discover is then never answered.
func (c *Config) ModernVersions() []string { return []string{ModernVersion} }
