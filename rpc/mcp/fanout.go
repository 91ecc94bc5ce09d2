package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
)

// Change notifications across the replicas sharing a --state store: what
// one replica's tools or watcher notice reaches every replica's clients.
//
//   - resources/updated: each mcp_resource_updated goes through the
//     store's pub/sub; every replica (this one too, once, from the
//     channel) tells its own subscribers.
//   - list_changed: the watcher's finding goes through the store with a
//     digest of the new list; a replica tells its clients once per new
//     digest, whether it saw the change itself or heard it from another.
//     Replicas watching the same files (a shared volume, a ConfigMap) all
//     see one edit; their clients hear of it once.
//
// Without a shared store both are delivered here only, as before.

const (
	// resourceUpdatesChannel carries resources/updated between replicas.
	resourceUpdatesChannel = "mcp-bashd:resources/updated"
	// listChangedChannel carries "KIND DIGEST" between replicas.
	listChangedChannel = "mcp-bashd:list_changed"
	// resubscribeEvery is how often a subscription the store refused (it
	// was down) is tried again.
	resubscribeEvery = 2 * time.Second
	// publishTimeout bounds one publish: a store that is down costs a
	// notification this long at most before it is delivered here only.
	publishTimeout = 2 * time.Second
)

// fanOut is the Server's part of the above.
type fanOut struct {
	mu   sync.Mutex
	last map[string]string // kind → digest of the list last told
	// listening: the list_changed subscription is in place, so a
	// publish comes back here.
	listening atomic.Bool
}

// shared is the Server's store when other replicas see it, else nil.
func (s *Server) shared() state.Store {
	if st := s.opt.Store; st != nil && st.Shared() {
		return st
	}
	return nil
}

// follow subscribes fn to channel, trying again every resubscribeEvery
// while the store refuses, until ctx ends; on reports when the
// subscription is in place. (Once in place, the Redis client renews it
// by itself across reconnections.)
func (s *Server) follow(ctx context.Context, store state.Store, channel string, fn func([]byte), on *atomic.Bool) {
	for {
		err := store.Subscribe(ctx, channel, fn)
		if err == nil {
			on.Store(true)
			return
		}
		s.log.Warn("state store: not subscribed; this replica's own notifications are delivered here only until it is",
			zap.String("channel", channel), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(resubscribeEvery):
		}
	}
}

// FanOutResourceUpdates is ForwardResourceUpdates for a deployment: with a
// shared store each update goes through its pub/sub, so every replica's
// subscribers hear it (this one's included, once, from the channel). An
// update the store cannot take is still delivered here: the local
// subscribers lose nothing while Redis is down. With an unshared store it
// is ForwardResourceUpdates.
func (s *Server) FanOutResourceUpdates(ctx context.Context, updates <-chan string, store state.Store) {
	if store == nil || !store.Shared() {
		s.ForwardResourceUpdates(ctx, updates)
		return
	}
	var subscribed atomic.Bool
	go s.follow(ctx, store, resourceUpdatesChannel, func(msg []byte) { s.ResourceUpdated(string(msg)) }, &subscribed)
	drain(ctx, updates, func(uri string) {
		if !subscribed.Load() || s.publish(ctx, store, resourceUpdatesChannel, uri) != nil {
			s.ResourceUpdated(uri)
		}
	})
}

// FanOutListChanged subscribes this replica to the other replicas'
// list_changed until ctx ends; it returns once subscribed (or ctx ended;
// at once without a shared store).
func (s *Server) FanOutListChanged(ctx context.Context) {
	if store := s.shared(); store != nil {
		s.follow(ctx, store, listChangedChannel, func(msg []byte) {
			kind, digest, ok := strings.Cut(string(msg), " ")
			if ok {
				s.tellListChanged(kind, digest)
			}
		}, &s.fan.listening)
	}
}

func (s *Server) publish(ctx context.Context, store state.Store, channel, msg string) error {
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	err := store.Publish(ctx, channel, []byte(msg))
	if err != nil {
		s.log.Warn("state store: not published; delivered on this replica only", zap.String("channel", channel), zap.Error(err))
	}
	return err
}

// ListChanged is the watcher's report that kind's list is now list: every
// replica's clients are told (NotifyListChanged), once per new list. It
// reports whether anyone was told or, with a shared store, whether the
// news went out to the replicas.
func (s *Server) ListChanged(kind string, list []byte) bool {
	store := s.shared()
	if store == nil {
		return s.NotifyListChanged(kind)
	}
	digest := s.listDigest(kind, list)
	if s.fan.listening.Load() && s.publish(s.base, store, listChangedChannel, kind+" "+digest) == nil {
		return true
	}
	return s.tellListChanged(kind, digest)
}

// tellListChanged tells this replica's clients unless digest is what
// they were last told of kind.
func (s *Server) tellListChanged(kind, digest string) bool {
	s.fan.mu.Lock()
	if s.fan.last == nil {
		s.fan.last = map[string]string{}
	}
	seen := s.fan.last[kind] == digest
	s.fan.last[kind] = digest
	s.fan.mu.Unlock()
	if seen {
		return false
	}
	return s.NotifyListChanged(kind)
}

// listDigest names a list as clients see it; for tools, the script's set
// of functions counts too (a tool gaining or losing its function changes
// what tools/call does).
func (s *Server) listDigest(kind string, list []byte) string {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(list)
	if kind == "tools" && s.opt.Snapshot != nil {
		if snap := s.opt.Snapshot(); snap != nil {
			fns := make([]string, 0, len(snap.Functions))
			for f := range snap.Functions {
				fns = append(fns, f)
			}
			slices.Sort(fns)
			for _, f := range fns {
				h.Write([]byte{0})
				h.Write([]byte(f))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
