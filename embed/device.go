package embed

import (
	"fmt"
	"strconv"
	"strings"
)

// Device is where ONNX Runtime runs a model: the CPU (the zero value) or one CUDA GPU.
// It is a flag.Value, so a command line sets it with --device cpu, cuda or cuda:N.
type Device struct {
	// CUDA selects the GPU; false is the CPU.
	CUDA bool
	// ID is the CUDA device's ordinal (cuda:N), 0 for plain "cuda".
	ID int
}

// DeviceCPU and DeviceCUDA are the device names ParseDevice accepts (plus "cuda:N").
const (
	DeviceCPU  = "cpu"
	DeviceCUDA = "cuda"
)

// maxDeviceID bounds cuda:N: a larger ordinal is a typo, and refusing it keeps the number an int
// on every platform.
const maxDeviceID = 1023

// ParseDevice reads "cpu", "cuda" or "cuda:N" (N a decimal ordinal, 0 to 1023). Anything else,
// case included ("CUDA", "gpu", "cuda:", "cuda:-1", "cuda:01x"), is an error that says what is
// accepted.
func ParseDevice(s string) (Device, error) {
	switch s {
	case DeviceCPU:
		return Device{}, nil
	case DeviceCUDA:
		return Device{CUDA: true}, nil
	}
	rest, ok := strings.CutPrefix(s, DeviceCUDA+":")
	if ok && rest != "" && len(rest) <= 4 && strings.Trim(rest, "0123456789") == "" {
		if n, err := strconv.Atoi(rest); err == nil && n <= maxDeviceID {
			return Device{CUDA: true, ID: n}, nil
		}
	}
	return Device{}, fmt.Errorf("device %q: want cpu, cuda or cuda:N (N from 0 to %d)", s, maxDeviceID)
}

// String returns the name ParseDevice reads back: cpu, cuda (device 0) or cuda:N.
func (d Device) String() string {
	switch {
	case !d.CUDA:
		return DeviceCPU
	case d.ID == 0:
		return DeviceCUDA
	}
	return DeviceCUDA + ":" + strconv.Itoa(d.ID)
}

// Set implements flag.Value.
func (d *Device) Set(s string) error {
	v, err := ParseDevice(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
