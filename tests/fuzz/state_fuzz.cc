// Fuzz target: a session state buffer → cortiq_session_restore (runtime/cortiq.h) on a session
// of a fixed micro model (tests/fuzz/corpus/artifact/micro-q8_0.cortiq, or $CORTIQ_FUZZ_MODEL),
// then, when it is accepted, eval / truncate / save / restore of the result through the C API.
// Invariants: a rejected state leaves the session untouched (its length) and gets one of the
// documented statuses; an accepted one can be evaluated, truncated and saved, and the saved
// state restores.
//
// The state carries a checksum over everything after its first 16 bytes, which would reject
// every random mutation; the custom mutator recomputes it (and the recorded size), except for a
// few mutations that keep testing the checksum and size checks themselves. StateHash below must
// be c_api.cc's: LLVMFuzzerInitialize checks it on a state the library saved.
//
// CORTIQ_FUZZ_WRITE_SEEDS=DIR: instead of fuzzing, writes the seed corpus (states the library
// saves at several lengths, across the sliding window, after a truncation) to DIR and exits.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "runtime/cortiq.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

constexpr size_t kCtxSize = 16;
cortiq_model* g_model = nullptr;
cortiq_session* g_session = nullptr;
int64_t g_vocab = 0;

// c_api.cc's StateHash (runtime/c_api.cc, "Session state format").
uint64_t StateHash(const uint8_t* data, size_t size) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
  uint64_t h = 0xcbf29ce484222325ull ^ static_cast<uint64_t>(size);
  const auto step = [&](uint64_t word) {
    h ^= word;
    h = (h << 31) | (h >> 33);
    h *= kMul;
  };
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    step(word);
  }
  if (i < size) {
    uint64_t word = 0;
    std::memcpy(&word, data + i, size - i);
    step(word);
  }
  h ^= h >> 29;
  h *= kMul;
  return h ^ (h >> 32);
}

// The state layout's size field [24, 32) and checksum [8, 16).
void FixState(uint8_t* data, size_t size) {
  if (size < 32) return;
  const uint64_t total = size;
  std::memcpy(data + 24, &total, 8);
  const uint64_t checksum = StateHash(data + 16, size - 16);
  std::memcpy(data + 8, &checksum, 8);
}

std::vector<uint8_t> Save(cortiq_session* session) {
  size_t size = 0;
  CORTIQ_FUZZ_CHECK(cortiq_session_state_size(session, &size) == CORTIQ_STATUS_OK,
                    cortiq_last_error());
  std::vector<uint8_t> state(size);
  CORTIQ_FUZZ_CHECK(cortiq_session_save(session, state.data(), size) == CORTIQ_STATUS_OK,
                    cortiq_last_error());
  return state;
}

size_t Length(cortiq_session* session) {
  size_t length = 0;
  CORTIQ_FUZZ_CHECK(cortiq_session_length(session, &length) == CORTIQ_STATUS_OK,
                    cortiq_last_error());
  return length;
}

void Eval(cortiq_session* session, const std::vector<int32_t>& tokens) {
  CORTIQ_FUZZ_CHECK(cortiq_session_eval(session, tokens.data(), tokens.size(), nullptr, 0) ==
                        CORTIQ_STATUS_OK,
                    cortiq_last_error());
}

void WriteSeeds(const std::string& dir) {
  const auto write = [&](const std::string& name) {
    const std::vector<uint8_t> state = Save(g_session);
    std::ofstream(dir + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(state.data()), static_cast<std::streamsize>(state.size()));
  };
  cortiq_session_reset(g_session);
  write("state-0");
  Eval(g_session, {2});
  write("state-1");
  Eval(g_session, {17, 30});
  write("state-3-batched");
  Eval(g_session, {5, 6, 7, 8});
  write("state-7-past-window");
  CORTIQ_FUZZ_CHECK(cortiq_session_truncate(g_session, 5) == CORTIQ_STATUS_OK, cortiq_last_error());
  write("state-5-truncated");
  Eval(g_session, {9, 10, 11, 12, 13, 1, 0});
  write("state-12");
  cortiq_session_reset(g_session);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* path = std::getenv("CORTIQ_FUZZ_MODEL");
  if (path == nullptr) path = CORTIQ_FUZZ_STATE_MODEL;
  CORTIQ_FUZZ_CHECK(cortiq_model_open(path, &g_model) == CORTIQ_STATUS_OK, cortiq_last_error());
  cortiq_model_info info;
  info.struct_size = sizeof(info);
  CORTIQ_FUZZ_CHECK(cortiq_model_get_info(g_model, &info) == CORTIQ_STATUS_OK, "info");
  g_vocab = info.vocab_size;
  cortiq_session_options options = cortiq_session_options_default();
  options.ctx_size = kCtxSize;
  options.batch_size = 4;
  CORTIQ_FUZZ_CHECK(cortiq_session_create(g_model, &options, &g_session) == CORTIQ_STATUS_OK,
                    cortiq_last_error());
  // The mutator's copy of the hash must be the library's, or no mutation passes the checksum.
  Eval(g_session, {2, 17, 30});
  std::vector<uint8_t> state = Save(g_session);
  uint64_t stored;
  std::memcpy(&stored, state.data() + 8, 8);
  CORTIQ_FUZZ_CHECK(stored == StateHash(state.data() + 16, state.size() - 16),
                    "tests/fuzz/state_fuzz.cc: StateHash differs from runtime/c_api.cc's");
  cortiq_session_reset(g_session);
  if (const char* dir = std::getenv("CORTIQ_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  const unsigned choice = rng() % 16;
  if (choice == 0) return LLVMFuzzerMutate(data, size, max_size);  // checksum left stale
  if (choice < 4 || size <= 80) {
    size = LLVMFuzzerMutate(data, size, max_size);
  } else {
    // The body after the 80-byte header: cache records, rows, tokens, logits.
    size = 80 + LLVMFuzzerMutate(data + 80, size - 80, max_size - 80);
  }
  FixState(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t before = Length(g_session);
  const cortiq_status status = cortiq_session_restore(g_session, data, size);
  if (status != CORTIQ_STATUS_OK) {
    CORTIQ_FUZZ_CHECK(status == CORTIQ_STATUS_INVALID_ARGUMENT ||
                          status == CORTIQ_STATUS_CORRUPT_DATA ||
                          status == CORTIQ_STATUS_UNSUPPORTED_VERSION ||
                          status == CORTIQ_STATUS_MODEL_MISMATCH ||
                          status == CORTIQ_STATUS_OUT_OF_RANGE,
                      "restore: ", cortiq_status_string(status), ": ", cortiq_last_error());
    CORTIQ_FUZZ_CHECK(Length(g_session) == before, "a rejected restore changed the length");
    return 0;
  }
  const size_t length = Length(g_session);
  CORTIQ_FUZZ_CHECK(length <= kCtxSize, "restored length ", length);
  std::vector<float> logits(static_cast<size_t>(g_vocab));
  (void)cortiq_session_logits(g_session, logits.data(), logits.size());
  // The restored state round-trips as it is.
  const std::vector<uint8_t> saved = Save(g_session);
  CORTIQ_FUZZ_CHECK(cortiq_session_restore(g_session, saved.data(), saved.size()) ==
                        CORTIQ_STATUS_OK,
                    "a saved state does not restore: ", cortiq_last_error());
  if (length < kCtxSize) {
    const int32_t token = static_cast<int32_t>(size % static_cast<size_t>(g_vocab));
    std::vector<float> all(static_cast<size_t>(g_vocab));
    const cortiq_status eval = cortiq_session_eval(g_session, &token, 1, all.data(), all.size());
    // Restored keys and values are data: NaN/Inf in them give non-finite logits.
    CORTIQ_FUZZ_CHECK(eval == CORTIQ_STATUS_OK || eval == CORTIQ_STATUS_NUMERIC_ERROR,
                      "eval after restore: ", cortiq_last_error());
  }
  const size_t now = Length(g_session);
  const cortiq_status truncate = cortiq_session_truncate(g_session, now / 2);
  // Documented errors: NULL, length > current length, busy; none applies.
  CORTIQ_FUZZ_CHECK(truncate == CORTIQ_STATUS_OK, "truncate after restore: ",
                    cortiq_status_string(truncate), ": ",
                    cortiq_last_error());
  const std::vector<uint8_t> again = Save(g_session);
  CORTIQ_FUZZ_CHECK(cortiq_session_restore(g_session, again.data(), again.size()) ==
                        CORTIQ_STATUS_OK,
                    "a saved state does not restore: ", cortiq_last_error());
  cortiq_session_reset(g_session);
  return 0;
}
