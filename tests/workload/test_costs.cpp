// Output shapes and FLOPs/bytes of every op kind against values worked out by hand.
#include <catch2/catch.hpp>
#include <set>

#include "llm_trace_text.h"
#include "trace_text.h"
#include "workload/cost.h"
#include "workload/shape_rules.h"

using namespace fusim;
using namespace fusim::workload;
using fusim::test::layer_named;
using fusim::test::parse;
using fusim::test::trace_json;

namespace {

// A small CNN exercising conv2d (strided, biased, depthwise), batch_norm, relu6, both
// pools, adaptive pooling, add, silu, concat, flatten, linear and cross_entropy.
const std::string kCnn = trace_json(
    R"([{"name":"input","shape":[2,3,8,8]},{"name":"target","shape":[2],"dtype":"int64"}])",
    R"([
 {"id":0,"name":"conv1","op":"conv2d","attrs":{"kernel":[3,3],"stride":[2,2],"padding":[1,1],"bias":true},
  "inputs":["input"],"output":[2,4,4,4],
  "params":[{"name":"conv1.weight","shape":[4,3,3,3]},{"name":"conv1.bias","shape":[4]}]},
 {"id":1,"name":"bn1","op":"batch_norm","inputs":[0],"output":[2,4,4,4],
  "params":[{"name":"bn1.weight","shape":[4]},{"name":"bn1.bias","shape":[4]}],
  "buffers":[{"name":"bn1.running_mean","shape":[4]},{"name":"bn1.running_var","shape":[4]},
             {"name":"bn1.num_batches_tracked","shape":[],"dtype":"int64"}]},
 {"id":2,"name":"act1","op":"relu6","inputs":[1],"output":[2,4,4,4]},
 {"id":3,"name":"pool1","op":"max_pool2d","attrs":{"kernel":[2,2]},"inputs":[2],"output":[2,4,2,2]},
 {"id":4,"name":"dw","op":"conv2d","attrs":{"kernel":[3,3],"padding":[1,1],"groups":4},
  "inputs":[3],"output":[2,4,2,2],"params":[{"name":"dw.weight","shape":[4,1,3,3]}]},
 {"id":5,"name":"res","op":"add","inputs":[4,3],"output":[2,4,2,2]},
 {"id":6,"name":"act2","op":"silu","inputs":[5],"output":[2,4,2,2]},
 {"id":7,"name":"avg","op":"avg_pool2d","attrs":{"kernel":[2,2],"stride":[1,1]},"inputs":[6],"output":[2,4,1,1]},
 {"id":8,"name":"gap","op":"adaptive_avg_pool2d","attrs":{"output_size":[1,1]},"inputs":[6],"output":[2,4,1,1]},
 {"id":9,"name":"cat","op":"concat","attrs":{"dim":1},"inputs":[7,8],"output":[2,8,1,1]},
 {"id":10,"name":"flat","op":"flatten","inputs":[9],"output":[2,8]},
 {"id":11,"name":"fc","op":"linear","inputs":[10],"output":[2,5],"params":[{"name":"fc.weight","shape":[5,8]}]},
 {"id":12,"name":"loss","op":"cross_entropy","inputs":[11,"target"],"output":[]}
])");

// A transformer-like block: embedding, layer_norm, q/k/v linears, attention, gelu (both
// forms), dropout, permute, matmul, softmax, bmm, mul (scalar and tensor), tanh, relu,
// reshape.
const std::string kBlock = trace_json(
    R"([{"name":"input","shape":[2,3],"dtype":"int64"},{"name":"target","shape":[6],"dtype":"int64"}])",
    R"([
 {"id":0,"name":"emb","op":"embedding","inputs":["input"],"output":[2,3,8],"params":[{"name":"emb.weight","shape":[10,8]}]},
 {"id":1,"name":"ln","op":"layer_norm","attrs":{"normalized_shape":[8]},"inputs":[0],"output":[2,3,8],
  "params":[{"name":"ln.weight","shape":[8]},{"name":"ln.bias","shape":[8]}]},
 {"id":2,"name":"q","op":"linear","attrs":{"bias":true},"inputs":[1],"output":[2,3,8],
  "params":[{"name":"q.weight","shape":[8,8]},{"name":"q.bias","shape":[8]}]},
 {"id":3,"name":"k","op":"linear","inputs":[1],"output":[2,3,8],"params":[{"name":"k.weight","shape":[8,8]}]},
 {"id":4,"name":"v","op":"linear","inputs":[1],"output":[2,3,8],"params":[{"name":"v.weight","shape":[8,8]}]},
 {"id":5,"name":"attn","op":"scaled_dot_product_attention","attrs":{"heads":2,"causal":true},"inputs":[2,3,4],"output":[2,3,8]},
 {"id":6,"name":"res","op":"add","inputs":[5,0],"output":[2,3,8]},
 {"id":7,"name":"gelu_t","op":"gelu","attrs":{"approximate":"tanh"},"inputs":[6],"output":[2,3,8]},
 {"id":8,"name":"drop","op":"dropout","attrs":{"p":0.1},"inputs":[7],"output":[2,3,8]},
 {"id":9,"name":"perm","op":"permute","attrs":{"dims":[0,2,1]},"inputs":[8],"output":[2,8,3]},
 {"id":10,"name":"mm","op":"matmul","inputs":[8,9],"output":[2,3,3]},
 {"id":11,"name":"sm","op":"softmax","attrs":{"dim":-1},"inputs":[10],"output":[2,3,3]},
 {"id":12,"name":"bmm","op":"bmm","inputs":[11,8],"output":[2,3,8]},
 {"id":13,"name":"scale","op":"mul","attrs":{"scalar":0.5},"inputs":[12],"output":[2,3,8]},
 {"id":14,"name":"th","op":"tanh","inputs":[13],"output":[2,3,8]},
 {"id":15,"name":"r","op":"relu","inputs":[14],"output":[2,3,8]},
 {"id":16,"name":"gelu_n","op":"gelu","inputs":[15],"output":[2,3,8]},
 {"id":17,"name":"prod","op":"mul","inputs":[16,13],"output":[2,3,8]},
 {"id":18,"name":"rs","op":"reshape","inputs":[17],"output":[6,8]},
 {"id":19,"name":"head","op":"linear","inputs":[18],"output":[6,10],"params":[{"name":"head.weight","shape":[10,8]}]},
 {"id":20,"name":"sg","op":"sigmoid","inputs":[19],"output":[6,10]},
 {"id":21,"name":"loss","op":"cross_entropy","inputs":[20,"target"],"output":[]}
])");

// Broadcasting and autograd tracking: `shift` requires grad, `proj` does not.
const std::string kBroadcast = trace_json(
    R"([{"name":"input","shape":[2,4]},{"name":"shift","shape":[4],"requires_grad":true},
        {"name":"proj","shape":[3,4,5]},{"name":"target","shape":[6],"dtype":"int64"}])",
    R"([
 {"id":0,"name":"pre","op":"add","inputs":["input","input"],"output":[2,4]},
 {"id":1,"name":"fc","op":"linear","inputs":[0],"output":[2,4],"params":[{"name":"fc.weight","shape":[4,4]}]},
 {"id":2,"name":"b","op":"add","inputs":[1,"shift"],"output":[2,4]},
 {"id":3,"name":"mm","op":"matmul","inputs":[2,"proj"],"output":[3,2,5]},
 {"id":4,"name":"nodrop","op":"dropout","attrs":{"p":0.0},"inputs":[3],"output":[3,2,5]},
 {"id":5,"name":"rs","op":"reshape","inputs":[4],"output":[6,5]},
 {"id":6,"name":"loss","op":"cross_entropy","inputs":[5,"target"],"output":[]}
])");

struct Expect {
  const char* layer;
  std::int64_t fwd, bwd_input, bwd_weight, saved;
};

void check_costs(const Trace& t, std::initializer_list<Expect> expected) {
  for (const auto& e : expected) {
    INFO("layer " << e.layer);
    LayerCost c = layer_cost(t, layer_named(t, e.layer));
    CHECK(c.flops_fwd == e.fwd);
    CHECK(c.flops_bwd_input == e.bwd_input);
    CHECK(c.flops_bwd_weight == e.bwd_weight);
    CHECK(c.saved_bytes == e.saved);
  }
}

}  // namespace

TEST_CASE("window and adaptive pooling sizes follow PyTorch's Pool.h formulas") {
  // floor((8 + 2*1 - 1*(3-1) - 1) / 2) + 1 = floor(7/2) + 1 = 4
  CHECK(window_output_size(8, 3, 1, 2, 1, false) == 4);
  // dilation 2: floor((8 + 0 - 2*2 - 1)/1) + 1 = 4
  CHECK(window_output_size(8, 3, 0, 1, 2, false) == 4);
  // 5 wide, kernel 2, stride 2: floor 2 windows; ceil_mode keeps a 3rd starting at 4 < 5
  CHECK(window_output_size(5, 2, 0, 2, 1, false) == 2);
  CHECK(window_output_size(5, 2, 0, 2, 1, true) == 3);
  // ceil((4 + 2 - 1 - 1)/3) + 1 = 3, but window 3 would start at 6 >= 4 + 1: dropped -> 2
  CHECK(window_output_size(4, 2, 1, 3, 1, true) == 2);
  // kernel larger than the padded input: no window fits
  CHECK(window_output_size(2, 5, 0, 1, 1, false) == -2);
  // 5 -> 3 windows [0,2) [1,4) [3,5): lengths 2 + 3 + 2 = 7
  CHECK(adaptive_window_total(5, 3) == 7);
  CHECK(adaptive_window_total(7, 1) == 7);
  CHECK(adaptive_window_total(4, 2) == 4);
}

TEST_CASE("broadcasting and torch.matmul shapes") {
  CHECK(broadcast_shapes({2, 1, 4}, {3, 1}) == Shape{2, 3, 4});
  CHECK(broadcast_shapes({4}, {2, 4}) == Shape{2, 4});
  CHECK_FALSE(broadcast_shapes({2, 3}, {4}).has_value());
  auto dot = matmul_dims({4}, {4});  // vector . vector -> scalar
  REQUIRE(dot);
  CHECK(dot->out == Shape{});
  CHECK(dot->k == 4);
  auto mv = matmul_dims({2, 3, 4}, {4});  // [2,3,4] @ [4] -> [2,3]
  REQUIRE(mv);
  CHECK(mv->out == Shape{2, 3});
  CHECK(mv->batch * mv->n * mv->k * mv->m == 24);
  auto vm = matmul_dims({4}, {5, 4, 6});  // [4] @ [5,4,6] -> [5,6]
  REQUIRE(vm);
  CHECK(vm->out == Shape{5, 6});
  auto bc = matmul_dims({7, 1, 2, 4}, {3, 4, 5});  // batch [7,1] x [3] -> [7,3]
  REQUIRE(bc);
  CHECK(bc->out == Shape{7, 3, 2, 5});
  CHECK(bc->batch == 21);
  CHECK_FALSE(matmul_dims({2, 3}, {4, 5}).has_value());
  CHECK_FALSE(matmul_dims({}, {4}).has_value());
  CHECK(normalize_dim(-1, 3) == 2);
  CHECK_FALSE(normalize_dim(3, 3).has_value());
  CHECK(normalize_dim(-1, 0) == 0);  // a scalar counts as rank 1
}

TEST_CASE("CNN ops: shapes and FLOPs worked out by hand") {
  Trace t = parse(kCnn);
  REQUIRE(t.layers.size() == 13);
  // conv1.weight 4*3*3*3 = 108, bias 4, bn 8, dw 4*1*3*3 = 36, fc 5*8 = 40
  CHECK(t.param_count() == 108 + 4 + 8 + 36 + 40);
  check_costs(
      t,
      {
          // conv1: out [2,4,4,4] = 128 elements, each 3*3*3 = 27 MACs: 3456 MACs.
          // fwd 2*3456 + 128 bias = 7040; no input grad (model input); dW 6912 + db 128.
          // Saves its input: 2*3*8*8 * 4 B = 1536.
          {"conv1", 7040, 0, 7040, 1536},
          // bn1 over 128 elements: 7/el fwd = 896; dgamma/dbeta 5/el = 640; dx 4/el = 512.
          // Saves x (512 B) + save_mean/save_invstd 2 * 4 channels * 4 B = 544.
          {"bn1", 896, 512, 640, 544},
          {"act1", 256, 256, 0, 512},  // relu6: 2/el both ways on 128 el; saves x
                                       // pool1: 32 outputs * 2*2 compares = 128; backward 1 add per
                                       // output = 32; saves x (512 B) + int64 indices 32 * 8 = 768.
          {"pool1", 128, 32, 0, 768},
          // dw: groups 4, out 32 elements * (1*3*3) = 288 MACs -> 576 each way; saves x 128 B.
          {"dw", 576, 576, 576, 128},
          {"res", 32, 0, 0, 0},        // add of equal shapes: dy passes through
          {"act2", 160, 288, 0, 128},  // silu: 5/el, backward 9/el on 32 el; saves x
                                       // avg: kernel 2 stride 1 on 2x2 -> 1x1: 8 outputs * 4 = 32;
                                       // backward 8 * (4+1) = 40
          {"avg", 32, 40, 0, 128},
          // gap: 2x2 -> 1x1: one window of 2*2 per plane, 8 planes: 32; backward 32 + 8
          {"gap", 32, 40, 0, 128},
          {"cat", 0, 0, 0, 0},
          {"flat", 0, 0, 0, 0},
          // fc: 2 rows * 8 in * 5 out = 80 MACs -> 160 each; saves x [2,8]: 64 B
          {"fc", 160, 160, 160, 64},
          // loss: M=2, C=5: 5*10 + 2*2 + 1 = 55; backward 4*10 + 2 + 1 = 43;
          // saves log-probs 40 B and int64 targets 16 B.
          {"loss", 55, 43, 0, 56},
      });
  CHECK(layer_named(t, "conv1").output == Shape{2, 4, 4, 4});
  CHECK(layer_named(t, "pool1").output == Shape{2, 4, 2, 2});  // stride defaults to kernel
  CHECK(layer_named(t, "pool1").attrs.stride == std::vector<std::int64_t>{2, 2});
  LayerCost conv1 = layer_cost(t, layer_named(t, "conv1"));
  CHECK(conv1.param_elements == 112);
  CHECK(conv1.param_bytes == 448);
  CHECK(conv1.output_bytes == 512);
  CHECK(conv1.input_bytes == 1536);
  CHECK(layer_cost(t, layer_named(t, "loss")).output_bytes == 4);  // float32 scalar
  CHECK(layer_named(t, "conv1").output_requires_grad);
}

TEST_CASE("transformer ops: shapes and FLOPs worked out by hand") {
  Trace t = parse(kBlock);
  // emb 10*8 + ln 16 + q 72 + k 64 + v 64 + head 80
  CHECK(t.param_count() == 376);
  check_costs(
      t,
      {
          // embedding: gather (0); backward index_add of 2*3*8 = 48 grads; saves 6 int64 ids
          {"emb", 0, 0, 48, 48},
          // layer_norm on 48 elements, 6 rows: 336 / dx 192 / dw 240; saves x 192 B +
          // mean and rstd 2 * 6 * 4 B = 240.
          {"ln", 336, 192, 240, 240},
          // q: 6 rows * 8 * 8 = 384 MACs: fwd 768 + 48 bias; dW 768 + db 48; saves x 192 B
          {"q", 816, 768, 816, 192},
          {"k", 768, 768, 768, 192},
          // attn: N=2, L=S=3, E=8, 2 heads: scores 2*2*3*3 = 36; q k^T = 2*2*3*3*8 = 288 = P v.
          // fwd 288 + 288 + 36 * (scale 1 + causal 1 + softmax 5) = 828.
          // bwd dV 288 + dP 288 + 36 * (softmax 4 + scale 1) + dQ 288 + dK 288 = 1332.
          // saves q, k, v (3 * 192 B) + probabilities 36 * 4 B = 720.
          {"attn", 828, 1332, 0, 720},
          {"res", 48, 0, 0, 0},
          {"gelu_t", 432, 864, 0, 192},  // gelu tanh: 9 and 18 per element on 48
          {"drop", 96, 96, 0, 48},       // dropout p=0.1: 2 and 2 per element; bool mask 48 B
          {"perm", 0, 0, 0, 0},
          // mm: [2,3,8] @ [2,8,3]: 2*2*3*8*3 = 288; dA and dB 288 each; saves both (192 B each)
          {"mm", 288, 576, 0, 384},
          {"sm", 90, 72, 0, 72},  // softmax on 18 elements: 5 and 4 per element; saves y
                                  // bmm: [2,3,3] @ [2,3,8]: 2*2*3*3*8 = 288; saves both: 72 + 192 B
          {"bmm", 288, 576, 0, 264},
          {"scale", 48, 48, 0, 0},       // x * 0.5: 1/el, backward dy * 0.5; saves nothing
          {"th", 48, 144, 0, 192},       // tanh 1, backward 3 per element; saves y
          {"r", 48, 48, 0, 192},         // relu 1 and 1; saves y
          {"gelu_n", 240, 528, 0, 192},  // exact gelu: 5 and 11 per element
          {"prod", 48, 96, 0, 384},      // a*b: dA = dy*b, dB = dy*a; saves both
          {"rs", 0, 0, 0, 0},
          // head: 6 * 8 * 10 = 480 MACs -> 960 each; saves x [6,8] 192 B
          {"head", 960, 960, 960, 192},
          {"sg", 240, 180, 0, 240},  // sigmoid on 60: 4 and 3 per element; saves y
                                     // loss: M=6, C=10: 5*60 + 12 + 1 = 313; backward 240 + 6 + 1 =
                                     // 247; saves 240 + 48
          {"loss", 313, 247, 0, 288},
      });
  CHECK(layer_named(t, "perm").output == Shape{2, 8, 3});
  CHECK(layer_named(t, "emb").output_dtype == DType::Float32);
  CHECK(layer_named(t, "attn").output == Shape{2, 3, 8});
}

TEST_CASE("broadcast gradients and autograd tracking") {
  Trace t = parse(kBroadcast);
  check_costs(
      t, {
             // input + input with nothing tracked: forward only
             {"pre", 8, 0, 0, 0},
             // fc: 2*4*4 = 32 MACs; its input is untracked, so no dX; dW 64; saves x 32 B
             {"fc", 64, 0, 64, 32},
             // [2,4] + shift [4]: shift's gradient sums dy over the batch: 8 - 4 = 4 adds
             {"b", 8, 4, 0, 0},
             // [2,4] @ proj [3,4,5]: batch 3, n 2, k 4, m 5: 2*3*2*4*5 = 240. Only A is tracked:
             // dA 240 + summing 3 broadcast copies 3*2*4 - 8 = 16; saves proj 60 * 4 B = 240.
             {"mm", 240, 256, 0, 240},
             {"nodrop", 0, 0, 0, 0},  // p = 0 returns its input
         });
  CHECK_FALSE(layer_named(t, "pre").output_requires_grad);
  CHECK(layer_named(t, "fc").output_requires_grad);
}

// ---- ATen capture: the parameter layer and the generic kinds (SCHEMA.md, Generic layers)
const std::string kGeneric = FUSIM_SOURCE_DIR "/traces/examples/generic_layers.json";

TEST_CASE("generic layers and parameter layers: FLOPs and saved bytes worked out by hand") {
  Trace t = load_trace(kGeneric);
  // w 16 + b 4 + table 40 + head 20 + 5; the int64 buffer "index" is no parameter.
  CHECK(t.param_count() == 85);
  check_costs(t,
              {
                  {"w", 0, 0, 0, 0},  // a view of w: its readers' backward writes w.grad
                  // input [2,4] @ w [4,4]: 2*2*4*4 = 64; only w is tracked: dB = 64 multiply-adds
                  // (+ 1*4*4 - 16 = 0 broadcast sums); saves the input (32 B) for dB.
                  {"h1", 64, 64, 0, 32},
                  {"h2", 64, 128, 0, 96},  // both tracked: 64 + 64; saves w 64 B + h1 32 B
                  // k = 1 on O = 8: forward 8; only input 0 is tracked: 1*8 + (8 - 8) = 8;
                  // saves every input: 32 + 32 B.
                  {"sub", 8, 8, 0, 64},
                  // k = 5: forward 40; input 0: 5*8 = 40; b [4] broadcast to [2,4]: 40 + 4 sums.
                  {"hsw", 40, 84, 0, 48},
                  // reduce 2 into O = 4: forward 1*2*4 = 8; backward 2*4 = 8; saves x 32 B.
                  {"mean", 8, 8, 0, 32},
                  {"slice", 0, 0, 0, 0},  // data movement of floats: nothing to keep
                  // 3 rows per bag into O = 8: 24 each way (only the table is tracked); saves
                  // the table 160 B and the int64 ids 48 B.
                  {"bag", 24, 24, 0, 208},
                  {"keep", 0, 0, 0, 0},  // made from nothing: untracked
                  {"pos", 8, 0, 0, 0},   // a bool result is never tracked
                  // where(pos, mix, keep): only mix is tracked: 8; saves 8 + 32 + 32 B.
                  {"masked", 8, 8, 0, 72},
                  // contraction 4 into O = 8: 2*4*8 = 64, and 64 per tracked operand; saves both.
                  {"gm", 64, 128, 0, 96},
                  {"gather", 0, 0, 0, 16},  // keeps its int64 index [2]
              });
  CHECK(layer_named(t, "w").output_requires_grad);
  CHECK_FALSE(layer_named(t, "index").output_requires_grad);
  CHECK_FALSE(layer_named(t, "pos").output_requires_grad);
  CHECK(layer_named(t, "pos").output_dtype == DType::Bool);
  CHECK(layer_named(t, "index").output_dtype == DType::Int64);
  REQUIRE(t.capture.has_value());
  CHECK(t.capture->path == "aten");
  CHECK(t.capture->control_flow == "as-run-shapes");
}

TEST_CASE("every op kind is covered by the cost tests") {
  std::set<OpKind> seen;
  for (const auto* text : {&kCnn, &kBlock, &kBroadcast, &fusim::test::kLlm})
    for (const auto& l : parse(*text).layers) seen.insert(l.op);
  for (const auto& l : load_trace(kGeneric).layers) seen.insert(l.op);
  for (OpKind op : all_op_kinds()) {
    INFO(to_string(op));
    CHECK(seen.count(op) == 1);
  }
}
