// Every class of bad trace is rejected with one InputError naming the file, the JSON path
// and what was expected.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "trace_text.h"

using namespace fusim;
using fusim::test::kHead;
using fusim::test::parse;
using fusim::test::trace_json;

namespace {

const char* kInputs =
    R"([{"name":"input","shape":[2,4]},{"name":"target","shape":[2],"dtype":"int64"}])";
const char* kImage =
    R"([{"name":"input","shape":[2,3,8,8]},{"name":"target","shape":[2],"dtype":"int64"}])";
// The SCHEMA example's layers, split so cases can replace one line.
const char* kFc1 =
    R"({"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],"output":[2,8],
   "params":[{"name":"fc1.weight","shape":[8,4]},{"name":"fc1.bias","shape":[8]}]})";
const char* kAct = R"({"id":1,"name":"act","op":"relu","attrs":{},"inputs":[0],"output":[2,8]})";
const char* kFc2 =
    R"({"id":2,"name":"fc2","op":"linear","inputs":[1],"output":[2,3],"params":[{"name":"fc2.weight","shape":[3,8]}]})";
const char* kLoss =
    R"({"id":3,"name":"loss","op":"cross_entropy","inputs":[2,"target"],"output":[]})";

std::string mlp(const std::string& fc1, const std::string& act, const std::string& fc2,
                const std::string& loss, const std::string& extra = "") {
  return trace_json(kInputs, "[" + fc1 + "," + act + "," + fc2 + "," + loss + extra + "]");
}

// Image trace: <layer 0>, flatten, linear to 5 classes, loss. `first` must output [2,C,H,W]
// with C*H*W = `features`.
std::string cnn(const std::string& first, int features) {
  return trace_json(kImage, "[" + first + R"(,
 {"id":1,"name":"flat","op":"flatten","inputs":[0],"output":[2,)" +
                                std::to_string(features) + R"(]},
 {"id":2,"name":"fc","op":"linear","inputs":[1],"output":[2,5],"params":[{"name":"fc.weight","shape":[5,)" +
                                std::to_string(features) + R"(]}]},
 {"id":3,"name":"loss","op":"cross_entropy","inputs":[2,"target"],"output":[]}])");
}

// Sequence trace: q, k, v linears on [2,3,8] (positions 0-2), then `middle` (from
// position 3; its last layer has id 4 and output [2,3,8]), k + v added to it, reshape, loss.
std::string seq(const std::string& middle) {
  return trace_json(
      R"([{"name":"input","shape":[2,3,8]},{"name":"target","shape":[6],"dtype":"int64"}])",
      R"([{"id":1,"name":"q","op":"linear","inputs":["input"],"output":[2,3,8],"params":[{"name":"q.weight","shape":[8,8]}]},
 {"id":2,"name":"k","op":"linear","inputs":["input"],"output":[2,3,8],"params":[{"name":"k.weight","shape":[8,8]}]},
 {"id":3,"name":"v","op":"linear","inputs":["input"],"output":[2,3,8],"params":[{"name":"v.weight","shape":[8,8]}]},
 )" + middle +
          R"(,
 {"id":10,"name":"kv","op":"add","inputs":[2,3],"output":[2,3,8]},
 {"id":11,"name":"mix","op":"add","inputs":[4,10],"output":[2,3,8]},
 {"id":5,"name":"rs","op":"reshape","inputs":[11],"output":[6,8]},
 {"id":6,"name":"loss","op":"cross_entropy","inputs":[5,"target"],"output":[]}])");
}

// The MLP with `extra` (layer id 5, output [8] or [2, 8]) added to act before fc2.
std::string with_extra(const std::string& extra) {
  return mlp(kFc1, kAct, extra + R"(,{"id":6,"name":"sum","op":"add","inputs":[1,5],"output":[2,8]},
 {"id":2,"name":"fc2","op":"linear","inputs":[6],"output":[2,3],"params":[{"name":"fc2.weight","shape":[3,8]}]})",
             kLoss);
}

struct BadTrace {
  const char* what;
  std::string text;
  const char* fragment;  // expected in the message, JSON path included
};

std::vector<BadTrace> bad_traces() {
  const std::string fine_layers =
      std::string("[") + kFc1 + "," + kAct + "," + kFc2 + "," + kLoss + "]";
  return {
      {"not JSON", "{\"format\": ", "t.json: line 1 column 12: expected valid JSON"},
      {"wrong format", "{" + std::string(R"("format":"fusim","version":1)") + "}",
       "t.json: format: expected \"fusim-trace\", got \"fusim\""},
      {"wrong version",
       trace_json(
           kInputs, fine_layers,
           R"("format":"fusim-trace","version":2,"model":"m","batch":2,"dtype":"float32","source":"")"),
       "t.json: version: expected 1 (the trace format version this fusim reads), got 2"},
      {"unknown top-level member",
       trace_json(kInputs, fine_layers, std::string(kHead) + R"(,"steps":3)"),
       "t.json: steps: expected one of the known members"},
      {"wrong type",
       trace_json(
           kInputs, fine_layers,
           R"("format":"fusim-trace","version":1,"model":"m","batch":"2","dtype":"float32","source":"")"),
       "t.json: batch: expected a positive integer, got \"2\""},
      {"bad dtype",
       trace_json(
           kInputs, fine_layers,
           R"("format":"fusim-trace","version":1,"model":"m","batch":2,"dtype":"float64","source":"")"),
       "t.json: dtype: expected a dtype (float32, float16, bfloat16, int64, int32, bool), got "
       "\"float64\""},
      {"negative dim",
       trace_json(
           R"([{"name":"input","shape":[2,-4]},{"name":"target","shape":[2],"dtype":"int64"}])",
           fine_layers),
       "t.json: inputs[0].shape[1]: expected a positive integer, got -4"},
      {"batch mismatch",
       trace_json(
           R"([{"name":"input","shape":[3,4]},{"name":"target","shape":[2],"dtype":"int64"}])",
           fine_layers),
       "t.json: inputs[0].shape: expected a shape whose first dim is the batch 2, got [3, 4]"},
      {"missing field",
       mlp(kFc1, R"({"id":1,"name":"act","inputs":[0],"output":[2,8]})", kFc2, kLoss),
       "t.json: layers[1].op: expected a member \"op\" (missing)"},
      {"unknown op",
       mlp(kFc1, R"({"id":1,"name":"act","op":"relu7","inputs":[0],"output":[2,8]})", kFc2, kLoss),
       "t.json: layers[1].op: expected an op name (linear, conv2d,"},
      {"unknown attr",
       mlp(kFc1,
           R"({"id":1,"name":"act","op":"relu","attrs":{"inplace":true},"inputs":[0],"output":[2,8]})",
           kFc2, kLoss),
       "t.json: layers[1].attrs.inplace: expected an attribute of relu (relu takes: none), got "
       "unknown \"inplace\""},
      {"misspelt attr",
       cnn(R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":[3,3],"strid":[1,1]},"inputs":["input"],"output":[2,4,6,6],"params":[{"name":"c.weight","shape":[4,3,3,3]}]})",
           144),
       "t.json: layers[0].attrs.strid: expected an attribute of conv2d (conv2d takes: kernel, "
       "stride, padding, dilation, groups, bias)"},
      {"stride 0",
       cnn(R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":[3,3],"stride":[0,1]},"inputs":["input"],"output":[2,4,6,6],"params":[{"name":"c.weight","shape":[4,3,3,3]}]})",
           144),
       "t.json: layers[0].attrs.stride: expected a list of 2 positive integers, got [0, 1]"},
      {"kernel not a pair",
       cnn(R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":3},"inputs":["input"],"output":[2,4,6,6],"params":[{"name":"c.weight","shape":[4,3,3,3]}]})",
           144),
       "t.json: layers[0].attrs.kernel: expected a list of 2 integers, got 3"},
      {"conv output wrong",
       cnn(R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":[3,3],"stride":[2,2],"padding":[1,1]},"inputs":["input"],"output":[2,4,5,5],"params":[{"name":"c.weight","shape":[4,3,3,3]}]})",
           100),
       "t.json: layers[0].output: expected [2, 4, 4, 4] (conv2d of [2, 3, 8, 8] with weight [4, 3, "
       "3, 3], stride [2, 2], padding [1, 1], dilation [1, 1]), got [2, 4, 5, 5]"},
      {"conv weight wrong",
       cnn(R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":[3,3]},"inputs":["input"],"output":[2,4,6,6],"params":[{"name":"c.weight","shape":[4,3,5,5]}]})",
           144),
       "t.json: layers[0].params[0].shape: expected [C_out, 3, 3, 3]"},
      {"groups not dividing",
       cnn(R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":[3,3],"groups":2},"inputs":["input"],"output":[2,4,6,6],"params":[{"name":"c.weight","shape":[4,1,3,3]}]})",
           144),
       "t.json: layers[0].attrs.groups: expected a divisor of the input channels 3, got 2"},
      {"kernel too large",
       cnn(R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":[9,9]},"inputs":["input"],"output":[2,4,1,1],"params":[{"name":"c.weight","shape":[4,3,9,9]}]})",
           4),
       "t.json: layers[0].attrs.kernel: expected a dilated kernel that fits the padded input"},
      {"pool padding over half the kernel",
       cnn(R"({"id":0,"name":"p","op":"max_pool2d","attrs":{"kernel":[2,2],"padding":[2,2]},"inputs":["input"],"output":[2,3,6,6]})",
           108),
       "t.json: layers[0].attrs.padding: expected at most half the kernel [2, 2] (PyTorch's "
       "limit), got [2, 2]"},
      {"batch_norm param shape",
       cnn(R"({"id":0,"name":"bn","op":"batch_norm","inputs":["input"],"output":[2,3,8,8],"params":[{"name":"bn.weight","shape":[4]},{"name":"bn.bias","shape":[3]}]})",
           192),
       "t.json: layers[0].params[0].shape: expected [3] (one per channel C = input dim 1), got "
       "[4]"},
      {"batch_norm unknown buffer",
       cnn(R"({"id":0,"name":"bn","op":"batch_norm","inputs":["input"],"output":[2,3,8,8],"buffers":[{"name":"bn.running_std","shape":[3]}]})",
           192),
       "t.json: layers[0].buffers[0].name: expected a batch_norm buffer"},
      {"shape mismatch on an edge",
       mlp(kFc1, R"({"id":1,"name":"act","op":"relu","inputs":[0],"output":[2,9]})", kFc2, kLoss),
       "t.json: layers[1].output: expected [2, 8] (same shape as its input), got [2, 9]"},
      {"param shape wrong",
       mlp(kFc1, kAct,
           R"({"id":2,"name":"fc2","op":"linear","inputs":[1],"output":[2,3],"params":[{"name":"fc2.weight","shape":[3,7]}]})",
           kLoss),
       "t.json: layers[2].params[0].shape: expected [out_features, 8] (in_features = last dim of "
       "the input [2, 8]), got [3, 7]"},
      {"param count wrong",
       mlp(R"({"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],"output":[2,8],"params":[{"name":"fc1.weight","shape":[8,4]}]})",
           kAct, kFc2, kLoss),
       "t.json: layers[0].params: expected 2 params (weight, bias) for linear (attrs.bias is "
       "true), got 1"},
      {"params swapped",
       mlp(R"({"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],"output":[2,8],"params":[{"name":"fc1.bias","shape":[8]},{"name":"fc1.weight","shape":[8,4]}]})",
           kAct, kFc2, kLoss),
       "t.json: layers[0].params[0].name: expected a name ending in \"weight\""},
      {"param used twice",
       mlp(kFc1, kAct,
           R"({"id":2,"name":"fc2","op":"linear","inputs":[1],"output":[2,3],"params":[{"name":"fc1.weight","shape":[3,8]}]})",
           kLoss),
       "t.json: layers[2].params[0].name: expected a parameter name used once (tie weights with "
       "\"tied_to\"), got \"fc1.weight\" (also layers[0].params[0].name)"},
      {"cycle",
       mlp(kFc1, R"({"id":1,"name":"act","op":"add","inputs":[0,2],"output":[2,8]})",
           R"({"id":2,"name":"fc2","op":"relu","inputs":[1],"output":[2,8]},{"id":4,"name":"fc3","op":"linear","inputs":[2],"output":[2,3],"params":[{"name":"fc3.weight","shape":[3,8]}]})",
           R"({"id":3,"name":"loss","op":"cross_entropy","inputs":[4,"target"],"output":[]})"),
       "t.json: layers[1].inputs: expected an acyclic layer graph, got a cycle through layer ids 1 "
       "-> 2 -> 1"},
      {"self loop",
       mlp(kFc1, R"({"id":1,"name":"act","op":"add","inputs":[0,1],"output":[2,8]})", kFc2, kLoss),
       "t.json: layers[1].inputs: expected an acyclic layer graph, got a cycle through layer ids 1 "
       "-> 1"},
      {"dangling input id",
       mlp(kFc1, R"({"id":1,"name":"act","op":"relu","inputs":[17],"output":[2,8]})", kFc2, kLoss),
       "t.json: layers[1].inputs[0]: expected a layer id or a model input name (input, target), "
       "got 17 (no layer has this id)"},
      {"unknown input name",
       mlp(kFc1, R"({"id":1,"name":"act","op":"relu","inputs":["x"],"output":[2,8]})", kFc2, kLoss),
       "t.json: layers[1].inputs[0]: expected a layer id or a model input name (input, target), "
       "got \"x\""},
      {"duplicate id",
       mlp(kFc1, R"({"id":0,"name":"act","op":"relu","inputs":[0],"output":[2,8]})", kFc2, kLoss),
       "t.json: layers[1].id: expected a unique layer id, got 0 (also layers[0].id)"},
      {"unreachable layer",
       mlp(kFc1, kAct,
           R"({"id":2,"name":"fc2","op":"linear","inputs":[],"output":[2,3],"params":[{"name":"fc2.weight","shape":[3,8]}]})",
           kLoss),
       "t.json: layers[2].inputs: expected at least one input for linear (only parameter and "
       "generic_data_movement layers are sources), got []"},
      {"two losses",
       mlp(kFc1, kAct, kFc2, kLoss,
           R"(,{"id":4,"name":"loss2","op":"cross_entropy","inputs":[2,"target"],"output":[]})"),
       "t.json: layers[4].op: expected exactly one cross_entropy layer (the loss), got a second "
       "one (also layers[3])"},
      {"no loss",
       mlp(kFc1, kAct, kFc2,
           R"({"id":3,"name":"sm","op":"softmax","attrs":{"dim":1},"inputs":[2],"output":[2,3]})"),
       "t.json: layers: expected exactly one cross_entropy layer (the loss), got none"},
      {"extra sink",
       mlp(kFc1, kAct, kFc2, kLoss,
           R"(,{"id":4,"name":"dead","op":"relu","inputs":[1],"output":[2,8]})"),
       "t.json: layers[4]: expected its output to be used by another layer (the loss, layer 3, "
       "must be the only sink), got no consumer of layer 4"},
      {"loss consumed",
       mlp(kFc1, kAct, kFc2, kLoss,
           R"(,{"id":4,"name":"after","op":"relu","inputs":[3],"output":[]})"),
       "t.json: layers[4].inputs[0]: expected a layer other than the loss (layer 3 is the only "
       "sink), got it"},
      {"unused model input",
       trace_json(
           R"([{"name":"input","shape":[2,4]},{"name":"target","shape":[2],"dtype":"int64"},{"name":"mask","shape":[2]}])",
           fine_layers),
       "t.json: inputs[2]: expected a model input used by some layer, got \"mask\" unused"},
      {"loss target not int64",
       trace_json(R"([{"name":"input","shape":[2,4]},{"name":"target","shape":[2]}])", fine_layers),
       "t.json: layers[3].inputs[1]: expected an int64 tensor of class indices for cross_entropy, "
       "got float32 from model input \"target\""},
      {"wrong arity",
       mlp(kFc1, R"({"id":1,"name":"act","op":"relu","inputs":[0,0],"output":[2,8]})", kFc2, kLoss),
       "t.json: layers[1].inputs: expected 1 input for relu, got 2"},
      {"output dtype wrong",
       mlp(kFc1,
           R"({"id":1,"name":"act","op":"relu","inputs":[0],"output":[2,8],"output_dtype":"float16"})",
           kFc2, kLoss),
       "t.json: layers[1].output_dtype: expected float32 (what relu produces here), got float16"},
      {"concat dims mismatch",
       mlp(kFc1, kAct,
           R"({"id":5,"name":"other","op":"linear","inputs":[1],"output":[2,3],"params":[{"name":"o.weight","shape":[3,8]}]},{"id":6,"name":"cat","op":"concat","attrs":{"dim":0},"inputs":[1,5],"output":[4,8]},{"id":2,"name":"fc2","op":"linear","inputs":[6],"output":[4,3],"params":[{"name":"fc2.weight","shape":[3,8]}]})",
           kLoss),
       "t.json: layers[3].inputs[1]: expected a float32 tensor equal to input 0 [2, 8] except on "
       "dim 0, got float32 [2, 3] from layer 5"},
      {"add not broadcastable",
       mlp(kFc1, kAct,
           R"({"id":5,"name":"other","op":"linear","inputs":[1],"output":[2,3],"params":[{"name":"o.weight","shape":[3,8]}]},{"id":6,"name":"sum","op":"add","inputs":[1,5],"output":[2,8]},{"id":2,"name":"fc2","op":"linear","inputs":[6],"output":[2,3],"params":[{"name":"fc2.weight","shape":[3,8]}]})",
           kLoss),
       "t.json: layers[3].inputs[1]: expected a tensor broadcastable with [2, 8] (input 0), got "
       "[2, 3] from layer 5"},
      {"matmul inner mismatch",
       seq(R"({"id":4,"name":"mm","op":"matmul","inputs":[1,2],"output":[2,3,8]})"),
       "t.json: layers[3].inputs[1]: expected a tensor whose rows match the last dim of input 0 "
       "[2, 3, 8] with broadcastable batch dims (torch.matmul), got [2, 3, 8] from layer 2"},
      {"bmm batch mismatch",
       seq(R"({"id":7,"name":"p","op":"permute","attrs":{"dims":[1,0,2]},"inputs":[2],"output":[3,2,8]},{"id":4,"name":"mm","op":"bmm","inputs":[1,7],"output":[2,3,8]})"),
       "t.json: layers[4].inputs[1]: expected [2, 8, m] to match input 0 [2, 3, 8], got [3, 2, 8] "
       "from layer 7"},
      {"heads not dividing E",
       seq(R"({"id":4,"name":"attn","op":"scaled_dot_product_attention","attrs":{"heads":3},"inputs":[1,2,3],"output":[2,3,8]})"),
       "t.json: layers[3].attrs.heads: expected a divisor of the query embedding size E = 8, "
       "got 3"},
      {"attention without heads",
       seq(R"({"id":4,"name":"attn","op":"scaled_dot_product_attention","attrs":{},"inputs":[1,2,3],"output":[2,3,8]})"),
       "t.json: layers[3].attrs.heads: expected a member \"heads\" (missing)"},
      {"dropout p = 1",
       seq(R"({"id":4,"name":"d","op":"dropout","attrs":{"p":1.0},"inputs":[1],"output":[2,3,8]})"),
       "t.json: layers[3].attrs.p: expected a dropout probability in [0, 1), got 1"},
      {"gelu approximate unknown",
       seq(R"({"id":4,"name":"g","op":"gelu","attrs":{"approximate":"fast"},"inputs":[1],"output":[2,3,8]})"),
       "t.json: layers[3].attrs.approximate: expected \"none\" or \"tanh\", got \"fast\""},
      {"layer_norm shape",
       seq(R"({"id":4,"name":"ln","op":"layer_norm","attrs":{"normalized_shape":[3]},"inputs":[1],"output":[2,3,8]})"),
       "t.json: layers[3].attrs.normalized_shape: expected the trailing dims of the input [2, 3, "
       "8], got [3]"},
      {"softmax dim out of range",
       seq(R"({"id":4,"name":"s","op":"softmax","attrs":{"dim":3},"inputs":[1],"output":[2,3,8]})"),
       "t.json: layers[3].attrs.dim: expected a dim of the rank-3 input, got 3"},
      {"permute not a permutation",
       seq(R"({"id":4,"name":"p","op":"permute","attrs":{"dims":[0,0,1]},"inputs":[1],"output":[2,3,8]})"),
       "t.json: layers[3].attrs.dims: expected a permutation of the 3 dims of the input [2, 3, 8], "
       "got [0, 0, 1]"},
      {"reshape element count",
       seq(R"({"id":4,"name":"r","op":"reshape","inputs":[1],"output":[2,3,9]})"),
       "t.json: layers[3].output: expected a shape with 48 elements like the input [2, 3, 8], got "
       "[2, 3, 9]"},
      {"embedding of floats",
       seq(R"({"id":4,"name":"e","op":"embedding","inputs":[1],"output":[2,3,8,8],"params":[{"name":"e.weight","shape":[10,8]}]})"),
       "t.json: layers[3].inputs[0]: expected an int64 or int32 tensor of class indices for "
       "embedding, got float32 from layer 1"},
      // ---- ATen capture: the parameter layer and the generic kinds; `x` (layer 5) is
      // added to act before fc2 reads the sum (layers[2] is x, layers[3] the sum).
      {"parameter with an input",
       with_extra(
           R"({"id":5,"name":"x","op":"parameter","inputs":[1],"output":[8],"params":[{"name":"x","shape":[8]}]})"),
       "t.json: layers[2].inputs: expected 0 inputs for parameter, got 1"},
      {"parameter with two tensors",
       with_extra(
           R"({"id":5,"name":"x","op":"parameter","inputs":[],"output":[8],"params":[{"name":"x","shape":[8]},{"name":"y","shape":[8]}]})"),
       "t.json: layers[2].params: expected exactly one parameter or one buffer for parameter, "
       "got 2 params and 0 buffers"},
      {"parameter output not its tensor's shape",
       with_extra(
           R"({"id":5,"name":"x","op":"parameter","inputs":[],"output":[2,8],"params":[{"name":"x","shape":[8]}]})"),
       "t.json: layers[2].output: expected [8] (the shape of \"x\"), got [2, 8]"},
      {"a layer with no input that is not a source",
       with_extra(R"({"id":5,"name":"x","op":"relu","inputs":[],"output":[8]})"),
       "t.json: layers[2].inputs: expected at least one input for relu (only parameter and "
       "generic_data_movement layers are sources), got []"},
      {"generic_elementwise output not the broadcast",
       with_extra(R"({"id":5,"name":"x","op":"generic_elementwise","inputs":[1],"output":[1,8]})"),
       "t.json: layers[2].output: expected [2, 8] (the broadcast of its inputs), got [1, 8]"},
      {"generic_elementwise negative flops",
       with_extra(
           R"({"id":5,"name":"x","op":"generic_elementwise","attrs":{"flops_per_element":-1},"inputs":[1],"output":[2,8]})"),
       "t.json: layers[2].attrs.flops_per_element: expected a non-negative integer, got -1"},
      {"generic_reduction without reduce",
       with_extra(
           R"({"id":5,"name":"x","op":"generic_reduction","attrs":{"aten":"aten.sum.dim_IntList"},"inputs":[1],"output":[8]})"),
       "t.json: layers[2].attrs.reduce: expected a member \"reduce\" (missing)"},
      {"generic_matmul contraction beyond an operand",
       with_extra(
           R"({"id":5,"name":"x","op":"generic_matmul","attrs":{"contraction":20},"inputs":[1,1],"output":[8]})"),
       "t.json: layers[2].attrs.contraction: expected at most the 16 elements of input 0 [2, 8] "
       "(each output element combines that many of each operand), got 20"},
      {"generic kind with an attribute of another",
       with_extra(
           R"({"id":5,"name":"x","op":"generic_data_movement","attrs":{"reduce":2},"inputs":[1],"output":[8]})"),
       "t.json: layers[2].attrs.reduce: expected an attribute of generic_data_movement "
       "(generic_data_movement takes: aten), got unknown \"reduce\""},
      {"capture path unknown",
       trace_json(kInputs, fine_layers,
                  std::string(kHead) + R"(,"capture":{"path":"jit","control_flow":"symbolic"})"),
       "t.json: capture.path: expected \"fx\" or \"aten\", got \"jit\""},
  };
}

}  // namespace

TEST_CASE("malformed traces are rejected with file, JSON path and expectation") {
  for (const auto& bad : bad_traces()) {
    INFO(bad.what);
    try {
      parse(bad.text);
      FAIL_CHECK("accepted: " << bad.what);
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains(bad.fragment));
    }
  }
}

TEST_CASE("there are at least 20 distinct malformed traces, each valid when fixed") {
  CHECK(bad_traces().size() >= 20);
  // The building blocks themselves are fine: the failures come from the edits above.
  CHECK_NOTHROW(parse(mlp(kFc1, kAct, kFc2, kLoss)));
  CHECK_NOTHROW(parse(cnn(
      R"({"id":0,"name":"c","op":"conv2d","attrs":{"kernel":[3,3]},"inputs":["input"],"output":[2,4,6,6],"params":[{"name":"c.weight","shape":[4,3,3,3]}]})",
      144)));
  CHECK_NOTHROW(parse(seq(
      R"({"id":4,"name":"attn","op":"scaled_dot_product_attention","attrs":{"heads":2},"inputs":[1,2,3],"output":[2,3,8]})")));
  CHECK_NOTHROW(parse(with_extra(
      R"({"id":5,"name":"x","op":"parameter","inputs":[],"output":[8],"params":[{"name":"x","shape":[8]}]})")));
  CHECK_NOTHROW(parse(with_extra(
      R"({"id":5,"name":"x","op":"generic_matmul","attrs":{"contraction":2},"inputs":[1,1],"output":[8]})")));
}

TEST_CASE("a missing file is an InputError naming it") {
  try {
    workload::load_trace("/nonexistent/trace.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("/nonexistent/trace.json"));
    CHECK_THAT(e.what(), Catch::Matchers::Contains("a readable file"));
  }
}
