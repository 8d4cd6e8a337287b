package ingest

import (
	"net/netip"
)

// blocked are the address ranges a fetch never connects to, with the
// reason a refusal names. Checked after DNS resolution, at dial time, for
// every connection (redirects included), so neither a name that resolves
// inward nor a DNS answer that changes between a check and the connection
// (DNS rebinding) reaches them.
var blocked = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "a cloud metadata service"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "a cloud metadata service"},
	{netip.MustParsePrefix("100.100.100.200/32"), "a cloud metadata service"},
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified (this-network) address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT (shared) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/128"), "an unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique-local (private) address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Policy says which addresses a fetch may connect to. The zero Policy
// refuses every blocked range; Allow opens ranges again (a test server on
// 127.0.0.1, an intranet wiki on 10.1.2.0/24). An allowed range wins over
// a blocked one.
type Policy struct {
	Allow []netip.Prefix
}

// Check returns nil when a fetch may connect to addr, else an Error with
// ReasonAddressForbidden naming what kind of address it is (and not the
// address itself when it was found through DNS: that is the operator's
// network, not the caller's business; see Fetch).
func (p Policy) Check(addr netip.Addr) error {
	if what := p.forbidden(addr); what != "" {
		return refuse(ReasonAddressForbidden, map[string]any{"address_class": what}, "The host %s", forbiddenTail(what))
	}
	return nil
}

// forbidden says what kind of blocked address addr is, "" when allowed.
func (p Policy) forbidden(addr netip.Addr) string {
	if !addr.IsValid() {
		return "an invalid address"
	}
	addr = addr.WithZone("")
	for _, a := range p.Allow {
		if a.Contains(addr) || addr.Is4In6() && a.Contains(addr.Unmap()) {
			return ""
		}
	}
	return blockedClass(addr, 0)
}

// blockedClass is the class of a blocked addr ("" when public); IPv6 forms
// that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that
// address.
func blockedClass(addr netip.Addr, depth int) string {
	if addr.Is4In6() {
		return blockedClass(addr.Unmap(), depth+1)
	}
	if addr.Is6() && depth == 0 {
		b := addr.As16()
		switch {
		case nat64.Contains(addr):
			return blockedClass(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), depth+1)
		case sixToFour.Contains(addr):
			if c := blockedClass(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), depth+1); c != "" {
				return c
			}
		}
	}
	for _, b := range blocked {
		if b.prefix.Contains(addr) {
			return b.what
		}
	}
	return ""
}

// forbiddenTail ends a sentence about a host whose address is of class what.
func forbiddenTail(what string) string {
	return "resolves to " + what + ", which Sheaf does not fetch from (it would let a call reach the server's own network)."
}
