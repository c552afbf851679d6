package push_test

import (
	"net/netip"
	"testing"

	"github.com/goa2a/a2a/push"
)

// specialPurpose is the IANA IPv4 and IPv6 Special-Purpose Address
// Registries (RFC 6890 and its updates, as of 2025), with each entry's
// "Globally Reachable" column: true, false, or "" where the registry says
// N/A (deprecated entries).
var specialPurpose = []struct {
	prefix, name, global string
}{
	{"0.0.0.0/8", "this network", "false"},
	{"0.0.0.0/32", "this host on this network", "false"},
	{"10.0.0.0/8", "private-use", "false"},
	{"100.64.0.0/10", "shared address space", "false"},
	{"127.0.0.0/8", "loopback", "false"},
	{"169.254.0.0/16", "link local", "false"},
	{"172.16.0.0/12", "private-use", "false"},
	{"192.0.0.0/24", "IETF protocol assignments", "false"},
	{"192.0.0.0/29", "IPv4 service continuity prefix", "false"},
	{"192.0.0.8/32", "IPv4 dummy address", "false"},
	{"192.0.0.9/32", "port control protocol anycast", "true"},
	{"192.0.0.10/32", "traversal using relays around NAT anycast", "true"},
	{"192.0.0.170/32", "NAT64/DNS64 discovery", "false"},
	{"192.0.0.171/32", "NAT64/DNS64 discovery", "false"},
	{"192.0.2.0/24", "documentation (TEST-NET-1)", "false"},
	{"192.31.196.0/24", "AS112-v4", "true"},
	{"192.52.193.0/24", "AMT", "true"},
	{"192.88.99.0/24", "deprecated (6to4 relay anycast)", ""},
	{"192.168.0.0/16", "private-use", "false"},
	{"192.175.48.0/24", "direct delegation AS112 service", "true"},
	{"198.18.0.0/15", "benchmarking", "false"},
	{"198.51.100.0/24", "documentation (TEST-NET-2)", "false"},
	{"203.0.113.0/24", "documentation (TEST-NET-3)", "false"},
	{"240.0.0.0/4", "reserved", "false"},
	{"255.255.255.255/32", "limited broadcast", "false"},

	{"::1/128", "loopback address", "false"},
	{"::/128", "unspecified address", "false"},
	{"::ffff:0:0/96", "IPv4-mapped address", "false"},
	{"64:ff9b::/96", "IPv4-IPv6 translation", "true"},
	{"64:ff9b:1::/48", "IPv4-IPv6 translation (local use)", "false"},
	{"100::/64", "discard-only address block", "false"},
	{"100:0:0:1::/64", "dummy IPv6 prefix", "false"},
	{"2001::/23", "IETF protocol assignments", "false"},
	{"2001::/32", "TEREDO", ""},
	{"2001:1::1/128", "port control protocol anycast", "true"},
	{"2001:1::2/128", "traversal using relays around NAT anycast", "true"},
	{"2001:1::3/128", "DNS-SD service registration protocol anycast", "true"},
	{"2001:2::/48", "benchmarking", "false"},
	{"2001:3::/32", "AMT", "true"},
	{"2001:4:112::/48", "AS112-v6", "true"},
	{"2001:10::/28", "deprecated (previously ORCHID)", ""},
	{"2001:20::/28", "ORCHIDv2", "true"},
	{"2001:30::/28", "drone remote ID protocol entity tags", "true"},
	{"2001:db8::/32", "documentation", "false"},
	{"2002::/16", "6to4", ""},
	{"2620:4f:8000::/48", "direct delegation AS112 service", "true"},
	{"3fff::/20", "documentation", "false"},
	{"5f00::/16", "segment routing (SRv6) SIDs", "false"},
	{"fc00::/7", "unique-local", "false"},
	{"fe80::/10", "link-local unicast", "false"},
}

// TestGuardSpecialPurposeRegistries walks the registries: the first and
// the last address of every entry that is not globally reachable (and of
// the deprecated ones) is refused by a guard without an allow-list.
func TestGuardSpecialPurposeRegistries(t *testing.T) {
	for _, e := range specialPurpose {
		if e.global == "true" {
			continue
		}
		p := netip.MustParsePrefix(e.prefix)
		for _, a := range []netip.Addr{p.Addr(), lastAddr(p)} {
			if push.Refusal(a) == "" {
				t.Errorf("%s (%s, in %s) is not refused", a, e.name, e.prefix)
			}
		}
	}
	// The finding that started this: an IPv4-translated address of
	// loopback, as a SIIT translator would route it.
	if push.Refusal(netip.MustParseAddr("::ffff:0:127.0.0.1")) == "" {
		t.Error("::ffff:0:127.0.0.1 is not refused")
	}
}

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	bits := p.Bits()
	for i := range b {
		for j := 7; j >= 0; j-- {
			if i*8+(7-j) >= bits {
				b[i] |= 1 << j
			}
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
