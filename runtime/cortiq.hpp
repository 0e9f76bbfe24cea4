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
struct SamplerDeleter {
  void operator()(cortiq_sampler* sampler) const noexcept { cortiq_sampler_free(sampler); }
};
struct DecoderDeleter {
  void operator()(cortiq_decoder* decoder) const noexcept { cortiq_decoder_free(decoder); }
};
using ModelPtr = std::unique_ptr<cortiq_model, ModelDeleter>;
using SessionPtr = std::unique_ptr<cortiq_session, SessionDeleter>;
using SamplerPtr = std::unique_ptr<cortiq_sampler, SamplerDeleter>;
using DecoderPtr = std::unique_ptr<cortiq_decoder, DecoderDeleter>;

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

  // Opens the artifact at `path` with `options` (cortiq_model_open_with_options, API 1.4: how
  // the weights are loaded); throws Error.
  Model(const std::string& path, const cortiq_model_options& options) {
    cortiq_model* model = nullptr;
    Check(cortiq_model_open_with_options(path.c_str(), &options, &model));
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

  // The ids of `text` (cortiq_tokenize; add_special: <bos> first unless the text has it).
  std::vector<int32_t> Tokenize(const std::string& text, bool add_special = true) const {
    size_t n = 0;
    Check(cortiq_tokenize(model_.get(), text.data(), text.size(), add_special, nullptr, 0, &n));
    std::vector<int32_t> ids(n);
    Check(cortiq_tokenize(model_.get(), text.data(), text.size(), add_special, ids.data(),
                          ids.size(), &n));
    return ids;
  }
  // The text of `tokens` (cortiq_detokenize).
  std::string Detokenize(const std::vector<int32_t>& tokens, bool skip_special = false) const {
    size_t length = 0;
    Check(cortiq_detokenize(model_.get(), tokens.data(), tokens.size(), skip_special, nullptr, 0,
                            &length));
    std::string text(length + 1, '\0');
    Check(cortiq_detokenize(model_.get(), tokens.data(), tokens.size(), skip_special, &text[0],
                            text.size(), &length));
    text.resize(length);
    return text;
  }
  // The vocabulary's string of `token` (cortiq_token_piece).
  std::string TokenPiece(int32_t token) const {
    size_t length = 0;
    Check(cortiq_token_piece(model_.get(), token, nullptr, 0, &length));
    std::string piece(length + 1, '\0');
    Check(cortiq_token_piece(model_.get(), token, &piece[0], piece.size(), &length));
    piece.resize(length);
    return piece;
  }
  // The id of a special token, -1 if none (cortiq_model_special_token).
  int32_t SpecialToken(cortiq_token_kind kind) const {
    int32_t id = -1;
    Check(cortiq_model_special_token(model_.get(), kind, &id));
    return id;
  }
  // Whether a plain completion stops at `token` (cortiq_token_is_end_of_generation).
  bool IsEndOfGeneration(int32_t token) const {
    int result = 0;
    Check(cortiq_token_is_end_of_generation(model_.get(), token, &result));
    return result != 0;
  }
  // Whether the model's chat turn ends at `token` (cortiq_token_is_end_of_turn).
  bool IsEndOfTurn(int32_t token) const {
    int result = 0;
    Check(cortiq_token_is_end_of_turn(model_.get(), token, &result));
    return result != 0;
  }
  // The conversation in the model's chat format (cortiq_model_chat_format); each pair is
  // {role, content}.
  std::string ChatFormat(const std::vector<std::pair<std::string, std::string>>& messages,
                         bool add_generation_prompt = true, bool enable_thinking = false) const {
    std::vector<cortiq_chat_message> m;
    for (const auto& [role, content] : messages) m.push_back({role.c_str(), content.c_str()});
    size_t length = 0;
    Check(cortiq_model_chat_format(model_.get(), m.data(), m.size(), add_generation_prompt,
                                   enable_thinking, nullptr, 0, &length));
    std::string text(length + 1, '\0');
    Check(cortiq_model_chat_format(model_.get(), m.data(), m.size(), add_generation_prompt,
                                   enable_thinking, &text[0], text.size(), &length));
    text.resize(length);
    return text;
  }
  // The model's sampling defaults (cortiq_sampler_default_options).
  cortiq_sampler_options DefaultSamplerOptions() const {
    cortiq_sampler_options options{};
    Check(cortiq_sampler_default_options(model_.get(), &options));
    return options;
  }

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

// A sampler chain (cortiq_sampler_*) for one sequence. Movable, not copyable.
class Sampler {
 public:
  // With the model's defaults.
  explicit Sampler(const Model& model) { Create(model, nullptr); }
  Sampler(const Model& model, const cortiq_sampler_options& options) { Create(model, &options); }

  // The next token from the session's last logits; not accepted (see Accept).
  int32_t Sample(Session& session) {
    int32_t token = -1;
    Check(cortiq_sampler_sample(sampler_.get(), session.get(), &token));
    return token;
  }
  void Accept(int32_t token) { Check(cortiq_sampler_accept(sampler_.get(), token)); }
  void Reset() { Check(cortiq_sampler_reset(sampler_.get())); }
  uint64_t Seed() {
    uint64_t seed = 0;
    Check(cortiq_sampler_seed(sampler_.get(), &seed));
    return seed;
  }
  cortiq_sampler* get() const noexcept { return sampler_.get(); }

 private:
  void Create(const Model& model, const cortiq_sampler_options* options) {
    cortiq_sampler* sampler = nullptr;
    Check(cortiq_sampler_create(model.get(), options, &sampler));
    sampler_.reset(sampler);
  }
  SamplerPtr sampler_;
};

// Streamed ids to whole UTF-8 text (cortiq_decoder_*). Movable, not copyable.
class Decoder {
 public:
  explicit Decoder(const Model& model, bool skip_special = true) {
    cortiq_decoder* decoder = nullptr;
    Check(cortiq_decoder_create(model.get(), skip_special, &decoder));
    decoder_.reset(decoder);
  }
  // The text that `token` makes final (often empty).
  std::string Push(int32_t token) {
    const char* text = nullptr;
    size_t length = 0;
    Check(cortiq_decoder_push(decoder_.get(), token, &text, &length));
    return std::string(text, length);
  }
  // The held-back rest; the decoder starts anew.
  std::string Finish() {
    const char* text = nullptr;
    size_t length = 0;
    Check(cortiq_decoder_finish(decoder_.get(), &text, &length));
    return std::string(text, length);
  }

 private:
  DecoderPtr decoder_;
};

}  // namespace api
}  // namespace cortiq

#endif  // CORTIQ_HPP_
