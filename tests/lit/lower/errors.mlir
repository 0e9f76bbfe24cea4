// Lowering refuses what the runtime cannot run, naming the function, weight or op.
// RUN: not cortiq-translate --cortiq-to-plan -split-input-file %s 2>&1 | FileCheck %s
// RUN: not cortiq-translate --cortiq-to-plan --max-batch 5000 %S/linear.mlir 2>&1 | FileCheck %s --check-prefix=BATCH

// BATCH: max batch 5000 must be in [1, 4096]

// CHECK: error: lowering: the module has no 'decode_step' function
module attributes {cortiq.model = {source = "no_decode_step", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  func.func @step(%token: i32, %position: i32) -> tensor<1xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<1xf32>
    return %x : tensor<1xf32>
  }
  cortiq.weight @t stored(f32) : tensor<4x1xf32>
}

// -----

// CHECK: error: lowering: weight 'u' has no storage format (assign-storage-formats records them)
module attributes {cortiq.model = {source = "no_format", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @u : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @u[%token] scale 1.0 : tensor<64xf32>
    return %x : tensor<64xf32>
  }
}

// -----

// CHECK: error: lowering: no kernel for op func.call at
module attributes {cortiq.model = {source = "no_kernel", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func private @elsewhere(tensor<64xf32>) -> tensor<64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %y = func.call @elsewhere(%x) : (tensor<64xf32>) -> tensor<64xf32>
    return %y : tensor<64xf32>
  }
}

// -----

// CHECK: error: lowering: decode_step must return the logits
module attributes {cortiq.model = {source = "two_results", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> (tensor<64xf32>, tensor<64xf32>) {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    return %x, %x : tensor<64xf32>, tensor<64xf32>
  }
}

// -----

// What the runtime's ValidatePlan rejects is reported too: here the model facts are missing.
// CHECK: error: invalid plan: model hidden_size = 0 must be positive
module {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    return %x : tensor<64xf32>
  }
}
