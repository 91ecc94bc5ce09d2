package state

import (
	"context"
	"testing"
	"time"
)

// The presence contract on both stores: absent until marked, present
// after, absent again once removed; the renewal interval leaves room for
// two lost renewals inside the TTL.
func presenceContract(t *testing.T, s Store) {
	ctx := context.Background()
	if ok, err := Present(ctx, s, "r1"); ok || err != nil {
		t.Fatalf("before MarkPresent: %v %v", ok, err)
	}
	if err := MarkPresent(ctx, s, "r1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := Present(ctx, s, "r1"); !ok || err != nil {
		t.Fatalf("after MarkPresent: %v %v", ok, err)
	}
	if ok, _ := Present(ctx, s, "r2"); ok {
		t.Fatal("another replica reads as present")
	}
	if err := Absent(ctx, s, "r1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := Present(ctx, s, "r1"); ok {
		t.Fatal("present after Absent")
	}
}

func TestPresenceMemory(t *testing.T) {
	if PresenceTTL < 3*PresenceEvery {
		t.Fatalf("PresenceTTL %v leaves no room for two lost renewals every %v", PresenceTTL, PresenceEvery)
	}
	m := NewMemory()
	presenceContract(t, m)
	// The key runs out PresenceTTL after the last renewal.
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	MarkPresent(context.Background(), m, "r3")
	now = now.Add(PresenceTTL - time.Millisecond)
	if ok, _ := Present(context.Background(), m, "r3"); !ok {
		t.Fatal("gone before its TTL")
	}
	now = now.Add(time.Millisecond)
	if ok, _ := Present(context.Background(), m, "r3"); ok {
		t.Fatal("present after its TTL without a renewal")
	}
}

func TestPresenceRedis(t *testing.T) {
	addr, _ := startRedis(t, "")
	s := openRedis(t, addr, "")
	presenceContract(t, s)
	ctx := context.Background()
	MarkPresent(ctx, s, "r4")
	if ttl := s.(*Redis).c.TTL(ctx, PresenceKey("r4")).Val(); ttl <= 0 || ttl > PresenceTTL {
		t.Fatalf("presence TTL %v, want (0, %v]", ttl, PresenceTTL)
	}
}
