package main

import (
	"net"
	"sync"
	"time"
)

// bucket is a token bucket: a link of a given throughput in bytes per
// second, shared by every connection that writes through it. A writer
// reserves its bytes (the tokens may go negative) and sleeps until the
// link would have carried them, so reservations from several goroutines
// queue up in the order they were made, as on one wire.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // bytes per second; 0 means unlimited
	burst  float64 // most tokens an idle link saves up
	tokens float64
	last   time.Time
}

// chunk is the most bytes written in one reservation; the burst is a few
// chunks, so that a sleep that overshoots by a few ms loses no throughput.
const chunk = 1024

func newBucket(rate float64) *bucket {
	return &bucket{rate: rate, burst: 4 * chunk, tokens: 4 * chunk, last: time.Now()}
}

// reserve takes n bytes' worth of tokens and returns how long to wait
// before writing them.
func (b *bucket) reserve(n int) time.Duration {
	if b == nil || b.rate <= 0 {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.tokens += now.Sub(b.last).Seconds() * b.rate
	if b.tokens > b.burst {
		b.tokens = b.burst
	}
	b.last = now
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * 1e9)
}

// limitedConn is a TCP connection whose writes go through a bucket: the
// emulated link. Reads are not limited (the peer's writes are).
type limitedConn struct {
	net.Conn
	link *bucket
}

// Write paces p through the link in chunks.
func (c limitedConn) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), chunk)
		if d := c.link.reserve(n); d > 0 {
			time.Sleep(d)
		}
		m, err := c.Conn.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}
