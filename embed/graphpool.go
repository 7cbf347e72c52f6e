package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Pooling inside the ONNX graph. On a GPU the model's token embeddings, [n, seq, dim] float32
// (70 MB for 256 passages of 180 tokens), were copied back to the host batch after batch and
// pooled there: the copy, not the model, set the rate (an H200 ran the MiniLM-L6 shape at 11,925
// passages/s with the GPU mostly idle). poolInGraph appends the pooling to the graph, so the
// device reduces the tokens and only [n, dim] crosses the bus. The arithmetic is the host's
// (masked mean, or the first token), in float32 on the device instead of float64 on the host.
//
// The rewrite works on the protobuf wire format (google.golang.org/protobuf/encoding/protowire)
// with the field numbers of onnx.proto, so no generated ONNX code is needed: the model's other
// fields are copied byte for byte and only the graph's outputs change.

// pooledOutput is the name of the output poolInGraph adds.
const pooledOutput = "kairos_pooled_embedding"

// onnx.proto field numbers used here.
const (
	modelOpsetImport = 8 // ModelProto.opset_import
	modelGraph       = 7 // ModelProto.graph
	opsetDomain      = 1 // OperatorSetIdProto.domain
	opsetVersion     = 2 // OperatorSetIdProto.version
	graphNode        = 1 // GraphProto.node
	graphInitializer = 5 // GraphProto.initializer
	graphInput       = 11
	graphOutput      = 12
	valueName        = 1 // ValueInfoProto.name
	valueType        = 2 // ValueInfoProto.type
	typeTensor       = 1 // TypeProto.tensor_type
	tensorElemType   = 1 // TypeProto.Tensor.elem_type
	tensorShape      = 2 // TypeProto.Tensor.shape
	shapeDim         = 1 // TensorShapeProto.dim
	dimValue         = 1 // TensorShapeProto.Dimension.dim_value
	dimParam         = 2 // TensorShapeProto.Dimension.dim_param
	tpDims           = 1 // TensorProto.dims
	tpDataType       = 2 // TensorProto.data_type
	tpName           = 8 // TensorProto.name
	tpRawData        = 9 // TensorProto.raw_data
	tpDataLocation   = 14
	nodeInput        = 1 // NodeProto.input
	nodeOutput       = 2 // NodeProto.output
	nodeName         = 3 // NodeProto.name
	nodeOpType       = 4 // NodeProto.op_type
	nodeAttribute    = 5 // NodeProto.attribute
	attrName         = 1 // AttributeProto.name
	attrI            = 3 // AttributeProto.i
	attrType         = 20
	attrTypeInt      = 2 // AttributeProto.AttributeType.INT
	attrTypeInts     = 7 // AttributeProto.AttributeType.INTS
	attrInts         = 8 // AttributeProto.ints
	elemFloat        = 1 // TensorProto.DataType.FLOAT
	elemInt64        = 7
	elemFloat16      = 10
)

// errNoGraphPooling says the model cannot be pooled in its graph; the caller pools on the host.
var errNoGraphPooling = errors.New("cannot pool inside this graph")

// poolInGraph returns model (a serialized ModelProto) with its graph's outputs replaced by one,
// pooledOutput: [batch, dim] float32, the masked mean ("mean") or the first token ("cls") of
// the token embeddings named output. An error wrapping errNoGraphPooling means the model is
// fine but this rewrite does not apply (no attention_mask for a mean, external weights, an
// output that is not float); other errors mean the file is not a readable ONNX model.
func poolInGraph(model []byte, output, mode string) ([]byte, error) {
	if mode != "mean" && mode != "cls" {
		return nil, fmt.Errorf("%w: pooling %q", errNoGraphPooling, mode)
	}
	var graph []byte
	opset := int64(-1)
	var rest []byte // every field but the graph, in order
	err := eachField(model, func(f field) error {
		switch {
		case f.bytes(modelGraph):
			graph = f.val
			return nil
		case f.bytes(modelOpsetImport):
			domain, version, err := readOpset(f.val)
			if err != nil {
				return err
			}
			if domain == "" || domain == "ai.onnx" {
				opset = version
			}
		}
		rest = append(rest, f.raw...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the ONNX model: %w", err)
	}
	if graph == nil {
		return nil, errors.New("reading the ONNX model: it has no graph")
	}
	if opset < 8 { // Max broadcasts from opset 8 on
		return nil, fmt.Errorf("%w: default-domain opset %d", errNoGraphPooling, opset)
	}
	g, err := rewriteGraph(graph, output, mode, opset)
	if err != nil {
		return nil, err
	}
	return protowire.AppendBytes(protowire.AppendTag(rest, modelGraph, protowire.BytesType), g), nil
}

// rewriteGraph drops the graph's outputs and appends the pooling nodes and their output.
func rewriteGraph(graph []byte, output, mode string, opset int64) ([]byte, error) {
	var out []byte
	var elem int64
	dim := int64(0)
	found, hasMask := false, false
	err := eachField(graph, func(f field) error {
		switch {
		case f.bytes(graphOutput):
			name, e, d, err := readValueInfo(f.val)
			if err != nil {
				return err
			}
			if name == output {
				found, elem, dim = true, e, d
			}
			return nil // every output is replaced by the pooled one
		case f.bytes(graphInput):
			name, _, _, err := readValueInfo(f.val)
			if err != nil {
				return err
			}
			hasMask = hasMask || name == "attention_mask"
		case f.bytes(graphInitializer):
			external, err := isExternal(f.val)
			if err != nil {
				return err
			}
			if external {
				return fmt.Errorf("%w: its weights are in an external data file", errNoGraphPooling)
			}
		}
		out = append(out, f.raw...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the ONNX graph: %w", err)
	}
	switch {
	case !found:
		return nil, fmt.Errorf("reading the ONNX graph: it has no output %q", output)
	case elem != elemFloat && elem != elemFloat16:
		return nil, fmt.Errorf("%w: output %s has element type %d, want float or float16", errNoGraphPooling, output, elem)
	case mode == "mean" && !hasMask:
		return nil, fmt.Errorf("%w: a mean needs the attention_mask input, which the graph does not take", errNoGraphPooling)
	}
	p := poolNodes{opset: opset, graph: out}
	hidden := output
	if elem != elemFloat { // reduce in float32, as the host does (in float64)
		hidden = p.node("Cast", []string{output}, intAttr("to", elemFloat))
	}
	var pooled string
	if mode == "cls" {
		first := p.int64s("first_token", nil, 0) // a scalar index drops the sequence axis
		pooled = p.node("Gather", []string{hidden, first}, intAttr("axis", 1))
	} else {
		mask := p.node("Cast", []string{"attention_mask"}, intAttr("to", elemFloat))
		mask3 := p.axesNode("Unsqueeze", mask, 2, nil)                     // [n, seq, 1]
		masked := p.node("Mul", []string{hidden, mask3}, nil)              // [n, seq, dim]
		sum := p.axesNode("ReduceSum", masked, 1, intAttr("keepdims", 0))  // [n, dim]
		count := p.axesNode("ReduceSum", mask3, 1, intAttr("keepdims", 0)) // [n, 1]
		count = p.node("Max", []string{count, p.float32s("one", 1)}, nil)  // an empty row divides by 1
		pooled = p.node("Div", []string{sum, count}, nil)                  // [n, dim]
	}
	p.node("Identity", []string{pooled}, nil, pooledOutput)
	p.graph = protowire.AppendTag(p.graph, graphOutput, protowire.BytesType)
	p.graph = protowire.AppendBytes(p.graph, valueInfo(pooledOutput, elemFloat, dim))
	return p.graph, nil
}

// poolNodes appends nodes and initializers to a graph under names no model uses.
type poolNodes struct {
	opset int64
	graph []byte
	n     int
}

func (p *poolNodes) name(what string) string {
	p.n++
	return fmt.Sprintf("kairos_pool_%s_%d", what, p.n)
}

// node appends a node of op over inputs and returns its output's name (outName when given).
func (p *poolNodes) node(op string, inputs []string, attrs []byte, outName ...string) string {
	out := p.name(op)
	if len(outName) > 0 {
		out = outName[0]
	}
	var b []byte
	for _, in := range inputs {
		b = appendString(b, nodeInput, in)
	}
	b = appendString(b, nodeOutput, out)
	b = appendString(b, nodeName, p.name(op+"_node"))
	b = appendString(b, nodeOpType, op)
	b = append(b, attrs...)
	p.graph = protowire.AppendTag(p.graph, graphNode, protowire.BytesType)
	p.graph = protowire.AppendBytes(p.graph, b)
	return out
}

// axesNode appends Unsqueeze or ReduceSum over one axis: an input from opset 13 on, an
// attribute before.
func (p *poolNodes) axesNode(op, in string, axis int64, attrs []byte) string {
	if p.opset >= 13 {
		return p.node(op, []string{in, p.int64s("axes", []int64{1}, axis)}, attrs)
	}
	return p.node(op, []string{in}, append(intsAttr("axes", axis), attrs...))
}

// int64s appends an int64 initializer of the given dims holding v and returns its name.
func (p *poolNodes) int64s(what string, dims []int64, v int64) string {
	return p.initializer(what, elemInt64, dims, binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

// float32s appends a float32 initializer of shape [1] holding v and returns its name.
func (p *poolNodes) float32s(what string, v float32) string {
	return p.initializer(what, elemFloat, []int64{1}, binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
}

func (p *poolNodes) initializer(what string, elem int64, dims []int64, raw []byte) string {
	name := p.name(what)
	var b []byte
	for _, d := range dims {
		b = protowire.AppendTag(b, tpDims, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, tpDataType, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(elem))
	b = appendString(b, tpName, name)
	b = protowire.AppendTag(b, tpRawData, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	p.graph = protowire.AppendTag(p.graph, graphInitializer, protowire.BytesType)
	p.graph = protowire.AppendBytes(p.graph, b)
	return name
}

// intAttr is an INT attribute field of a NodeProto.
func intAttr(name string, v int64) []byte { return attribute(name, attrTypeInt, attrI, v) }

// intsAttr is an INTS attribute field of a NodeProto.
func intsAttr(name string, vs ...int64) []byte { return attribute(name, attrTypeInts, attrInts, vs...) }

// attribute is an AttributeProto of the given type holding vs in field num, as a NodeProto field.
func attribute(name string, typ uint64, num protowire.Number, vs ...int64) []byte {
	a := appendString(nil, attrName, name)
	for _, v := range vs {
		a = protowire.AppendTag(a, num, protowire.VarintType)
		a = protowire.AppendVarint(a, uint64(v))
	}
	a = protowire.AppendTag(a, attrType, protowire.VarintType)
	a = protowire.AppendVarint(a, typ)
	return protowire.AppendBytes(protowire.AppendTag(nil, nodeAttribute, protowire.BytesType), a)
}

// valueInfo is a ValueInfoProto for a [batch, dim] tensor (dim 0: unknown).
func valueInfo(name string, elem, dim int64) []byte {
	batch := appendString(nil, dimParam, "batch")
	var last []byte
	if dim > 0 {
		last = protowire.AppendVarint(protowire.AppendTag(nil, dimValue, protowire.VarintType), uint64(dim))
	} else {
		last = appendString(nil, dimParam, "dim")
	}
	var shape []byte
	for _, d := range [][]byte{batch, last} {
		shape = protowire.AppendBytes(protowire.AppendTag(shape, shapeDim, protowire.BytesType), d)
	}
	tensor := protowire.AppendVarint(protowire.AppendTag(nil, tensorElemType, protowire.VarintType), uint64(elem))
	tensor = protowire.AppendBytes(protowire.AppendTag(tensor, tensorShape, protowire.BytesType), shape)
	typ := protowire.AppendBytes(protowire.AppendTag(nil, typeTensor, protowire.BytesType), tensor)
	b := appendString(nil, valueName, name)
	return protowire.AppendBytes(protowire.AppendTag(b, valueType, protowire.BytesType), typ)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

// field is one field of a protobuf message.
type field struct {
	num protowire.Number
	typ protowire.Type
	raw []byte // the whole field, tag included
	val []byte // a length-delimited field's payload
	v   uint64 // a varint field's value
}

func (f field) bytes(num protowire.Number) bool { return f.num == num && f.typ == protowire.BytesType }
func (f field) varint(num protowire.Number) bool {
	return f.num == num && f.typ == protowire.VarintType
}

// eachField calls fn with every field of the message b, in order.
func eachField(b []byte, fn func(f field) error) error {
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return fmt.Errorf("byte %d: %w", off, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			return fmt.Errorf("byte %d: field %d: %w", off, num, protowire.ParseError(m))
		}
		f := field{num: num, typ: typ, raw: b[off : off+n+m]}
		switch typ {
		case protowire.BytesType:
			f.val, _ = protowire.ConsumeBytes(b[off+n:])
		case protowire.VarintType:
			f.v, _ = protowire.ConsumeVarint(b[off+n:])
		}
		if err := fn(f); err != nil {
			return err
		}
		off += n + m
	}
	return nil
}

// readOpset reads an OperatorSetIdProto.
func readOpset(b []byte) (domain string, version int64, err error) {
	err = eachField(b, func(f field) error {
		switch {
		case f.bytes(opsetDomain):
			domain = string(f.val)
		case f.varint(opsetVersion):
			version = int64(f.v)
		}
		return nil
	})
	return domain, version, err
}

// readValueInfo reads a ValueInfoProto's name, tensor element type and static last dimension.
func readValueInfo(b []byte) (name string, elem, last int64, err error) {
	err = eachField(b, func(f field) error {
		switch {
		case f.bytes(valueName):
			name = string(f.val)
		case f.bytes(valueType):
			return eachField(f.val, func(t field) error {
				if !t.bytes(typeTensor) {
					return nil
				}
				var terr error
				elem, last, terr = readTensorType(t.val)
				return terr
			})
		}
		return nil
	})
	return name, elem, last, err
}

// readTensorType reads a TypeProto.Tensor's element type and its shape's last dimension (0
// when that is not a fixed value).
func readTensorType(b []byte) (elem, last int64, err error) {
	err = eachField(b, func(f field) error {
		switch {
		case f.varint(tensorElemType):
			elem = int64(f.v)
		case f.bytes(tensorShape):
			last = 0
			return eachField(f.val, func(d field) error {
				if !d.bytes(shapeDim) {
					return nil
				}
				last = 0
				return eachField(d.val, func(x field) error {
					if x.varint(dimValue) {
						last = int64(x.v)
					}
					return nil
				})
			})
		}
		return nil
	})
	return elem, last, err
}

// isExternal reports whether a TensorProto keeps its data in an external file.
func isExternal(b []byte) (bool, error) {
	external := false
	err := eachField(b, func(f field) error {
		if f.varint(tpDataLocation) {
			external = f.v == 1
		}
		return nil
	})
	return external, err
}
