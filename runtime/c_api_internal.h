// What the translation units of the C API (c_api.cc: models and sessions; c_api_text.cc: text
// and sampling) share: the handles' structs, the per-thread last error, the mapping of
// absl::Status codes to cortiq_status (Call), and the guards every call opens with (Guarded,
// OnSession). Private to libcortiq: not installed.
#ifndef CORTIQ_RUNTIME_C_API_INTERNAL_H_
#define CORTIQ_RUNTIME_C_API_INTERNAL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/artifact.h"
#include "runtime/cortiq.h"
#include "runtime/sequence.h"
#include "runtime/session.h"
#include "runtime/text/tokenizer.h"

namespace cortiq_c_api {

using ::cortiq::Artifact;
using ::cortiq::Sequence;

// The message of cortiq_last_error(), per thread (defined in c_api.cc).
extern thread_local std::string g_last_error;

// Largest struct_size accepted for the versioned structs (cortiq_model_info,
// cortiq_session_options, cortiq_model_options, cortiq_sampler_options): far above any future version (they grow by a few fields), so that an
// uninitialized struct_size is an error instead of a huge read or write.
constexpr size_t kMaxStructSize = 4096;

// The cortiq_status one call reports for an absl::Status code.
struct CodeMap {
  absl::StatusCode code;
  cortiq_status status;
};

// One C API call: sets this thread's last error, prefixed with the function's name.
class Call {
 public:
  explicit Call(const char* function) : function_(function) {}

  cortiq_status Ok() const noexcept {
    g_last_error.clear();
    return CORTIQ_STATUS_OK;
  }
  // Records "function: message" and returns `status`. Never throws (an allocation failure
  // leaves the message empty).
  cortiq_status Error(cortiq_status status, const std::string& message) const noexcept {
    try {
      g_last_error = absl::StrCat(function_, ": ", message);
    } catch (...) {
      g_last_error.clear();
    }
    return status;
  }
  // INVALID_ARGUMENT "<argument> is NULL".
  cortiq_status Null(const char* argument) const {
    return Error(CORTIQ_STATUS_INVALID_ARGUMENT, absl::StrCat(argument, " is NULL"));
  }
  // Ok() for an OK `status`; else its message, reported as the status `codes` gives its code
  // (`otherwise` for a code the call does not expect).
  cortiq_status From(const absl::Status& status, std::initializer_list<CodeMap> codes,
                     cortiq_status otherwise = CORTIQ_STATUS_INTERNAL) const {
    if (status.ok()) return Ok();
    cortiq_status mapped = otherwise;
    for (const CodeMap& c : codes) {
      if (c.code == status.code()) mapped = c.status;
    }
    return Error(mapped, std::string(status.message()));
  }
  const char* function() const { return function_; }

 private:
  const char* function_;
};

// Runs `body(call)` (returning a cortiq_status) and turns any exception into a status, so that
// nothing thrown inside the library crosses the C boundary.
template <typename Body>
cortiq_status Guarded(const char* function, Body&& body) noexcept {
  const Call call(function);
  try {
    return body(call);
  } catch (const std::bad_alloc&) {
    return call.Error(CORTIQ_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return call.Error(CORTIQ_STATUS_INTERNAL, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return call.Error(CORTIQ_STATUS_INTERNAL, "unexpected exception");
  }
}

// Checks a versioned options struct given as `options` with struct_size `size`, of which this
// library knows the first `known` bytes (its sizeof) and accepts from `oldest` bytes on (an older
// header's struct): INVALID_ARGUMENT naming options->struct_size unless oldest <= size <=
// kMaxStructSize, or naming the first non-zero byte past `known` (a newer header's field this
// library cannot honour). `defaults` names the function that fills a valid struct. OK otherwise.
inline cortiq_status CheckOptionsStruct(const Call& call, const void* options, size_t size,
                                        size_t oldest, size_t known, const char* defaults) {
  if (size < oldest || size > kMaxStructSize) {
    return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                      absl::StrCat("options->struct_size is ", size, ", expected >= ", oldest,
                                   " and <= ", kMaxStructSize, " (start from ", defaults, "())"));
  }
  const auto* bytes = static_cast<const uint8_t*>(options);
  for (size_t i = known; i < size; ++i) {
    if (bytes[i] != 0) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("options set a field unknown to this library (API ",
                                     CORTIQ_API_VERSION_MAJOR, ".", CORTIQ_API_VERSION_MINOR,
                                     "): byte ", i, " is not zero"));
    }
  }
  return CORTIQ_STATUS_OK;
}

// An opened artifact with what the C API derives from it once. Shared (std::shared_ptr) by the
// model handle and every session, so that closing the handle first is safe.
struct CortiqModelData {
  std::unique_ptr<Artifact> artifact;
  cortiq::ModelIdentity identity;  // stamped on saved states
  uint32_t weight_formats = 0;     // CORTIQ_WEIGHT_* bits
  int64_t sliding_window = 0;
  // API 1.3: the tokenizer of the artifact's section (a view of the mapping), or why there is
  // none (FailedPrecondition: no section; InvalidArgument: a damaged one).
  std::optional<cortiq::text::Tokenizer> tokenizer;
  absl::Status tokenizer_status;
  std::vector<int32_t> end_of_generation;  // sorted EndOfGenerationIds (a plain completion)
  std::vector<int32_t> end_of_turn;        // sorted ChatEndOfTurnIds (a chat turn)
};

}  // namespace cortiq_c_api

// The handles of cortiq.h (global, as the header declares them).
struct cortiq_model {
  std::shared_ptr<const cortiq_c_api::CortiqModelData> data;
};

struct cortiq_session {
  std::shared_ptr<const cortiq_c_api::CortiqModelData> model;  // declared first: outlives `sequence`
  std::unique_ptr<cortiq::Sequence> sequence;
  cortiq_observer_fn observer = nullptr;
  void* observer_user = nullptr;
  std::atomic<bool> busy{false};  // a call is running (CORTIQ_STATUS_BUSY for others)
};

namespace cortiq_c_api {

// The opening of every call on a handle used by one thread at a time (a session or a sampler;
// cortiq.h, "Thread safety"): a NULL handle is INVALID_ARGUMENT; a handle another call is running
// on is BUSY, before any other argument is looked at and without touching the handle; then
// body(call, *handle) runs holding the handle's `busy` flag, exceptions turned into statuses.
// `what` names the handle in the messages ("session", "sampler").
template <typename Handle, typename Body>
cortiq_status OnExclusive(const char* function, const char* what, Handle* handle,
                          Body&& body) noexcept {
  return Guarded(function, [&](const Call& call) -> cortiq_status {
    if (handle == nullptr) return call.Null(what);
    if (handle->busy.exchange(true, std::memory_order_acquire)) {
      return call.Error(CORTIQ_STATUS_BUSY, absl::StrCat("another call on this ", what,
                                                         " is running (use one ", what,
                                                         " per thread)"));
    }
    struct Release {
      Handle* handle;
      ~Release() { handle->busy.store(false, std::memory_order_release); }
    } release{handle};
    return body(call, *handle);
  });
}

// OnExclusive for the calls on a session.
template <typename Body>
cortiq_status OnSession(const char* function, cortiq_session* session, Body&& body) noexcept {
  return OnExclusive(function, "session", session, std::forward<Body>(body));
}

}  // namespace cortiq_c_api

#endif  // CORTIQ_RUNTIME_C_API_INTERNAL_H_
