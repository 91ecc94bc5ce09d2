// Package catalog owns what a server declares: tools.json (each tool's
// schemas compiled once per version of the file), config.json, and the
// tools directory's providers (`EXE list`). It publishes them as one
// immutable Catalog through a Source, which re-reads a file only when its
// stamp (inode, size, mtime, ctime) changed and lists the tools directory
// in one flight at a time with no lock held, so no request ever waits for
// a provider it does not need. It also holds the read-only inspections the
// command line uses (InspectTools, Lint, ValidateArguments).
//
// config.json is optional at its default place (defaults apply) but, when
// named explicitly (Options.ConfigRequired), a missing one is an error, as
// under the bash SDK. A tools.json version's malformed inputSchema keywords
// are logged once, when that version is read.
//
// The cache hints of 2026 results (cache.go) follow the 2026 SDK: tools/list
// takes tools.json's own ttlMs and cacheScope, then the script's
// MCP_DEFAULT_TTL_MS and MCP_DEFAULT_CACHE_SCOPE (Options), then one minute,
// public; config.json's are server/discover's (and, for a server not in
// that SDK's shape, tools/list's after tools.json's).
//
// It imports rpc/wire (JSON members), schema, sandbox (a tool's limits),
// scripts (the shim's version, for Lint) and zap; never the server, the transports or the supervisor
// (a Lister is passed in).
package catalog
