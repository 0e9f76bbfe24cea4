// OpenAI-shaped errors (see api_error.h).
#include "server/api_error.h"

#include <utility>

namespace cortiq::server {

ApiError InvalidRequest(std::string message, std::string param) {
  ApiError error;
  error.message = std::move(message);
  error.param = std::move(param);
  return error;
}

ApiError ErrorFromStatus(const absl::Status& status, std::string param) {
  ApiError error;
  error.message = std::string(status.message());
  error.param = std::move(param);
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kCancelled:
      error.status = 400;
      break;
    case absl::StatusCode::kResourceExhausted:
      error.status = 503;
      error.type = "unavailable_error";
      error.code = "server_overloaded";
      break;
    case absl::StatusCode::kUnavailable:  // shutting down
      error.status = 503;
      error.type = "unavailable_error";
      break;
    case absl::StatusCode::kUnauthenticated:
      error.status = 401;
      error.type = "authentication_error";
      error.code = "invalid_api_key";
      break;
    case absl::StatusCode::kNotFound:
      error.status = 404;
      error.type = "not_found_error";
      break;
    default:
      error.status = 500;
      error.type = "server_error";
      break;
  }
  return error;
}

nlohmann::json ApiErrorBody(const ApiError& error) {
  nlohmann::json e = {{"message", error.message}, {"type", error.type}};
  e["param"] = error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param);
  e["code"] = error.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.code);
  return {{"error", e}};
}

}  // namespace cortiq::server
