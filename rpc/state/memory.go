package state

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"
)

// Memory is a Store in this process only: one replica, nothing started.
type Memory struct {
	mu   sync.Mutex
	keys map[string]memEntry
	subs map[string]map[*memSub]struct{}
	now  func() time.Time
}

type memEntry struct {
	value   []byte
	expires time.Time
}

type memSub struct{ fn func([]byte) }

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{keys: map[string]memEntry{}, subs: map[string]map[*memSub]struct{}{}, now: time.Now}
}

// live returns key's entry unless it expired (then it is dropped). m.mu held.
func (m *Memory) live(key string) (memEntry, bool) {
	e, ok := m.keys[key]
	if ok && !e.expires.IsZero() && !m.now().Before(e.expires) {
		delete(m.keys, key)
		return memEntry{}, false
	}
	return e, ok
}

// expiry is when a key stored now for ttl expires; zero for never.
func (m *Memory) expiry(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return m.now().Add(ttl)
}

func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys[key] = memEntry{append([]byte(nil), value...), m.expiry(ttl)}
	return nil
}

func (m *Memory) SetNX(_ context.Context, key string, value []byte, ttl time.Duration) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.live(key); ok {
		return append([]byte(nil), e.value...), nil
	}
	m.keys[key] = memEntry{append([]byte(nil), value...), m.expiry(ttl)}
	return append([]byte(nil), value...), nil
}

func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live(key)
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), e.value...), true, nil
}

func (m *Memory) Del(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.keys, key)
	return nil
}

func (m *Memory) Keys(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.keys {
		if strings.HasPrefix(k, prefix) {
			if _, ok := m.live(k); ok {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// Publish calls each subscriber in turn, outside the lock (a subscriber may
// use the store).
func (m *Memory) Publish(_ context.Context, channel string, msg []byte) error {
	m.mu.Lock()
	var fns []func([]byte)
	for s := range m.subs[channel] {
		fns = append(fns, s.fn)
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn(append([]byte(nil), msg...))
	}
	return nil
}

func (m *Memory) Subscribe(ctx context.Context, channel string, fn func([]byte)) error {
	s := &memSub{fn}
	m.mu.Lock()
	if m.subs[channel] == nil {
		m.subs[channel] = map[*memSub]struct{}{}
	}
	m.subs[channel][s] = struct{}{}
	m.mu.Unlock()
	context.AfterFunc(ctx, func() {
		m.mu.Lock()
		delete(m.subs[channel], s)
		m.mu.Unlock()
	})
	return nil
}

func (m *Memory) Ping(context.Context) error { return nil }
func (m *Memory) Shared() bool               { return false }
func (m *Memory) Close() error               { return nil }
