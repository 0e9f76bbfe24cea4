// Test helpers for plans: field-by-field equality (gtest expectations naming the field), and an
// encoder of the format 2.0 metadata (runtime/plan_encoding.h) written from that format's
// description, independently of the library's reader, to produce the files older builds wrote.
#ifndef CORTIQ_TESTS_RUNTIME_PLAN_TEST_UTIL_H_
#define CORTIQ_TESTS_RUNTIME_PLAN_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "runtime/plan.h"

namespace cortiq {

// Every field of `a` equals the one of `b`.
inline void ExpectPlansEqual(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.model.source, b.model.source);
  EXPECT_EQ(a.model.vocab_size, b.model.vocab_size);
  EXPECT_EQ(a.model.hidden_size, b.model.hidden_size);
  EXPECT_EQ(a.model.num_hidden_layers, b.model.num_hidden_layers);
  EXPECT_EQ(a.model.max_position_embeddings, b.model.max_position_embeddings);
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (size_t i = 0; i < a.weights.size(); ++i) {
    EXPECT_EQ(a.weights[i].name, b.weights[i].name);
    EXPECT_EQ(a.weights[i].format, b.weights[i].format);
    EXPECT_EQ(a.weights[i].shape, b.weights[i].shape);
    EXPECT_EQ(a.weights[i].offset, b.weights[i].offset);
    EXPECT_EQ(a.weights[i].size_bytes, b.weights[i].size_bytes);
    EXPECT_EQ(a.weights[i].xxh3_64, b.weights[i].xxh3_64);
  }
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    EXPECT_EQ(a.buffers[i].offset, b.buffers[i].offset);
    EXPECT_EQ(a.buffers[i].num_elements, b.buffers[i].num_elements);
    EXPECT_EQ(a.buffers[i].view_of, b.buffers[i].view_of);
  }
  ASSERT_EQ(a.caches.size(), b.caches.size());
  for (size_t i = 0; i < a.caches.size(); ++i) {
    EXPECT_EQ(a.caches[i].layer, b.caches[i].layer);
    EXPECT_EQ(a.caches[i].sliding, b.caches[i].sliding);
    EXPECT_EQ(a.caches[i].window, b.caches[i].window);
    EXPECT_EQ(a.caches[i].num_kv_heads, b.caches[i].num_kv_heads);
    EXPECT_EQ(a.caches[i].head_dim, b.caches[i].head_dim);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const Step& x = a.steps[i];
    const Step& y = b.steps[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.out, y.out);
    EXPECT_EQ(x.in0, y.in0);
    EXPECT_EQ(x.in1, y.in1);
    EXPECT_EQ(x.weight, y.weight);
    EXPECT_EQ(x.scalar, y.scalar);
    EXPECT_EQ(x.cache, y.cache);
    EXPECT_EQ(x.group_size, y.group_size);
    EXPECT_EQ(x.eps, y.eps);
    EXPECT_EQ(x.head_dim, y.head_dim);
    EXPECT_EQ(x.rotated_pairs, y.rotated_pairs);
    EXPECT_EQ(x.theta, y.theta);
    EXPECT_EQ(x.num_heads, y.num_heads);
    EXPECT_EQ(x.window, y.window);
    EXPECT_EQ(x.scale, y.scale);
    EXPECT_EQ(x.factor, y.factor);
    EXPECT_EQ(x.cap, y.cap);
    EXPECT_EQ(x.logits_only, y.logits_only);
    EXPECT_EQ(x.rows, y.rows);
  }
  ASSERT_EQ(a.taps.size(), b.taps.size());
  for (size_t i = 0; i < a.taps.size(); ++i) {
    EXPECT_EQ(a.taps[i].name, b.taps[i].name);
    EXPECT_EQ(a.taps[i].buffer, b.taps[i].buffer);
  }
  EXPECT_EQ(a.logits_buffer, b.logits_buffer);
  EXPECT_EQ(a.arena_bytes, b.arena_bytes);
  EXPECT_EQ(a.max_batch, b.max_batch);
  EXPECT_EQ(a.weight_hash_chunk_bytes, b.weight_hash_chunk_bytes);
}

// `plan` in the format 2.0 layout: model (source string, vocab_size, hidden_size,
// num_hidden_layers, max_position_embeddings as i64), then weights (name, format u32, rank u32
// and i64 dimensions, offset, size_bytes u64), buffers (offset, num_elements u64, view_of i32),
// caches (layer i64, sliding u8, window, num_kv_heads, head_dim i64), steps (kind u32, out, in0,
// in1, weight, weight2, cache i32, i0, i1 i64, f0, f1 f64, logits_only u8), taps (name,
// buffer i32), each list after a u64 count, then logits_buffer i32, arena_bytes u64, max_batch
// i64; little-endian, strings as u32 length + bytes. The step parameters go to i0, i1 and f0 as
// 2.0 builds wrote them (rms norms: group size, -, eps; rope: head_dim, rotated pairs, theta;
// attention: heads, window, scale; embedding: -, -, scale; scale: -, -, factor; softcap:
// -, -, cap).
inline std::string SerializePlanV2ForTest(const Plan& plan) {
  std::string out;
  const auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  const auto f64 = [&](double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    put(bits, 8);
  };
  const auto str = [&](const std::string& s) {
    put(s.size(), 4);
    out += s;
  };
  str(plan.model.source);
  put(static_cast<uint64_t>(plan.model.vocab_size), 8);
  put(static_cast<uint64_t>(plan.model.hidden_size), 8);
  put(static_cast<uint64_t>(plan.model.num_hidden_layers), 8);
  put(static_cast<uint64_t>(plan.model.max_position_embeddings), 8);
  put(plan.weights.size(), 8);
  for (const WeightEntry& w : plan.weights) {
    str(w.name);
    put(static_cast<uint32_t>(w.format), 4);
    put(w.shape.size(), 4);
    for (int64_t d : w.shape) put(static_cast<uint64_t>(d), 8);
    put(w.offset, 8);
    put(w.size_bytes, 8);
  }
  put(plan.buffers.size(), 8);
  for (const BufferEntry& b : plan.buffers) {
    put(b.offset, 8);
    put(b.num_elements, 8);
    put(static_cast<uint32_t>(b.view_of), 4);
  }
  put(plan.caches.size(), 8);
  for (const CacheEntry& c : plan.caches) {
    put(static_cast<uint64_t>(c.layer), 8);
    put(c.sliding ? 1 : 0, 1);
    put(static_cast<uint64_t>(c.window), 8);
    put(static_cast<uint64_t>(c.num_kv_heads), 8);
    put(static_cast<uint64_t>(c.head_dim), 8);
  }
  put(plan.steps.size(), 8);
  for (const Step& s : plan.steps) {
    put(static_cast<uint32_t>(s.kind), 4);
    for (int32_t operand : {s.out, s.in0, s.in1, s.weight, s.scalar, s.cache}) {
      put(static_cast<uint32_t>(operand), 4);
    }
    int64_t i0 = 0, i1 = 0;
    double f0 = 0;
    switch (s.kind) {
      case StepKind::kRmsNorm:
      case StepKind::kResidualRmsNorm:
        i0 = s.group_size;
        f0 = s.eps;
        break;
      case StepKind::kRope:
        i0 = s.head_dim;
        i1 = s.rotated_pairs;
        f0 = s.theta;
        break;
      case StepKind::kAttention:
        i0 = s.num_heads;
        i1 = s.window;
        f0 = s.scale;
        break;
      case StepKind::kEmbedding:
        f0 = s.scale;
        break;
      case StepKind::kScale:
        f0 = s.factor;
        break;
      case StepKind::kSoftcap:
        f0 = s.cap;
        break;
      default:
        break;
    }
    put(static_cast<uint64_t>(i0), 8);
    put(static_cast<uint64_t>(i1), 8);
    f64(f0);
    f64(0.0);
    put(s.logits_only ? 1 : 0, 1);
  }
  put(plan.taps.size(), 8);
  for (const Tap& t : plan.taps) {
    str(t.name);
    put(static_cast<uint32_t>(t.buffer), 4);
  }
  put(static_cast<uint32_t>(plan.logits_buffer), 4);
  put(plan.arena_bytes, 8);
  put(static_cast<uint64_t>(plan.max_batch), 8);
  return out;
}

}  // namespace cortiq

#endif  // CORTIQ_TESTS_RUNTIME_PLAN_TEST_UTIL_H_
