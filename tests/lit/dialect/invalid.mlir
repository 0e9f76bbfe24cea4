// Each verifier rejection of the cortiq dialect, with its message.
// RUN: cortiq-opt %s -split-input-file -verify-diagnostics

cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 2 head_dim 16
func.func @read_before_write(%q: tensor<64xf32>, %position: i32) -> tensor<64xf32> {
  // expected-error @+1 {{reads cache @kv_cache_2 before any layer writes it}}
  %o = cortiq.attention layer 2 sliding %q over @kv_cache_2 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

cortiq.kv_cache @kv_cache_3 layer 3 full kv_heads 2 head_dim 32
func.func @append_after_read(%q: tensor<128xf32>, %k: tensor<64xf32>, %position: i32) -> tensor<128xf32> {
  // expected-error @+1 {{reads cache @kv_cache_3 before any layer writes it}}
  %o = cortiq.attention layer 3 full %q over @kv_cache_3 at %position heads 4 scale 1.0 : tensor<128xf32> -> tensor<128xf32>
  cortiq.kv_append %k, %k into @kv_cache_3 at %position : tensor<64xf32>, tensor<64xf32>
  return %o : tensor<128xf32>
}

// -----

// A shared sliding layer must not read the full layer's cache.
cortiq.kv_cache @kv_cache_3 layer 3 full kv_heads 2 head_dim 16
func.func @shared_type_mismatch(%q: tensor<64xf32>, %k: tensor<32xf32>, %position: i32) -> tensor<64xf32> {
  cortiq.kv_append %k, %k into @kv_cache_3 at %position : tensor<32xf32>, tensor<32xf32>
  // expected-error @+1 {{layer 4 is sliding attention but reads the full cache @kv_cache_3 of layer 3}}
  %o = cortiq.attention layer 4 sliding %q over @kv_cache_3 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

// A shared read whose source has another head width.
cortiq.kv_cache @kv_cache_3 layer 3 full kv_heads 2 head_dim 32
func.func @shared_head_width_mismatch(%q: tensor<64xf32>, %k: tensor<64xf32>, %position: i32) -> tensor<64xf32> {
  cortiq.kv_append %k, %k into @kv_cache_3 at %position : tensor<64xf32>, tensor<64xf32>
  // expected-error @+1 {{query head width 16 differs from the head_dim 32 of cache @kv_cache_3 (layer 3)}}
  %o = cortiq.attention layer 7 full %q over @kv_cache_3 at %position heads 4 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

cortiq.kv_cache @kv_cache_3 layer 3 full kv_heads 2 head_dim 32
func.func @window_on_full_layer(%q: tensor<128xf32>, %k: tensor<64xf32>, %position: i32) -> tensor<128xf32> {
  cortiq.kv_append %k, %k into @kv_cache_3 at %position : tensor<64xf32>, tensor<64xf32>
  // expected-error @+1 {{a full-attention layer has no window}}
  %o = cortiq.attention layer 3 full %q over @kv_cache_3 at %position heads 4 window 8 scale 1.0 : tensor<128xf32> -> tensor<128xf32>
  return %o : tensor<128xf32>
}

// -----

cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 2 head_dim 16
func.func @sliding_without_window(%q: tensor<64xf32>, %k: tensor<32xf32>, %position: i32) -> tensor<64xf32> {
  cortiq.kv_append %k, %k into @kv_cache_2 at %position : tensor<32xf32>, tensor<32xf32>
  // expected-error @+1 {{a sliding-attention layer needs a positive window}}
  %o = cortiq.attention layer 2 sliding %q over @kv_cache_2 at %position heads 4 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 3 head_dim 16
func.func @heads_not_multiple_of_kv_heads(%q: tensor<64xf32>, %k: tensor<48xf32>, %position: i32) -> tensor<64xf32> {
  cortiq.kv_append %k, %k into @kv_cache_2 at %position : tensor<48xf32>, tensor<48xf32>
  // expected-error @+1 {{heads 4 is not a multiple of the 3 kv heads of @kv_cache_2}}
  %o = cortiq.attention layer 2 sliding %q over @kv_cache_2 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 2 head_dim 16
func.func @append_shape_mismatch(%k: tensor<64xf32>, %position: i32) {
  // expected-error @+1 {{key/value of 64/64 elements do not match cache @kv_cache_2 (2 kv heads x 16)}}
  cortiq.kv_append %k, %k into @kv_cache_2 at %position : tensor<64xf32>, tensor<64xf32>
  return
}

// -----

func.func @unknown_cache(%k: tensor<32xf32>, %position: i32) {
  // expected-error @+1 {{cache @nowhere does not name a cortiq.kv_cache}}
  cortiq.kv_append %k, %k into @nowhere at %position : tensor<32xf32>, tensor<32xf32>
  return
}

// -----

cortiq.weight @w : tensor<64x64xf32>
func.func @linear_shape_mismatch(%x: tensor<32xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{weight @w of shape [64, 64] does not map 32 inputs to 64 outputs}}
  %y = cortiq.linear @w(%x) : tensor<32xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @linear_unknown_weight(%x: tensor<32xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{weight @missing does not name a cortiq.weight}}
  %y = cortiq.linear @missing(%x) : tensor<32xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

cortiq.weight @table : tensor<512x64xf32>
func.func @embedding_width_mismatch(%token: i32) -> tensor<32xf32> {
  // expected-error @+1 {{result has 32 elements but table @table rows have 64}}
  %e = cortiq.embedding @table[%token] scale 8.0 : tensor<32xf32>
  return %e : tensor<32xf32>
}

// -----

cortiq.weight @table : tensor<512x64xf32>
func.func @lm_head_mismatch(%h: tensor<32xf32>) -> tensor<512xf32> {
  // expected-error @+1 {{table @table of shape [512, 64] does not map 32 inputs to 512 logits}}
  %l = cortiq.lm_head @table(%h) : tensor<32xf32> -> tensor<512xf32>
  return %l : tensor<512xf32>
}

// -----

cortiq.weight @gain : tensor<32xf32>
func.func @norm_gain_mismatch(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{gain @gain of type 'tensor<32xf32>' does not match group 16}}
  %y = cortiq.rms_norm %x gain @gain group 16 eps 1.0e-6 : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @norm_group_not_dividing(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{group 24 does not divide the input length 64}}
  %y = cortiq.rms_norm %x group 24 eps 1.0e-6 : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @add_shape_mismatch(%a: tensor<64xf32>, %b: tensor<32xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "cortiq.add"(%a, %b) : (tensor<64xf32>, tensor<32xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @rope_default_partial(%x: tensor<64xf32>, %position: i32) -> tensor<64xf32> {
  // expected-error @+1 {{default RoPE rotates all 8 pairs, not 4}}
  %y = cortiq.rope default %x at %position theta 1.0e4 head_dim 16 pairs 4 : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @rope_too_many_pairs(%x: tensor<64xf32>, %position: i32) -> tensor<64xf32> {
  // expected-error @+1 {{pairs 9 must be in [1, 8]}}
  %y = cortiq.rope proportional %x at %position theta 1.0e6 head_dim 16 pairs 9 : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @rope_head_dim(%x: tensor<64xf32>, %position: i32) -> tensor<64xf32> {
  // expected-error @+1 {{head_dim 24 must be even and divide the input length 64}}
  %y = cortiq.rope default %x at %position theta 1.0e4 head_dim 24 pairs 12 : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @slice_out_of_range(%x: tensor<64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{slice [56, 72) is outside the input of 64 elements}}
  %y = cortiq.slice %x[56] : tensor<64xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

cortiq.weight @s : tensor<2xf32>
func.func @layer_scalar_not_scalar(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{scalar @s must have one element, has type 'tensor<2xf32>'}}
  %y = cortiq.layer_scalar %x by @s : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @softcap_nonpositive(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{cap must be positive}}
  %y = cortiq.softcap %x cap 0.0 : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// expected-error @+1 {{element type must be f32, bf16 or f16, has 'i8'}}
cortiq.weight @w8 : tensor<4x4xi8>

// -----

// expected-error @+1 {{'cortiq.weight' op must have a static-shape tensor type}}
cortiq.weight @dyn : tensor<?x4xf32>

// -----

cortiq.weight @q : tensor<64x64xbf16>
cortiq.weight @k : tensor<32x32xbf16>
// expected-error @+1 {{source @k has 32 columns, the concatenation 64}}
cortiq.weight @qk = concat_rows(@q, @k) : tensor<96x64xbf16>

// -----

cortiq.weight @q : tensor<64x64xbf16>
cortiq.weight @k : tensor<32x64xbf16>
// expected-error @+1 {{sources have 96 rows in all, the type says 100}}
cortiq.weight @qk = concat_rows(@q, @k) : tensor<100x64xbf16>

// -----

cortiq.weight @q : tensor<64x64xbf16>
cortiq.weight @g : tensor<32xf32>
// expected-error @+1 {{columns @g of type 'tensor<32xf32>' does not match the columns of 'tensor<64x64xbf16>'}}
cortiq.weight @q.g = scale(@q) columns(@g) : tensor<64x64xbf16>

// -----

cortiq.weight @q : tensor<64x64xbf16>
// expected-error @+1 {{source @q has type 'tensor<64x64xbf16>', not the shape of 'tensor<32x64xbf16>'}}
cortiq.weight @q.s = scale(@q) factor(2.0) : tensor<32x64xbf16>

// -----

// expected-error @+1 {{source @nowhere does not name a cortiq.weight}}
cortiq.weight @q.s = scale(@nowhere) factor(2.0) : tensor<32x64xbf16>

// -----

// expected-error @+1 {{expected 'concat_rows' or 'scale', got 'transpose'}}
cortiq.weight @t = transpose(@q) : tensor<64x64xbf16>

// -----

cortiq.weight @g : tensor<32xf32>
func.func @residual_gain_mismatch(%h: tensor<64xf32>, %x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{gain @g of type 'tensor<32xf32>' does not match group 64}}
  %r = cortiq.residual_rms_norm %h, %x gain @g group 64 eps 1.0e-6 : tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

cortiq.weight @s : tensor<2xf32>
func.func @residual_scalar_not_scalar(%h: tensor<64xf32>, %x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{scalar @s must have one element}}
  %r = cortiq.residual_rms_norm %h, %x scalar @s group 64 eps 1.0e-6 : tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// expected-error @+1 {{layer must be >= 0, is -1}}
cortiq.kv_cache @kv_cache_x layer -1 sliding kv_heads 2 head_dim 16

// -----

func.func @slice_negative_offset(%x: tensor<64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{slice [-4, 12) is outside the input of 64 elements}}
  %y = cortiq.slice %x[-4] : tensor<64xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

func.func @slice_offset_overflow(%x: tensor<64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{slice offset 9223372036854775800 is outside the input of 64 elements}}
  %y = cortiq.slice %x[9223372036854775800] : tensor<64xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// expected-error @+1 {{derives from itself through @self}}
cortiq.weight @self = concat_rows(@self) : tensor<4x4xf32>

// -----

// expected-error @+1 {{derives from itself through @b}}
cortiq.weight @a = scale(@b) factor(2.0) : tensor<4x4xf32>
cortiq.weight @b = scale(@a) factor(2.0) : tensor<4x4xf32>

// -----

func.func @rope_infinite_theta(%x: tensor<64xf32>, %position: i32) -> tensor<64xf32> {
  // expected-error @+1 {{theta must be positive and finite}}
  %y = cortiq.rope default %x at %position theta 0x7FF0000000000000 head_dim 16 pairs 8 : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 2 head_dim 16
func.func @attention_nan_scale(%q: tensor<64xf32>, %k: tensor<32xf32>, %position: i32) -> tensor<64xf32> {
  cortiq.kv_append %k, %k into @kv_cache_2 at %position : tensor<32xf32>, tensor<32xf32>
  // expected-error @+1 {{scale must be finite}}
  %o = cortiq.attention layer 2 sliding %q over @kv_cache_2 at %position heads 4 window 8 scale 0x7FC00000 : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

// expected-error @+1 {{expected a storage format (f32, bf16, q8_0, q4_0, f16, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, q4_0x16, q8_0x16, q4_kx16 or q5_kx16), got 'q8_1'}}
cortiq.weight @w stored(q8_1) : tensor<32x64xf32>

// -----

// expected-error @+1 {{q5_k blocks need a matrix of whole 256-weight rows, the type is 'tensor<32x64xf32>'}}
cortiq.weight @w stored(q5_k) : tensor<32x64xf32>

// -----

// expected-error @+1 {{q8_0 blocks need a matrix of whole 32-weight rows, the type is 'tensor<32x48xf32>'}}
cortiq.weight @w stored(q8_0) : tensor<32x48xf32>

// -----

// expected-error @+1 {{q4_0 blocks need a matrix of whole 32-weight rows, the type is 'tensor<64xf32>'}}
cortiq.weight @g stored(q4_0) : tensor<64xf32>

// -----

// expected-error @+1 {{checkpoint(bf16) names no block format: the element type gives the others}}
cortiq.weight @w checkpoint(bf16) : tensor<32x64xbf16>

// -----

// expected-error @+1 {{a weight read from q8_0 blocks has f32 elements (the decoded values), has 'bf16'}}
cortiq.weight @w checkpoint(q8_0) : tensor<32x64xbf16>

// -----

cortiq.weight @w checkpoint(q8_0) : tensor<32x64xf32>
// expected-error @+1 {{a derived weight has no checkpoint format}}
cortiq.weight @w.s = scale(@w) factor(2.0) checkpoint(q8_0) : tensor<32x64xf32>

// -----

// The storage format is an attribute of the op, not a string.
// expected-error @+1 {{attribute 'stored_format' failed to satisfy constraint: weight storage format}}
cortiq.weight @w {stored_format = "q8_0"} : tensor<32x64xf32>

// -----

// The dialect's discardable attributes: cortiq.model, cortiq.arena_bytes, cortiq.arena_offset,
// cortiq.rows.
// expected-error @+1 {{'cortiq.stored_format' is not an attribute of the cortiq dialect}}
module attributes {cortiq.stored_format = "q8_0"} {}

// -----

// expected-error @+1 {{'cortiq.model' entry 'hidden_size' must be an integer}}
module attributes {cortiq.model = {source = "x", hidden_size = "64"}} {}

// -----

// expected-error @+1 {{'cortiq.model' entry 'source' must be a string}}
module attributes {cortiq.model = {source = 3 : i64}} {}

// -----

func.func @f() {
  // expected-error @+1 {{'cortiq.model' is a dictionary on the module}}
  return {cortiq.model = {}}
}

// -----

// expected-error @+1 {{'cortiq.arena_bytes' must be an i64 >= 0, is -64 : i64}}
module attributes {cortiq.arena_bytes = -64 : i64} {}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'cortiq.arena_offset' must be a multiple of 4 (an f32 boundary), is 6}}
  %y = cortiq.gelu_tanh %x {cortiq.arena_offset = 6 : i64} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'cortiq.arena_offset' must be an i64 >= 0, a multiple of 4, is 6.400000e+01 : f32}}
  %y = cortiq.gelu_tanh %x {cortiq.arena_offset = 64.0 : f32} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) {
  // expected-error @+1 {{'cortiq.arena_offset' belongs on an op with one result}}
  return {cortiq.arena_offset = 0 : i64} %x : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'cortiq.rows' must be "all" or "logits", is "last"}}
  %y = cortiq.gelu_tanh %x {cortiq.rows = "last"} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'cortiq.rows' must be "all" or "logits", is 1 : i32}}
  %y = cortiq.gelu_tanh %x {cortiq.rows = 1 : i32} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'cortiq.rows' belongs on an op of the decode step}}
  return {cortiq.rows = "all"} %x : tensor<64xf32>
}

// -----

// expected-error @+1 {{'cortiq.rows' belongs on an op of the decode step}}
cortiq.weight @w {cortiq.rows = "all"} : tensor<64x64xf32>
