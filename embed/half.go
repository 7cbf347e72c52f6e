package embed

import (
	"encoding/binary"
	"fmt"
	"math"

	ort "github.com/yalue/onnxruntime_go"
)

// halfOutput describes a float16 model output (an fp16 export without keep_io_types). Kairos
// reads it into float32 itself. onnxruntime_go copies an ORT-allocated float16 output into a
// byte slice of one byte per element (half the data), so the output buffer is allocated here,
// at its full size, which needs every dimension but batch (and, for token embeddings, the
// sequence) to be static.
type halfOutput struct {
	dims []int64 // as the model declares them; <= 0 is dynamic
}

// newHalfOutput checks that an output's shape can be allocated before the run: dimension 0 is
// the batch, dimension 1 of a rank-3 output the sequence, and the rest must be static.
func newHalfOutput(onnxPath, name string, dims ort.Shape) (*halfOutput, error) {
	for i, d := range dims {
		if d <= 0 && i != 0 && !(i == 1 && len(dims) == 3) {
			return nil, fmt.Errorf("%s: output %s is float16 with dynamic dimension %d (shape %v); Kairos reads float16 outputs only with static feature dimensions: export with float32 outputs (keep_io_types=True)", onnxPath, name, i, dims)
		}
	}
	return &halfOutput{dims: append([]int64(nil), dims...)}, nil
}

// tensor allocates the output of a batch of n rows of seq tokens.
func (h *halfOutput) tensor(n, seq int) (*ort.CustomDataTensor, error) {
	shape := make(ort.Shape, len(h.dims))
	for i, d := range h.dims {
		switch {
		case i == 0:
			shape[i] = int64(n)
		case i == 1 && len(h.dims) == 3:
			shape[i] = int64(seq)
		default:
			shape[i] = d
		}
	}
	return ort.NewCustomDataTensor(shape, make([]byte, 2*shape.FlattenedSize()), ort.TensorElementDataTypeFloat16)
}

// decode converts little-endian IEEE half-precision values to float32 (exactly: every half is
// a float32).
func (h *halfOutput) decode(t *ort.CustomDataTensor) batchOutput {
	raw := t.GetData()
	s := t.GetShape()
	out := batchOutput{data: make([]float32, len(raw)/2), shape: make([]int, len(s))}
	for i := range out.data {
		out.data[i] = halfToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	for i, d := range s {
		out.shape[i] = int(d)
	}
	return out
}

// halfToFloat32 widens one IEEE 754 binary16 value.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0: // signed zero
		return math.Float32frombits(sign)
	}
	// subnormal half: normalise into a float32 normal
	e := uint32(113)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}
