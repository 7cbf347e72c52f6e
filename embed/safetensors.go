package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// safeTensor is one tensor of a safetensors file: its dtype (F32, F16, BF16, I64, I32), shape
// and raw little-endian bytes.
type safeTensor struct {
	DType string
	Shape []int
	Data  []byte
}

// maxSafetensorsHeader bounds the JSON header (the format's own limit is 100 MB).
const maxSafetensorsHeader = 100 << 20

// readSafetensors reads every tensor of the safetensors file at path: an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte range relative to
// the end of the header, then the data. Ranges and sizes are checked against the file.
func readSafetensors(path string) (map[string]safeTensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("%s: %d bytes, too short for a safetensors header", path, len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxSafetensorsHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("%s: header length %d exceeds the file (%d bytes)", path, n, len(b))
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("%s: header at byte 8: %w", path, err)
	}
	data := b[8+n:]
	out := make(map[string]safeTensor, len(header))
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var h struct {
			DType   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, name, err)
		}
		size := map[string]int{"F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4}[h.DType]
		if size == 0 {
			return nil, fmt.Errorf("%s: tensor %q: unsupported dtype %q", path, name, h.DType)
		}
		count := 1
		for _, d := range h.Shape {
			if d < 0 || (d > 0 && count > math.MaxInt32/d) {
				return nil, fmt.Errorf("%s: tensor %q: bad shape %v", path, name, h.Shape)
			}
			count *= d
		}
		lo, hi := h.Offsets[0], h.Offsets[1]
		if lo < 0 || hi < lo || hi > len(data) || hi-lo != count*size {
			return nil, fmt.Errorf("%s: tensor %q: byte range %d-%d does not hold %v %s in %d data bytes",
				path, name, lo, hi, h.Shape, h.DType, len(data))
		}
		out[name] = safeTensor{DType: h.DType, Shape: h.Shape, Data: data[lo:hi]}
	}
	return out, nil
}

// floats decodes a float tensor to float32 (F16 and BF16 exactly: both widen losslessly).
func (t safeTensor) floats() ([]float32, error) {
	n := len(t.Data) / map[string]int{"F32": 4, "F16": 2, "BF16": 2}[t.DType]
	out := make([]float32, n)
	switch t.DType {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
	case "F16":
		for i := range out {
			out[i] = halfToFloat32(binary.LittleEndian.Uint16(t.Data[2*i:]))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.Data[2*i:])) << 16)
		}
	default:
		return nil, fmt.Errorf("dtype %s is not a float type", t.DType)
	}
	return out, nil
}

// ints decodes an integer tensor.
func (t safeTensor) ints() ([]int64, error) {
	switch t.DType {
	case "I64":
		out := make([]int64, len(t.Data)/8)
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
		}
		return out, nil
	case "I32":
		out := make([]int64, len(t.Data)/4)
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(t.Data[4*i:])))
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not an integer type", t.DType)
}
