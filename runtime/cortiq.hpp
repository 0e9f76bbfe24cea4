// cortiq.hpp: thin RAII C++17 wrappers over the C API (cortiq.h), header-only: owning handle
// types (ModelPtr, SessionPtr) and Model / Session classes whose methods throw
// cortiq::api::Error when a call fails. Nothing here is part of libcortiq's ABI: it compiles
// into the host program, so exceptions stay on the host's side of the C boundary.
#ifndef CORTIQ_HPP_
#define CORTIQ_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cortiq.h"

namespace cortiq {
namespace api {

// Deleters and owning pointers for the raw handles (ggml-cpp.h style).
struct ModelDeleter {
  void operator()(cortiq_model* model) const noexcept { cortiq_model_close(model); }
};
struct SessionDeleter {
  void operator()(cortiq_session* session) const noexcept { cortiq_session_free(session); }
};
using ModelPtr = std::unique_ptr<cortiq_model, ModelDeleter>;
using SessionPtr = std::unique_ptr<cortiq_session, SessionDeleter>;

// A failed C API call: the status and cortiq_last_error()'s message.
class Error : public std::runtime_error {
 public:
  Error(cortiq_status status, const std::string& message)
      : std::runtime_error(std::string(cortiq_status_string(status)) + ": " + message),
        status_(status) {}
  cortiq_status status() const noexcept { return status_; }

 private:
  cortiq_status status_;
};

// Throws Error unless `status` is CORTIQ_STATUS_OK.
inline void Check(cortiq_status status) {
  if (status != CORTIQ_STATUS_OK) throw Error(status, cortiq_last_error());
}

// An opened model (cortiq_model_open / cortiq_model_close). Movable, not copyable.
class Model {
 public:
  // Opens the artifact at `path`; throws Error (NOT_FOUND, CORRUPT_DATA, ...).
  explicit Model(const std::string& path) {
    cortiq_model* model = nullptr;
    Check(cortiq_model_open(path.c_str(), &model));
    model_.reset(model);
  }

  cortiq_model_info Info() const {
    cortiq_model_info info{};
    info.struct_size = sizeof(info);
    Check(cortiq_model_get_info(model_.get(), &info));
    return info;
  }

  // Checks every weight against its hashes (cortiq_model_verify); throws Error (CORRUPT_DATA
  // naming the damaged weights, FAILED_PRECONDITION without hashes).
  void Verify(int32_t threads = 1) const { Check(cortiq_model_verify(model_.get(), threads)); }

  cortiq_model* get() const noexcept { return model_.get(); }

 private:
  ModelPtr model_;
};

// A session on a Model (cortiq_session_create / cortiq_session_free); the Model object may be
// destroyed first. Movable, not copyable; one thread at a time.
class Session {
 public:
  explicit Session(const Model& model,
                   const cortiq_session_options& options = cortiq_session_options_default())
      : vocab_size_(static_cast<size_t>(model.Info().vocab_size)) {
    cortiq_session* session = nullptr;
    Check(cortiq_session_create(model.get(), &options, &session));
    session_.reset(session);
  }

  // Evaluates `n` tokens (see cortiq_session_eval); Logits() then gives the last one's.
  void Eval(const int32_t* tokens, size_t n) {
    Check(cortiq_session_eval(session_.get(), tokens, n, nullptr, 0));
  }
  void Eval(const std::vector<int32_t>& tokens) { Eval(tokens.data(), tokens.size()); }
  // Evaluates `tokens` and returns the logits after each one: [tokens.size(), vocab_size].
  std::vector<float> EvalAll(const std::vector<int32_t>& tokens) {
    std::vector<float> all(tokens.size() * vocab_size_);
    Check(cortiq_session_eval(session_.get(), tokens.data(), tokens.size(), all.data(),
                              all.size()));
    return all;
  }

  // The last evaluated token's logits: vocab_size floats.
  std::vector<float> Logits() {
    std::vector<float> logits(vocab_size_);
    Check(cortiq_session_logits(session_.get(), logits.data(), logits.size()));
    return logits;
  }

  size_t Length() {
    size_t length = 0;
    Check(cortiq_session_length(session_.get(), &length));
    return length;
  }
  size_t ContextSize() {
    size_t ctx_size = 0;
    Check(cortiq_session_context_size(session_.get(), &ctx_size));
    return ctx_size;
  }
  void Reset() { Check(cortiq_session_reset(session_.get())); }
  void Truncate(size_t length) { Check(cortiq_session_truncate(session_.get(), length)); }

  // The session's state (cortiq_session_save), restorable into any session of the same model.
  std::vector<uint8_t> Save() {
    size_t size = 0;
    Check(cortiq_session_state_size(session_.get(), &size));
    std::vector<uint8_t> state(size);
    Check(cortiq_session_save(session_.get(), state.data(), state.size()));
    return state;
  }
  void Restore(const std::vector<uint8_t>& state) {
    Check(cortiq_session_restore(session_.get(), state.data(), state.size()));
  }

  void SetObserver(cortiq_observer_fn fn, void* user_data) {
    Check(cortiq_session_set_observer(session_.get(), fn, user_data));
  }

  size_t vocab_size() const noexcept { return vocab_size_; }
  cortiq_session* get() const noexcept { return session_.get(); }

 private:
  size_t vocab_size_;
  SessionPtr session_;
};

}  // namespace api
}  // namespace cortiq

#endif  // CORTIQ_HPP_
