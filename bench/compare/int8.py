"""int8.py - ONNX Runtime's dynamic INT8 quantization (onnxruntime.quantization.quantize_dynamic with
its default settings) redone by hand for the exported encoder, with the `onnx` package only (PyPI and
so the onnxruntime Python package are out of reach here); it must not run or time a model.

What quantize_dynamic does by default, and what this file therefore does:
- op_types_to_quantize: every type in its IntegerOps registry. In this graph that means MatMul and
  Gather (Conv, Attention, LSTM, EmbedLayerNormalization do not occur).
- MatMulConstBOnly (on by default for dynamic mode): only a MatMul whose B is a constant weight is
  quantized. The two attention MatMuls (QK^T, PV) take activations for B and stay f32.
- per_channel=False: one scale per weight tensor. reduce_range=False: the full 8-bit range.
- weight_type=QInt8, and QInt8 weights are symmetric by default (extra option WeightSymmetric
  defaults to True for signed types): range [-127, 127], scale = max|W| / 127 as float32, zero
  point 0, q = round-half-to-even(W / scale) clipped to [-127, 127]; an all-zero tensor gets scale 1.
- activations: QUInt8, asymmetric, computed at run time by DynamicQuantizeLinear (the only form
  dynamic mode has). A tensor that feeds several quantized MatMuls (q, k and v share their input) is
  quantized once, as the quantizer reuses a quantized value by name.
- a quantized MatMul becomes DynamicQuantizeLinear(A) -> MatMulInteger(A_q, W_q, A_zp, W_zp) ->
  Cast(float) -> Mul(., A_scale * W_scale), the output keeping the MatMul's name, so the bias Add that
  follows is untouched. ORT fuses this chain (and the Add) into DynamicQuantizeMatMul / the
  MatMulIntegerToFloat kernels itself when it loads the model (graph optimizations on).
- a Gather whose data is a constant (the three embedding tables) gathers from the int8 table and a
  DequantizeLinear follows it, because its consumer (the embedding sum) is not quantized.
- each weight initializer is quantized once however many nodes use it: the encoder's one shared
  layer is applied 12 times, and its 7 weights are stored once.
The exporter hands layers 1-11 their weights through Identity nodes (torch de-duplicates the shared
tensors); quantize_dynamic's constant-B check looks for an initializer by name and would skip those
MatMuls unless the model is pre-processed first (onnxruntime.quantization.quant_pre_process, which
ORT recommends before quantizing and whose optimizer removes Identity nodes). Weights are therefore
found through Identity chains here, as after that pre-processing.
Gemm does not occur in this export (torch emits MatMul + Add). quantize_dynamic would leave a Gemm in
f32 (Gemm is not in its IntegerOps registry); here one is refused instead, so that a changed export
cannot quietly give an "INT8" model whose linears are f32.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weight(w):
    """(int8 array, float32 scale): symmetric per-tensor, [-127, 127], zero point 0."""
    absmax = np.float32(np.abs(w).max()) if w.size else np.float32(0)
    scale = np.float32(absmax / np.float32(127)) if absmax > 0 else np.float32(1)
    q = np.clip(np.rint(w.astype(np.float32) / scale), -127, 127).astype(np.int8)
    return q, scale


class _Rewriter:
    """Builds the new node list; remembers what is already quantized (weights and activations)."""

    def __init__(self, graph):
        self.inits = {i.name: i for i in graph.initializer}
        self.producer = {o: n for n in graph.node for o in n.output}
        self.nodes, self.new_inits, self.weights, self.acts = [], [], {}, {}

    def constant(self, name):
        """The initializer `name` is, through Identity nodes, or None."""
        while name not in self.inits and name in self.producer and self.producer[name].op_type == "Identity":
            name = self.producer[name].input[0]
        init = self.inits.get(name)
        return init if init is not None and init.data_type == TensorProto.FLOAT else None

    def weight(self, init):
        """(q, scale, zero point) initializer names of a weight, quantized on first use."""
        if init.name not in self.weights:
            q, scale = quantize_weight(numpy_helper.to_array(init))
            names = (init.name + "_quantized", init.name + "_scale", init.name + "_zero_point")
            self.new_inits += [numpy_helper.from_array(q, names[0]),
                               numpy_helper.from_array(np.array(scale, dtype=np.float32), names[1]),
                               numpy_helper.from_array(np.array(0, dtype=np.int8), names[2])]
            self.weights[init.name] = names
        return self.weights[init.name]

    def activation(self, name):
        """(q, scale, zero point) tensor names of a run-time uint8 quantization of `name`."""
        if name not in self.acts:
            base = name.replace("/", "_").strip("_")
            outs = [base + "_quantized", base + "_scale", base + "_zero_point"]
            self.nodes.append(helper.make_node("DynamicQuantizeLinear", [name], outs,
                                               base + "_QuantizeLinear"))
            self.acts[name] = tuple(outs)
        return self.acts[name]

    def matmul(self, node, init):
        a_q, a_scale, a_zp = self.activation(node.input[0])
        w_q, w_scale, w_zp = self.weight(init)
        b = node.name + "_quant"
        self.nodes += [
            helper.make_node("MatMulInteger", [a_q, w_q, a_zp, w_zp], [b + "_int32"], b),
            helper.make_node("Cast", [b + "_int32"], [b + "_float"], b + "_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [a_scale, w_scale], [b + "_scales"], b + "_scales_mul"),
            helper.make_node("Mul", [b + "_float", b + "_scales"], [node.output[0]], b + "_output_scale_mul"),
        ]

    def gather(self, node, init):
        w_q, w_scale, w_zp = self.weight(init)
        base = node.name + "_quant"
        self.nodes += [
            helper.make_node("Gather", [w_q, node.input[1]], [base + "_int8"], base, **attrs(node)),
            helper.make_node("DequantizeLinear", [base + "_int8", w_scale, w_zp], [node.output[0]],
                             base + "_dequantize"),
        ]


def live(nodes, outputs):
    """The nodes some graph output depends on, in their order: the Identity nodes that handed the
    f32 weights to the rewritten MatMuls are dropped, and with them the f32 copies in the file."""
    need, keep = set(outputs), []
    for n in reversed(nodes):
        if need.intersection(n.output):
            keep.append(n)
            need.update(i for i in n.input if i)
    return keep[::-1]


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def quantize_model(model):
    """A new ModelProto: the f32 graph with its constant-weight MatMuls and Gathers in INT8. Returns
    (model, counts of rewritten MatMul and Gather nodes)."""
    graph = model.graph
    r = _Rewriter(graph)
    counts = {"MatMul": 0, "Gather": 0}
    for node in graph.node:
        init = r.constant(node.input[1]) if node.op_type == "MatMul" else None
        if node.op_type == "Gather":
            init = r.constant(node.input[0])
        if node.op_type == "Gemm":
            raise ValueError(f"int8: {node.name}: Gemm is not handled (the export emits MatMul + Add)")
        if init is None:
            r.nodes.append(node)
            continue
        getattr(r, node.op_type.lower())(node, init)
        counts[node.op_type] += 1
    nodes = live(r.nodes, [o.name for o in graph.output])
    used = {i for n in nodes for i in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    new_graph = helper.make_graph(nodes, graph.name + "_int8", list(graph.input), list(graph.output),
                                  kept + r.new_inits, value_info=list(graph.value_info))
    out = helper.make_model(new_graph, opset_imports=list(model.opset_import),
                            producer_name="ckbatch bench/compare/int8.py")
    out.ir_version = model.ir_version
    onnx.checker.check_model(out)
    return out, counts


def quantize_file(src, dst):
    """Quantizes the model file src into dst; returns the counts of rewritten nodes."""
    model, counts = quantize_model(onnx.load(src))
    onnx.save(model, dst)
    return counts
