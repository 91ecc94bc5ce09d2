package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store shared by every replica pointing at one Redis database.
// go-redis reconnects by itself; while Redis is down each call fails with
// ErrUnavailable and subscriptions resume once it is back.
type Redis struct {
	c *redis.Client
}

// quiet drops go-redis's own log lines (a stdlib logger on stderr, not
// ours): a store that is down is reported by /healthz and by the errors
// of what needed it, in the daemon's log format.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func newRedis(rawURL, password string) (*Redis, error) {
	redis.SetLogger(quiet{})
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--state: %v", err)
	}
	if password != "" {
		opt.Password = password
	}
	// Short timeouts: a request waiting on a store that is gone answers an
	// error soon instead of hanging.
	opt.DialTimeout = 2 * time.Second
	opt.ReadTimeout = 2 * time.Second
	opt.WriteTimeout = 2 * time.Second
	opt.MaxRetries = 1
	return &Redis{c: redis.NewClient(opt)}, nil
}

// never maps a ttl of 0 or less to go-redis's "no expiry" (0): a negative
// one would be KEEPTTL there.
func never(ttl time.Duration) time.Duration { return max(ttl, 0) }

func unavailable(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return unavailable(r.c.Set(ctx, key, value, never(ttl)).Err())
}

func (r *Redis) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) ([]byte, error) {
	// SET NX GET: one round trip, the standing value whichever replica won.
	old, err := r.c.SetArgs(ctx, key, value, redis.SetArgs{Mode: "NX", Get: true, TTL: never(ttl)}).Bytes()
	if errors.Is(err, redis.Nil) {
		return value, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return old, nil
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := r.c.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	return v, true, nil
}

func (r *Redis) Del(ctx context.Context, key string) error {
	return unavailable(r.c.Del(ctx, key).Err())
}

// Keys uses SCAN, not KEYS: it does not block Redis on a large database.
func (r *Redis) Keys(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	iter := r.c.Scan(ctx, 0, escapeGlob(prefix)+"*", 256).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}

func escapeGlob(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}

func (r *Redis) Publish(ctx context.Context, channel string, msg []byte) error {
	return unavailable(r.c.Publish(ctx, channel, msg).Err())
}

// Subscribe waits for Redis to confirm the subscription, so a Publish after
// it returns is delivered.
func (r *Redis) Subscribe(ctx context.Context, channel string, fn func([]byte)) error {
	ps := r.c.Subscribe(ctx, channel)
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return unavailable(err)
	}
	ch := ps.Channel()
	go func() {
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-ch:
				if !ok {
					return
				}
				fn([]byte(m.Payload))
			}
		}
	}()
	return nil
}

func (r *Redis) Ping(ctx context.Context) error { return unavailable(r.c.Ping(ctx).Err()) }
func (r *Redis) Shared() bool                   { return true }
func (r *Redis) Close() error                   { return r.c.Close() }
