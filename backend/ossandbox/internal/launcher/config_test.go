package launcher

import (
	"fmt"
	"reflect"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/paigasus/helikon/internal/landlock"
)

func sampleConfig() *Config {
	return &Config{
		Root: "/work/project", Tmp: "/tmp/helikon-os-tmp-1000", TmpFS: true, TmpSize: 1 << 30,
		RootRW: true, PidNS: true, LastCap: 40, ABI: 6,
		Rules: landlock.Config{
			Rules: []landlock.Rule{
				{Path: "/work/project", Access: landlock.ReadWrite},
				{Path: "/lib64", Access: landlock.ReadOnly, Optional: true},
			},
			ConnectTCP: []uint16{3128, 65535},
		},
		Filter:   []bpf.RawInstruction{{Op: 0x20, K: 4}, {Op: 0x15, Jt: 1, Jf: 2, K: 0xc000003e}, {Op: 0x6, K: 0x7fff0000}},
		ReadOnly: []string{".helikon", ".claude", ".config/helikon"},
		Writable: []string{"/tmp/helikon-home-0/1-abc", "/root/.cache/helikon/caches/p/go-build"},
		Overlays: []Overlay{{Lower: "/root/go/pkg/mod", Upper: "/c/.upper/go-mod", Work: "/c/.work/go-mod", Target: "/c/go-mod"}},
		Net:      NetProxy,
	}
}

// TestConfigRoundTrip: the launcher decodes exactly the configuration the
// backend encoded, every field of it.
func TestConfigRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Config
	}{
		{"full", sampleConfig()},
		{"zero", &Config{}},
		{"loopback", &Config{Serve: true, Net: NetLoopback}},
		{"probe with network", &Config{Probe: true, TmpRW: true, Rules: landlock.Config{AllowNetwork: true}, TmpSize: -1, LastCap: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.c.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.c) {
				t.Fatalf("Decode(Encode(c)) = %+v; want %+v", got, tc.c)
			}
		})
	}
}

// TestDecodeRejectsMalformed: a configuration that is cut short, carries
// more than the encoding, or holds values out of range is refused, so the
// launcher never confines a command by a half-read configuration.
func TestDecodeRejectsMalformed(t *testing.T) {
	good := sampleConfig().Encode()
	cases := map[string][]byte{
		"empty":          nil,
		"other version":  append([]byte{configVersion + 1}, good[1:]...),
		"unknown flag":   append([]byte{good[0], 0x80}, good[2:]...),
		"trailing byte":  append(append([]byte(nil), good...), 0),
		"net mode":       append(append([]byte(nil), good[:len(good)-1]...), NetProxy+1),
		"huge count":     {configVersion, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"port over 16 b": {configVersion, 0, 0, 0, 0, 0, 0, 0, 1, 0x80, 0x80, 0x04, 0},
		"bad optional":   {configVersion, 0, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0},
		"long varint":    {configVersion, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"cap over int32": {configVersion, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0, 0, 0},
	}
	for i := 1; i < len(good); i += 7 {
		cases[fmt.Sprintf("cut at %d", i)] = good[:i]
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if c, err := Decode(b); err == nil {
				t.Fatalf("Decode(%x) = %+v; want an error", b, c)
			}
		})
	}
}

// FuzzDecode: Decode never panics, and what it accepts encodes back to the
// same bytes (the encoding has one form per configuration).
func FuzzDecode(f *testing.F) {
	f.Add(sampleConfig().Encode())
	f.Add((&Config{}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		if got := c.Encode(); string(got) != string(b) {
			t.Fatalf("Encode(Decode(%x)) = %x", b, got)
		}
	})
}
