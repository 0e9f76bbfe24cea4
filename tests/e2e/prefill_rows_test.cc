// Prefill that skips the rows nobody reads (Step::rows, set from mark-rows) against the same plan
// with every step but the head on all rows (what lowering gave before mark-rows, and what a 3.0
// artifact still gives): on every golden case, prompts in one batch and in chunks leave
// bit-identical KV caches and the logits asked for within 1e-5; decode after the prompt agrees
// within 1e-5 too; the plan really runs the KV-shared layers on the logits rows only; and
// every_tap() gives every row of every tap.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

// The logits rows run the matrix-vector kernels instead of the batched products: another
// summation order in the layers that feed only the logits.
constexpr float kRowsTolerance = 1e-5f;

// `plan` with rows = all for every step that is not logits_only (the head).
Plan EveryRowPlan(const Plan& plan) {
  Plan every = plan;
  for (Step& s : every.steps) s.rows = s.logits_only ? StepRows::kLogits : StepRows::kAll;
  return every;
}

std::unique_ptr<Session> NewSession(const Plan& plan, const Artifact& artifact) {
  SessionOptions options;
  options.ctx_size = 128;
  auto session = Session::CreateFromPlan(plan, artifact.weight_section(),
                                         artifact.header().weights_size, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

float MaxDiff(absl::Span<const float> a, absl::Span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// True if every cache holds the same bytes in both sessions (all rows, written or not: both
// start from the same zeroed storage and write the same rows).
bool SameCaches(Session& a, Session& b) {
  for (size_t c = 0; c < a.plan().caches.size(); ++c) {
    const KvCache& x = a.cache(c);
    const KvCache& y = b.cache(c);
    const size_t n = static_cast<size_t>(x.rows() * x.row_width());
    if (!std::equal(x.keys(), x.keys() + n, y.keys()) ||
        !std::equal(x.values(), x.values() + n, y.values())) {
      return false;
    }
  }
  return true;
}

class PrefillRowsTest : public testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override {
    const auto& [case_name, mode] = GetParam();
    golden_ = LoadGoldenCase(case_name);
    auto artifact = Artifact::Open(ArtifactPath(golden_.model, mode));
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    artifact_ = std::move(*artifact);
  }
  GoldenCase golden_;
  std::unique_ptr<Artifact> artifact_;
};

TEST_P(PrefillRowsTest, KvSharedLayersRunOnTheLogitsRowsOnly) {
  const Plan& plan = artifact_->plan();
  // tiny-a: 8 layers, the last 4 KV-shared: every step after the last kv_append runs on the
  // logits rows, and so does more than the head.
  size_t last_append = 0, logits_rows = 0, head = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].kind == StepKind::kKvAppend) last_append = i;
    logits_rows += plan.steps[i].rows == StepRows::kLogits;
    head += plan.steps[i].logits_only;
  }
  for (size_t i = last_append + 1; i < plan.steps.size(); ++i) {
    EXPECT_EQ(plan.steps[i].rows, StepRows::kLogits) << "step " << i;
  }
  EXPECT_GT(head, 0u);
  EXPECT_GT(logits_rows, head + 4 * 8);  // four layers of several steps each
}

TEST_P(PrefillRowsTest, CachesAndLogitsAgreeWithEveryRow) {
  const Plan every = EveryRowPlan(artifact_->plan());
  const size_t n = golden_.tokens.size();
  for (size_t chunk : {n, size_t{7}}) {
    for (BatchLogits which : {BatchLogits::kLast, BatchLogits::kAll, BatchLogits::kNone}) {
      SCOPED_TRACE(testing::Message() << "chunk " << chunk << " logits "
                                      << static_cast<int>(which));
      std::unique_ptr<Session> rows = NewSession(artifact_->plan(), *artifact_);
      std::unique_ptr<Session> all = NewSession(every, *artifact_);
      ASSERT_NE(rows, nullptr);
      ASSERT_NE(all, nullptr);
      for (size_t at = 0; at < n; at += chunk) {
        const size_t count = std::min(chunk, n - at);
        const auto batch = absl::MakeConstSpan(golden_.tokens.data() + at, count);
        ASSERT_TRUE(rows->EvalBatch(batch, which).ok());
        ASSERT_TRUE(all->EvalBatch(batch, which).ok());
        ASSERT_TRUE(SameCaches(*rows, *all)) << "after position " << at + count;
        if (which == BatchLogits::kLast) {
          EXPECT_LE(MaxDiff(rows->logits(), all->logits()), kRowsTolerance);
        }
        if (which == BatchLogits::kAll) {
          for (size_t t = 0; t < count; ++t) {
            EXPECT_LE(MaxDiff(rows->batch_logits(t), all->batch_logits(t)), kRowsTolerance)
                << "row " << t;
          }
        }
      }
      // Decode after the prompt, with and without logits.
      for (int i = 0; i < 3; ++i) {
        const bool want = i != 1;
        ASSERT_TRUE(rows->Eval(golden_.tokens[static_cast<size_t>(i)], want).ok());
        ASSERT_TRUE(all->Eval(golden_.tokens[static_cast<size_t>(i)], want).ok());
        ASSERT_TRUE(SameCaches(*rows, *all));
        if (want) EXPECT_LE(MaxDiff(rows->logits(), all->logits()), kRowsTolerance);
      }
    }
  }
}

TEST_P(PrefillRowsTest, EveryTapGivesEveryRow) {
  const Plan every = EveryRowPlan(artifact_->plan());
  const size_t n = golden_.tokens.size();
  std::unique_ptr<Session> rows = NewSession(artifact_->plan(), *artifact_);
  std::unique_ptr<Session> all = NewSession(every, *artifact_);
  rows->set_every_tap(true);
  const auto prompt = absl::MakeConstSpan(golden_.tokens);
  ASSERT_TRUE(rows->EvalBatch(prompt, BatchLogits::kLast).ok());
  ASSERT_TRUE(all->EvalBatch(prompt, BatchLogits::kLast).ok());
  // The same steps on the same rows: bit-identical taps and logits.
  for (size_t i = 0; i < every.taps.size(); ++i) {
    for (size_t t = 0; t < n; ++t) {
      ASSERT_EQ(MaxDiff(rows->batch_tap(i, t), all->batch_tap(i, t)), 0.0f)
          << every.taps[i].name << " row " << t;
    }
  }
  EXPECT_EQ(MaxDiff(rows->logits(), all->logits()), 0.0f);
  // Token by token without logits: the taps of the KV-shared layers are computed too.
  ASSERT_TRUE(rows->Eval(golden_.tokens[0], false).ok());
  ASSERT_TRUE(all->Eval(golden_.tokens[0], false).ok());
  for (size_t i = 0; i < every.taps.size(); ++i) {
    EXPECT_EQ(MaxDiff(rows->tap(i), all->tap(i)), 0.0f) << every.taps[i].name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, PrefillRowsTest,
                         testing::Combine(testing::ValuesIn(GoldenCaseNames()),
                                          testing::Values("opt", "q8_0")),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" +
                                              std::get<1>(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace cortiq
