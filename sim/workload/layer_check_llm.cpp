// The output-shape rules of the LLM ops (issue 20; traces/SCHEMA.md): rms_norm, rope and
// swiglu, as Megatron-core and Hugging Face Llama compute them.
#include <algorithm>

#include "workload/layer_check.h"

namespace fusim::workload {

// RMSNorm (Zhang & Sennrich 2019): like layer_norm's trailing normalized_shape, a weight of
// that shape (or none), no bias.
InferredOutput LayerCheck::rms_norm() const {
  arity(1);
  floating_input(0);
  const Shape& x = in(0);
  const LayerAttrs& a = l_.attrs;
  Shape ns(a.normalized_shape.begin(), a.normalized_shape.end());
  bool ok = ns.size() <= x.size() &&
            std::equal(ns.begin(), ns.end(), x.end() - static_cast<std::ptrdiff_t>(ns.size()));
  if (!ok)
    fail("attrs.normalized_shape",
         fmt::format("the trailing dims of the input {}, got {}", to_string(x), to_string(ns)));
  if (!l_.params.empty()) {
    params({"weight"}, " (or none without affine)");
    param_shape(0, ns, "normalized_shape");
  }
  return same_as_input();
}

// Rotary position embedding of q or k [N, S, heads * d] (Su et al. 2021) in the rotate-half
// form of Megatron-core's apply_rotary_pos_emb and Hugging Face's LlamaAttention: each head's
// d dims are split in halves rotated by position-dependent angles, so d must be even.
InferredOutput LayerCheck::rope() const {
  arity(1);
  floating_input(0);
  no_params();
  rank_exactly(0, 3, "[N, S, heads * head_dim]");
  const Shape& x = in(0);
  const std::int64_t heads = l_.attrs.heads;
  if (x[2] % heads != 0 || (x[2] / heads) % 2 != 0)
    fail("attrs.heads",
         fmt::format("a number of heads whose size divides E = {} into an even head_dim, got {}",
                     x[2], heads));
  return same_as_input();
}

// SwiGLU of a fused gate+up projection (Shazeer 2020; Megatron-core's swiglu:
// `x = torch.chunk(x, 2, dim=-1); return F.silu(x[0]) * x[1]`): [..., 2F] -> [..., F].
InferredOutput LayerCheck::swiglu() const {
  arity(1);
  floating_input(0);
  no_params();
  rank_at_least(0, 1, "[..., 2 * F]");
  const Shape& x = in(0);
  if (x.back() % 2 != 0)
    fail(in_where(0), fmt::format("a tensor [..., 2 * F] (gate and up halves), got {} {}",
                                  to_string(x), origin(0)));
  Shape out = x;
  out.back() /= 2;
  return {out, in_dtype(0), "[..., F]: silu of the first half times the second"};
}

}  // namespace fusim::workload
