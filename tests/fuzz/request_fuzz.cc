// libFuzzer entry point for cortiq-server's request parsers (server/request.h): the body of
// POST /v1/chat/completions, /v1/completions, /tokenize and /detokenize on arbitrary bytes. Each
// parser either answers with an ApiError (whose OpenAI-shaped body must serialize) or fills its
// request, whose invariants are checked: a parsed completion request's sampling options resolve
// and validate or fail with a status, never crash; top_logprobs stays in range; detokenize ids
// are in [0, vocab). Seeds: corpus/request_fuzz/ (real request bodies); dictionary
// request_fuzz.dict.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/sampling/sampling_options.h"
#include "nlohmann/json.hpp"
#include "server/api_error.h"
#include "server/openai_response.h"
#include "server/request.h"

namespace {

using cortiq::server::ApiError;

// The error's response body, serialized as the server sends it (DumpJson), is valid JSON that
// parses back to an object (bytes of the input quoted in a message, invalid UTF-8 included, must
// not break it), and the status is an HTTP error.
void CheckError(const ApiError& error) {
  const std::string body = cortiq::server::DumpJson(cortiq::server::ApiErrorBody(error));
  if (error.status < 400 || error.status > 599) std::abort();
  if (!nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false).is_object()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  for (auto kind : {cortiq::server::ApiKind::kChat, cortiq::server::ApiKind::kCompletion}) {
    cortiq::server::CompletionRequest request;
    if (auto error = cortiq::server::ParseCompletionRequest(kind, body, &request)) {
      CheckError(*error);
      continue;
    }
    if (request.top_logprobs < -1 || request.top_logprobs > cortiq::server::kMaxTopLogprobs) {
      std::abort();
    }
    const cortiq::sampling::SamplingOptions options = cortiq::server::ApplySamplingOverrides(
        request.sampling, cortiq::sampling::DefaultSamplingOptions());
    const absl::Status valid = cortiq::sampling::ValidateSamplingOptions(options, 262144);
    if (!valid.ok()) (void)cortiq::server::SamplingParamOf(std::string(valid.message()));
  }
  cortiq::server::TokenizeRequest tokenize;
  if (auto error = cortiq::server::ParseTokenizeRequest(body, &tokenize)) CheckError(*error);
  constexpr size_t kVocab = 262144;
  cortiq::server::DetokenizeRequest detokenize;
  if (auto error = cortiq::server::ParseDetokenizeRequest(body, kVocab, &detokenize)) {
    CheckError(*error);
  } else {
    for (int32_t id : detokenize.tokens) {
      if (id < 0 || static_cast<size_t>(id) >= kVocab) std::abort();
    }
  }
  return 0;
}
