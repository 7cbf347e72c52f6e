package embed

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestParseDevice(t *testing.T) {
	tests := []struct {
		in      string
		want    Device
		wantErr bool
	}{
		{"cpu", Device{}, false},
		{"cuda", Device{CUDA: true}, false},
		{"cuda:0", Device{CUDA: true}, false},
		{"cuda:1", Device{CUDA: true, ID: 1}, false},
		{"cuda:1023", Device{CUDA: true, ID: 1023}, false},
		{"", Device{}, true},
		{"CPU", Device{}, true},
		{"CUDA", Device{}, true},
		{"gpu", Device{}, true},
		{"cpu:0", Device{}, true},
		{"cuda:", Device{}, true},
		{"cuda:-1", Device{}, true},
		{"cuda:+1", Device{}, true},
		{"cuda: 1", Device{}, true},
		{"cuda:1x", Device{}, true},
		{"cuda:1024", Device{}, true},
		{"cuda:99999999999999999999", Device{}, true},
		{"cuda1", Device{}, true},
		{" cuda", Device{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDevice(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseDevice(%q) = %v, %v; want error %v", tc.in, got, err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "want cpu, cuda or cuda:N") || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) {
					t.Errorf("error %q does not name the value and what is accepted", err)
				}
				return
			}
			if got != tc.want {
				t.Errorf("ParseDevice(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// --device is parsed by the flag package through Device.Set, and Options.Flags registers it with
// the CPU as its default.
func TestDeviceFlag(t *testing.T) {
	tests := []struct {
		args    []string
		want    Device
		wantErr string
	}{
		{nil, Device{}, ""},
		{[]string{"--device", "cpu"}, Device{}, ""},
		{[]string{"--device", "cuda"}, Device{CUDA: true}, ""},
		{[]string{"--device=cuda:1"}, Device{CUDA: true, ID: 1}, ""},
		{[]string{"--device", "cuda:x"}, Device{}, `invalid value "cuda:x" for flag -device`},
		{[]string{"--device", "tpu"}, Device{}, "want cpu, cuda or cuda:N"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var o Options
			o.Flags(fs)
			err := fs.Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error %v, want one containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Device != tc.want {
				t.Errorf("Device = %+v, want %+v", o.Device, tc.want)
			}
			if d := fs.Lookup("device").DefValue; d != DeviceCPU {
				t.Errorf("--device default %q, want %q", d, DeviceCPU)
			}
		})
	}
}

// A device the options cannot run is refused before any library is loaded.
func TestValidateDevice(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"cpu go", Options{ModelDir: "m", Backend: BackendGo}, ""},
		{"cuda ort", Options{ModelDir: "m", Backend: BackendORT, Device: Device{CUDA: true, ID: 2}}, ""},
		{"cuda auto", Options{ModelDir: "m", Device: Device{CUDA: true}}, ""},
		{"cuda go", Options{ModelDir: "m", Backend: BackendGo, Device: Device{CUDA: true}}, "needs backend ort"},
		{"negative ordinal", Options{ModelDir: "m", Device: Device{CUDA: true, ID: -1}}, "device ordinal -1"},
		{"ordinal on cpu", Options{ModelDir: "m", Device: Device{ID: 1}}, "device ordinal 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// Every accepted name reads back as the same device, and nothing panics.
func FuzzParseDevice(f *testing.F) {
	for _, s := range []string{"cpu", "cuda", "cuda:0", "cuda:7", "cuda:1023", "cuda:1024", "cuda:-1", "cuda:", "gpu", "cuda:0x1", "cuda:٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDevice(s)
		if err != nil {
			if d != (Device{}) {
				t.Fatalf("ParseDevice(%q) failed but returned %+v", s, d)
			}
			return
		}
		if d.ID < 0 || d.ID > maxDeviceID || (!d.CUDA && d.ID != 0) {
			t.Fatalf("ParseDevice(%q) = %+v: out of range", s, d)
		}
		back, err := ParseDevice(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDevice(%q) = %+v, String %q reads back as %+v, %v", s, d, d.String(), back, err)
		}
	})
}
