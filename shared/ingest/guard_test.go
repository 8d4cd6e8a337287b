package ingest

import (
	"net/netip"
	"testing"
)

func TestPolicy(t *testing.T) {
	blockedAddrs := []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "169.254.1.1", "100.64.0.1", "100.127.255.254", "100.100.100.200", "0.0.0.0",
		"224.0.0.1", "255.255.255.255", "192.0.0.192", "198.18.0.1",
		"::1", "::", "fe80::1", "fc00::1", "fd00:ec2::254", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", // IPv4-mapped
		"64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", // NAT64 of the metadata service and loopback
		"2002:a9fe:a9fe::1", "2002:7f00:1::1", // 6to4 of the same
		"::127.0.0.1", "2001:db8::1", "fec0::1",
	}
	for _, s := range blockedAddrs {
		if err := (Policy{}).Check(netip.MustParseAddr(s)); ReasonOf(err) != ReasonAddressForbidden {
			t.Errorf("%s: %v, want refused", s, err)
		}
	}
	for _, s := range []string{"93.184.216.34", "1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "100.63.255.255", "172.32.0.1", "::ffff:8.8.8.8"} {
		if err := (Policy{}).Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s: %v, want allowed", s, err)
		}
	}
	p := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.1.0.0/16")}}
	for _, s := range []string{"127.0.0.1", "::ffff:127.0.0.1", "10.1.2.3"} {
		if err := p.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("allow-listed %s: %v", s, err)
		}
	}
	for _, s := range []string{"127.0.0.2", "10.2.0.1", "169.254.169.254"} {
		if err := p.Check(netip.MustParseAddr(s)); err == nil {
			t.Errorf("%s allowed by an allow-list that does not name it", s)
		}
	}
	if err := (Policy{}).Check(netip.MustParseAddr("169.254.169.254")); err != nil {
		if e := err.(*Error); e.Fields["address_class"] != "a cloud metadata service" {
			t.Errorf("metadata class: %v", e.Fields)
		}
	}
}
