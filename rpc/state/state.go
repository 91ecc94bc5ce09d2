// Package state is the store replicas of one deployment share (issue 26).
// Memory is the default, a single replica's store with nothing started;
// Redis is the shared one, chosen with --state redis://HOST:PORT/DB
// (rediss:// for TLS). The daemon keeps there the MRTR request-state key
// (DeploymentKey, KeepDeploymentKey), each replica's presence
// (presence.go), 2026 and 2025-11-25 tasks (rpc/mcp/taskshare.go), the
// session-era HTTP sessions (rpc/streamhttp/shared.go), and carries on
// its pub/sub resources/updated, list_changed, task cancels and updates
// for their owner, and session changes; Ping is /healthz's check.
package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// ErrUnavailable wraps every error of a store that cannot be reached, so a
// caller can answer a clear JSON-RPC error and keep serving.
var ErrUnavailable = errors.New("state store unavailable")

// Store is what replicas share. A missing key is (nil, false, nil) from
// Get. A ttl of 0 or less keeps the key until it is deleted; everything
// but the deployment key carries a TTL, so nothing of a replica that died
// stays in a shared store.
type Store interface {
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// SetNX stores value under key for ttl unless key exists, and returns
	// the value that stands afterwards (value itself when it was set).
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) ([]byte, error)
	// Get returns key's value.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Del removes key.
	Del(ctx context.Context, key string) error
	// Keys returns the keys that start with prefix.
	Keys(ctx context.Context, prefix string) ([]string, error)
	// Publish sends msg to every subscriber of channel, on every replica.
	Publish(ctx context.Context, channel string, msg []byte) error
	// Subscribe delivers channel's messages to fn until ctx ends; it
	// returns once the subscription is in place.
	Subscribe(ctx context.Context, channel string, fn func(msg []byte)) error
	// Ping reports whether the store can be reached (for /healthz).
	Ping(ctx context.Context) error
	// Shared reports whether other replicas see this store.
	Shared() bool
	// Close releases the store.
	Close() error
}

// Open returns the store url names: "" is a new Memory store; redis:// or
// rediss:// a Redis one, its password read from passwordFile when given
// (trailing newline dropped). It does not wait for Redis to answer: a
// store that is down at start is one that comes back later.
func Open(rawURL, passwordFile string) (Store, error) {
	if rawURL == "" {
		if passwordFile != "" {
			return nil, errors.New("--state-password-file needs --state")
		}
		return NewMemory(), nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--state: %v", err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("--state %q: want redis://HOST:PORT/DB or rediss://HOST:PORT/DB", rawURL)
	}
	var password string
	if passwordFile != "" {
		b, err := os.ReadFile(passwordFile)
		if err != nil {
			return nil, fmt.Errorf("--state-password-file: %v", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
		if password == "" {
			return nil, fmt.Errorf("--state-password-file %s: empty", passwordFile)
		}
	}
	return newRedis(rawURL, password)
}

// deploymentKeyName holds the secret that signs MRTR requestState for the
// whole deployment.
const deploymentKeyName = "mcp-bashd:mrtr-key"

// DeploymentKey returns the deployment's requestState secret: the first
// replica to ask draws it (SET NX), every later one reads it, so a retry
// signed by one replica is accepted by any. It never expires: a replica
// keeps the key it read for its whole life, and a new key would split
// the deployment.
func DeploymentKey(ctx context.Context, s Store) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := s.SetNX(ctx, deploymentKeyName, []byte(hex.EncodeToString(b)), 0)
	if err != nil {
		return "", err
	}
	return string(v), nil
}

// DeploymentKeyEvery is how often a replica writes the deployment key
// back (KeepDeploymentKey).
const DeploymentKeyEvery = 5 * time.Second

// KeepDeploymentKey writes key back (SET NX) every `every` until ctx
// ends, so that a store which lost it — Redis restarted without
// persistence — holds it again within `every`, and a replica started
// afterwards reads the key the running ones sign with rather than drawing
// its own. report is told when the store cannot be reached (once per
// outage) and when it stands on another key (replicas that started while
// the store was empty drew their own: their requestState is refused by
// the others until they restart).
func KeepDeploymentKey(ctx context.Context, s Store, key string, every time.Duration, report func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, every)
		v, err := s.SetNX(sctx, deploymentKeyName, []byte(key), 0)
		cancel()
		switch {
		case err != nil:
			if !down && ctx.Err() == nil {
				report(err)
			}
			down = true
		case string(v) != key:
			down = false
			report(fmt.Errorf("the store holds another requestState key (%s): a replica drew its own while the store was empty; restart the replicas to share one", deploymentKeyName))
		default:
			down = false
		}
	}
}
