// fuse-linear: linears with the same input become one linear over concat_rows + slice views;
// a lone linear (the q of a KV-shared layer) and linears of different inputs stay apart.
// RUN: cortiq-opt %s -split-input-file -fuse-linear | FileCheck %s

cortiq.weight @layers.0.q_proj.weight : tensor<64x64xbf16>
cortiq.weight @layers.0.k_proj.weight : tensor<32x64xbf16>
cortiq.weight @layers.0.v_proj.weight : tensor<32x64xbf16>
// CHECK: cortiq.weight @"layers.0.{q,k,v}_proj.weight" = concat_rows(@layers.0.q_proj.weight, @layers.0.k_proj.weight, @layers.0.v_proj.weight) : tensor<128x64xbf16>
// CHECK-LABEL: func.func @qkv
func.func @qkv(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<32xf32>, tensor<32xf32>) {
  // CHECK: %[[F:.*]] = cortiq.linear @"layers.0.{q,k,v}_proj.weight"(%{{.*}}) : tensor<64xf32> -> tensor<128xf32>
  // CHECK-NEXT: %[[Q:.*]] = cortiq.slice %[[F]][0] : tensor<128xf32> -> tensor<64xf32>
  // CHECK-NEXT: %[[K:.*]] = cortiq.slice %[[F]][64] : tensor<128xf32> -> tensor<32xf32>
  // CHECK-NEXT: %[[V:.*]] = cortiq.slice %[[F]][96] : tensor<128xf32> -> tensor<32xf32>
  // CHECK-NOT: cortiq.linear
  // CHECK: return %[[Q]], %[[K]], %[[V]]
  %q = cortiq.linear @layers.0.q_proj.weight(%x) : tensor<64xf32> -> tensor<64xf32>
  %k = cortiq.linear @layers.0.k_proj.weight(%x) : tensor<64xf32> -> tensor<32xf32>
  %v = cortiq.linear @layers.0.v_proj.weight(%x) : tensor<64xf32> -> tensor<32xf32>
  return %q, %k, %v : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>
}

// -----

// Mixed dtypes stack into f32.
cortiq.weight @gate : tensor<128x64xbf16>
cortiq.weight @up : tensor<128x64xf32>
// CHECK: cortiq.weight @"{gate,up}" = concat_rows(@gate, @up) : tensor<256x64xf32>
func.func @mixed(%y: tensor<64xf32>) -> tensor<128xf32> {
  %g = cortiq.linear @gate(%y) : tensor<64xf32> -> tensor<128xf32>
  %u = cortiq.linear @up(%y) : tensor<64xf32> -> tensor<128xf32>
  %m = cortiq.mul %g, %u : tensor<128xf32>
  return %m : tensor<128xf32>
}

// -----

cortiq.weight @q : tensor<64x64xf32>
cortiq.weight @o : tensor<64x64xf32>
// CHECK-NOT: concat_rows
// CHECK-LABEL: func.func @different_inputs
func.func @different_inputs(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK: cortiq.linear @q(
  // CHECK: cortiq.linear @o(
  // CHECK-NOT: cortiq.slice
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  %o = cortiq.linear @o(%y) : tensor<64xf32> -> tensor<64xf32>
  %s = cortiq.add %q, %o : tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// Storage formats: GGUF Q8_0 blocks (checkpoint(q8_0)) stack into a Q8_0 weight; weights
// stored in different formats do not share a row stream.
cortiq.weight @gate checkpoint(q8_0) : tensor<128x64xf32>
cortiq.weight @up checkpoint(q8_0) : tensor<128x64xf32>
cortiq.weight @q stored(q4_0) : tensor<64x64xf32>
cortiq.weight @k stored(q8_0) : tensor<32x64xf32>
// CHECK: cortiq.weight @"{gate,up}" = concat_rows(@gate, @up) stored(q8_0) : tensor<256x64xf32>
// CHECK-NOT: concat_rows(@q
// CHECK-LABEL: func.func @formats
func.func @formats(%y: tensor<64xf32>, %x: tensor<64xf32>) -> (tensor<128xf32>, tensor<64xf32>, tensor<32xf32>) {
  // CHECK: cortiq.linear @"{gate,up}"
  // CHECK: cortiq.linear @q(
  // CHECK: cortiq.linear @k(
  %g = cortiq.linear @gate(%y) : tensor<64xf32> -> tensor<128xf32>
  %u = cortiq.linear @up(%y) : tensor<64xf32> -> tensor<128xf32>
  %m = cortiq.mul %g, %u : tensor<128xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  %k = cortiq.linear @k(%x) : tensor<64xf32> -> tensor<32xf32>
  return %m, %q, %k : tensor<128xf32>, tensor<64xf32>, tensor<32xf32>
}
