package ratelimit_test

import (
	"net/netip"
	"testing"
	"time"

	"oficina/tenant/ratelimit"
)

// Part 5 item 3: repeated failures from one address within a minute are
// refused (with the wait until the oldest failure leaves); other addresses
// are unaffected; the same IPv6 /64 counts as one source.
func TestThrottleRefusesAnAddressAfterRepeatedFailures(t *testing.T) {
	t.Parallel()
	clk := newClock()
	th := ratelimit.NewThrottle(3, time.Minute, clk.Now)
	ip := netip.MustParseAddr("203.0.113.7")
	t0 := clk.Now()
	for i := range 3 {
		clk.Set(t0.Add(time.Duration(i) * 10 * time.Second))
		if _, ok := th.Check(ip); !ok {
			t.Fatalf("refused before the ceiling (failure %d)", i)
		}
		th.Failed(ip)
	}
	clk.Set(t0.Add(25 * time.Second))
	if wait, ok := th.Check(ip); ok || wait != 35*time.Second {
		t.Fatalf("after 3 failures: ok=%v wait=%v", ok, wait)
	}
	if _, ok := th.Check(netip.MustParseAddr("203.0.113.8")); !ok {
		t.Fatal("another address was refused")
	}
	clk.Set(t0.Add(60 * time.Second))
	if _, ok := th.Check(ip); !ok {
		t.Fatal("still refused once the oldest failure left the window")
	}

	a, b := netip.MustParseAddr("2001:db8:1:2::1"), netip.MustParseAddr("2001:db8:1:2:ffff::9")
	for range 3 {
		th.Failed(a)
	}
	if _, ok := th.Check(b); ok {
		t.Fatal("an address of the same /64 was not refused")
	}
	if _, ok := th.Check(netip.MustParseAddr("2001:db8:1:3::1")); !ok {
		t.Fatal("another /64 was refused")
	}
}

// A nil throttle (turned off) allows everything.
func TestNilThrottleAllows(t *testing.T) {
	t.Parallel()
	var th *ratelimit.Throttle
	th.Failed(netip.MustParseAddr("192.0.2.1"))
	if _, ok := th.Check(netip.MustParseAddr("192.0.2.1")); !ok {
		t.Fatal("nil throttle refused")
	}
}
