package state

import (
	"context"
	"time"
)

// Presence: each replica sharing a store keeps a key of its own alive, so
// that another replica can tell a task whose owner is running from one
// whose owner died (SIGKILL, a lost node) and report the latter failed
// instead of leaving it "working" forever.
//
// The key is renewed every PresenceEvery (5 s) with a TTL of PresenceTTL
// (15 s): two renewals may be lost (a slow store, a paused process) before
// the replica reads as gone, and a replica that died reads as gone within
// 15 s of its last renewal.
const (
	PresenceTTL   = 15 * time.Second
	PresenceEvery = 5 * time.Second
)

// PresenceKey is replica id's presence key.
func PresenceKey(id string) string { return "mcp-bashd:presence:" + id }

// MarkPresent (re)writes replica id's presence key for PresenceTTL.
func MarkPresent(ctx context.Context, s Store, id string) error {
	return s.Set(ctx, PresenceKey(id), []byte(time.Now().UTC().Format(time.RFC3339Nano)), PresenceTTL)
}

// Present reports whether replica id has renewed its presence within
// PresenceTTL; an error is the store's (ErrUnavailable), never "absent".
func Present(ctx context.Context, s Store, id string) (bool, error) {
	_, ok, err := s.Get(ctx, PresenceKey(id))
	return ok, err
}

// Absent removes replica id's presence key: a replica that stops says so
// at once instead of letting the key run out.
func Absent(ctx context.Context, s Store, id string) error {
	return s.Del(ctx, PresenceKey(id))
}
