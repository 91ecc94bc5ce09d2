// Package metrics owns the tool-call counters and the /metrics and
// /healthz endpoints. The counters are client_golang collectors; /metrics
// is client_golang's own handler over a registry that holds them, the
// supervisor's process counters (handed in as functions), and the
// library's process and Go runtime collectors. Nothing here formats
// exposition text.
//
// Invariants: a series exists only for a tool the server knows (the server
// counts a call after looking its tool up, so a client cannot create series
// at will); the metric names, labels and help texts are the ones
// docs/operations.md lists. Every method is safe for concurrent use (the
// collectors are). It imports nothing of this module: the server records
// into it and the command line wires the supervisor's counters in.
package metrics
