#pragma once
// A Llama-style block as trace JSON (issue 20): rms_norm, grouped-query attention (2 query
// heads of size 4 sharing 1 key/value head), rope on q and k, swiglu of a fused gate+up
// projection, and an LM head tied to the embedding.
#include <string>

#include "trace_text.h"

namespace fusim::test {

inline const std::string kLlm = trace_json(
    R"([{"name":"input","shape":[2,4],"dtype":"int64"},{"name":"target","shape":[8],"dtype":"int64"}])",
    R"([
 {"id":0,"name":"emb","op":"embedding","inputs":["input"],"output":[2,4,8],"params":[{"name":"emb.weight","shape":[16,8]}]},
 {"id":1,"name":"norm","op":"rms_norm","attrs":{"normalized_shape":[8],"eps":1e-5},"inputs":[0],"output":[2,4,8],
  "params":[{"name":"norm.weight","shape":[8]}]},
 {"id":2,"name":"q","op":"linear","inputs":[1],"output":[2,4,8],"params":[{"name":"q.weight","shape":[8,8]}]},
 {"id":3,"name":"k","op":"linear","inputs":[1],"output":[2,4,4],"params":[{"name":"k.weight","shape":[4,8]}]},
 {"id":4,"name":"v","op":"linear","inputs":[1],"output":[2,4,4],"params":[{"name":"v.weight","shape":[4,8]}]},
 {"id":5,"name":"rq","op":"rope","attrs":{"heads":2,"theta":500000},"inputs":[2],"output":[2,4,8]},
 {"id":6,"name":"rk","op":"rope","attrs":{"heads":1},"inputs":[3],"output":[2,4,4]},
 {"id":7,"name":"attn","op":"scaled_dot_product_attention","attrs":{"heads":2,"kv_heads":1,"causal":true},
  "inputs":[5,6,4],"output":[2,4,8]},
 {"id":8,"name":"res","op":"add","inputs":[7,0],"output":[2,4,8]},
 {"id":9,"name":"fc1","op":"linear","inputs":[8],"output":[2,4,12],"params":[{"name":"fc1.weight","shape":[12,8]}]},
 {"id":10,"name":"act","op":"swiglu","inputs":[9],"output":[2,4,6]},
 {"id":11,"name":"fc2","op":"linear","inputs":[10],"output":[2,4,8],"params":[{"name":"fc2.weight","shape":[8,6]}]},
 {"id":12,"name":"head","op":"linear","inputs":[11],"output":[2,4,16],
  "params":[{"name":"head.weight","shape":[16,8],"tied_to":"emb.weight"}]},
 {"id":13,"name":"rs","op":"reshape","inputs":[12],"output":[8,16]},
 {"id":14,"name":"loss","op":"cross_entropy","inputs":[13,"target"],"output":[]}
])");

}  // namespace fusim::test
