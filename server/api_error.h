// ApiError: an error answer of the OpenAI API — the HTTP status and the body
// {"error": {"message", "type", "param", "code"}} (OpenAI's error object; llama-server answers the
// same shape) — and the mapping from the absl::Status codes of the runtime to it.
#ifndef CORTIQ_SERVER_API_ERROR_H_
#define CORTIQ_SERVER_API_ERROR_H_

#include <string>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace cortiq::server {

struct ApiError {
  int status = 400;                       // HTTP status
  std::string message;                    // what is wrong, naming the request member
  std::string type = "invalid_request_error";
  std::string param;                      // the request member at fault; empty: null
  std::string code;                       // a machine-readable code; empty: null
};

// 400 invalid_request_error about `param` (may be empty).
ApiError InvalidRequest(std::string message, std::string param = {});

// The answer for a runtime error: InvalidArgument / OutOfRange / FailedPrecondition /
// Unimplemented 400 invalid_request_error, ResourceExhausted 503 unavailable_error (code
// "server_overloaded"), Unavailable (shutting down) 503 unavailable_error, Unauthenticated 401
// authentication_error (code "invalid_api_key"), NotFound 404 not_found_error, Cancelled
// 499-like 400, anything else 500 server_error.
ApiError ErrorFromStatus(const absl::Status& status, std::string param = {});

// {"error": {"message": ..., "type": ..., "param": ... | null, "code": ... | null}}.
nlohmann::json ApiErrorBody(const ApiError& error);

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_API_ERROR_H_
