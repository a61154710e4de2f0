// The LLM ops of issue 20 (rms_norm, rope, swiglu, grouped-query attention) and weight
// tying: shapes, FLOPs and bytes against hand-worked values, the file round trip, and the
// malformed forms each is refused with.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "llm_trace_text.h"
#include "workload/cost.h"
#include "workload/trace_io.h"

using namespace fusim;
using namespace fusim::workload;
using fusim::test::kLlm;
using fusim::test::layer_named;
using fusim::test::parse;
using fusim::test::trace_json;

namespace {
struct Expect {
  const char* layer;
  std::int64_t fwd, bwd_input, bwd_weight, saved;
};
}  // namespace

TEST_CASE("LLM ops: FLOPs and saved bytes of a Llama-style block, worked by hand") {
  Trace t = parse(kLlm);
  // emb 16x8 + norm 8 + q 64 + k 32 + v 32 + fc1 96 + fc2 48; the tied head adds nothing.
  CHECK(t.param_count() == 408);
  const Expect expected[] = {
      // 8 rows of 8 (64 elements): 4/el forward, 6/el dx, 3/el dw; saves x (256 B) + one
      // float32 rstd per row (32 B).
      {"norm", 256, 384, 192, 288},
      // k: 8 rows x 8 in x 4 out = 256 MACs.
      {"k", 512, 512, 512, 256},
      // rope: 3 FLOPs per element each way on 64 (q) and 32 (k) elements; nothing saved.
      {"rq", 192, 192, 0, 0},
      {"rk", 96, 96, 0, 0},
      // GQA: N=2, L=S=4, query E=8 (2 heads of 4), one k/v head, output 8 wide.
      // scores 2*2*4*4 = 64; q k^T = 2*2*4*4*8 = 512 = P v (per query head).
      // fwd 512 + 512 + 64 * (scale 1 + causal 1 + softmax 5) = 1472.
      // bwd dV 512 + dP 512 + 64 * 5 + dQ 512 + dK 512 = 2368, + group sums (2/1 - 1) *
      // (32 k + 32 v elements) = 2432. Saves q 256 B, k and v 128 B each, P 64 * 4 B.
      {"attn", 1472, 2432, 0, 768},
      // swiglu [2,4,12] -> [2,4,6]: 48 outputs x 6 forward, x 16 backward; saves x (384 B).
      {"act", 288, 768, 0, 384},
      // the tied head: 8 rows x 8 x 16 = 1024 MACs each way, dW into the shared weight.
      {"head", 2048, 2048, 2048, 256},
  };
  for (const auto& e : expected) {
    INFO("layer " << e.layer);
    LayerCost c = layer_cost(t, layer_named(t, e.layer));
    CHECK(c.flops_fwd == e.fwd);
    CHECK(c.flops_bwd_input == e.bwd_input);
    CHECK(c.flops_bwd_weight == e.bwd_weight);
    CHECK(c.saved_bytes == e.saved);
  }
  CHECK(layer_named(t, "attn").attrs.kv_heads == 1);
  CHECK(layer_named(t, "rk").attrs.theta == 10000.0);  // the default
  CHECK(layer_named(t, "rq").attrs.theta == 500000.0);
  CHECK(layer_named(t, "head").params[0].tied_to == "emb.weight");
}

TEST_CASE("LLM ops and tied params survive the file round trip") {
  Trace t = parse(kLlm);
  const std::string path = std::string(FUSIM_BINARY_DIR) + "/llm_roundtrip.json";
  save_trace(t, path);
  Trace back = load_trace(path);
  CHECK(back == t);
  // kv_heads equal to heads is stored as 0 (plain multi-head attention), so both spellings
  // read back equal.
  const std::string mha = trace_json(
      R"([{"name":"input","shape":[2,3,8]},{"name":"target","shape":[6],"dtype":"int64"}])",
      R"([{"id":0,"name":"a","op":"scaled_dot_product_attention","attrs":{"heads":2,"kv_heads":2},
           "inputs":["input","input","input"],"output":[2,3,8]},
          {"id":1,"name":"r","op":"reshape","inputs":[0],"output":[6,8]},
          {"id":2,"name":"loss","op":"cross_entropy","inputs":[1,"target"],"output":[]}])");
  CHECK(layer_named(parse(mha), "a").attrs.kv_heads == 0);
}

TEST_CASE("malformed LLM layers are refused with the JSON path and the expectation") {
  auto with = [](const std::string& from, const std::string& to) {
    std::string text = kLlm;
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  struct Bad {
    const char* what;
    std::string text, fragment;
  };
  const Bad cases[] = {
      {"kv_heads not dividing heads",
       with(R"("heads":2,"kv_heads":1,)", R"("heads":2,"kv_heads":3,)"),
       "t.json: layers[7].attrs.kv_heads: expected a divisor of heads (2) for grouped-query "
       "attention, got 3"},
      {"key width not kv_heads heads", with(R"("heads":2,"kv_heads":1,)", R"("heads":2,)"),
       "t.json: layers[7].inputs[1]: expected key [2, S, 8] to match query [2, 4, 8] (2 of 2 heads "
       "of size 4), got [2, 4, 4] from layer 6"},
      {"rope on an odd head size",
       with(R"("heads":2,"theta":500000)", R"("heads":8,"theta":500000)"),
       "t.json: layers[5].attrs.heads: expected a number of heads whose size divides E = 8 into an "
       "even head_dim, got 8"},
      {"rope without heads",
       with(R"("attrs":{"heads":1},"inputs":[3])", R"("attrs":{},"inputs":[3])"),
       "t.json: layers[6].attrs.heads: expected a member \"heads\" (missing)"},
      {"rope theta", with(R"("theta":500000)", R"("theta":0)"),
       "t.json: layers[5].attrs.theta: expected a positive number, got 0"},
      {"rms_norm of another width",
       with(R"("normalized_shape":[8],"eps":1e-5)", R"("normalized_shape":[4],"eps":1e-5)"),
       "t.json: layers[1].attrs.normalized_shape: expected the trailing dims of the input [2, 4, "
       "8], "
       "got [4]"},
      {"rms_norm with a bias",
       with(R"("params":[{"name":"norm.weight","shape":[8]}])",
            R"("params":[{"name":"norm.weight","shape":[8]},{"name":"norm.bias","shape":[8]}])"),
       "t.json: layers[1].params: expected 1 param (weight) for rms_norm (or none without affine), "
       "got 2"},
      {"swiglu of an odd width",
       with(R"("output":[2,4,12],"params":[{"name":"fc1.weight","shape":[12,8]}])",
            R"("output":[2,4,11],"params":[{"name":"fc1.weight","shape":[11,8]}])"),
       "t.json: layers[10].inputs[0]: expected a tensor [..., 2 * F] (gate and up halves), got "
       "[2, 4, 11] from layer 9"},
      {"tied to an unknown param", with(R"("tied_to":"emb.weight")", R"("tied_to":"nope.weight")"),
       "t.json: layers[12].params[0].tied_to: expected the name of an untied param of another "
       "layer, got \"nope.weight\""},
      {"tied to another shape", with(R"("tied_to":"emb.weight")", R"("tied_to":"q.weight")"),
       "t.json: layers[12].params[0].tied_to: expected a param of the same shape, dtype and "
       "requires_grad ([16, 8] float32), got \"q.weight\" ([8, 8] float32)"},
      {"tied_to on a model input",
       with(R"({"name":"target","shape":[8],"dtype":"int64"})",
            R"({"name":"target","shape":[8],"dtype":"int64","tied_to":"emb.weight"})"),
       "t.json: inputs[1].tied_to: expected one of the known members (name, shape, dtype, "
       "requires_grad)"},
  };
  for (const auto& bad : cases) {
    INFO(bad.what);
    try {
      parse(bad.text);
      FAIL_CHECK("accepted: " << bad.what);
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains(bad.fragment));
    }
  }
}
