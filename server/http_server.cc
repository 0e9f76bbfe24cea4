// cortiq-server's routes (see http_server.h).
#include "server/http_server.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "runtime/generation/model_text.h"
#include "server/api_error.h"
#include "server/client_connection.h"
#include "server/connection_threads.h"
#include "server/openai_response.h"
#include "server/request.h"

namespace cortiq::server {

using nlohmann::json;

namespace {

// How often a waiting stream checks that its client is still there.
constexpr std::chrono::milliseconds kPollInterval(100);

// Pending connections the listening socket queues. cpp-httplib's default, 5, refuses a burst of
// clients connecting at once, and Debian's libcpp-httplib.so is built with it (defining
// CPPHTTPLIB_LISTEN_BACKLOG here reaches only the header), so Bind calls listen again with this
// (on Linux, listen on a listening socket sets its backlog).
constexpr int kListenBacklog = 128;

// Requests one kept-alive connection may carry before httplib closes it (its default: 5).
constexpr size_t kKeepAliveMaxRequests = 1000;

// How long a write to a client may block (httplib's default: 5 s). A stream's worker thread
// waits that long for a client that stopped reading; the generation itself goes on in the
// scheduler meanwhile. llama-server waits 600 s; a minute covers a paused consumer.
constexpr time_t kWriteTimeoutSeconds = 60;

// How long a stopping server waits for its connections before shutting them down.
constexpr std::chrono::milliseconds kStopGrace(1000);

int64_t UnixSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

// Compares without an early exit, so the time taken does not tell how much of a key matched.
bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json; charset=utf-8");
}

void SendError(httplib::Response& res, const ApiError& error) {
  if (error.status == 503) res.set_header("Retry-After", "1");
  SendJson(res, error.status, ApiErrorBody(error));
}

}  // namespace

struct HttpServer::Impl {
  Scheduler* scheduler;
  const text::Tokenizer* tokenizer;
  ModelInfo model;
  HttpServerOptions options;
  httplib::Server http;
  RequestCounter requests;
  // Method of each route ("GET" or "POST"), filled by Routes(): a request for a route with the
  // other method is answered 405 (with Allow), and /metrics labels requests by route, with
  // every unknown path as "other" (a label per path a client invents would grow without bound).
  std::map<std::string, std::string> route_methods;
  // The socket httplib last created to listen on (set_socket_options sees each before its bind).
  int listen_socket = -1;
  int port = -1;  // the port Bind bound
  // The models' `created`: when this server started (the same in every answer).
  const int64_t created = UnixSeconds();
  std::atomic<bool> serving{false};         // Serve runs
  std::atomic<bool> stop_requested{false};  // Stop was called

  void Routes();
  // The /metrics label of a request path: the path if it is a route, else "other".
  std::string Endpoint(const std::string& path) const {
    return route_methods.count(path) != 0 ? path : "other";
  }
  void Completions(ApiKind kind, const httplib::Request& req, httplib::Response& res);
  // The scheduler job of a parsed request, or the error to answer with.
  std::optional<ApiError> MakeJob(const CompletionRequest& request, Job* job);
  void Tokenize(const httplib::Request& req, httplib::Response& res);
  void Detokenize(const httplib::Request& req, httplib::Response& res);
};

HttpServer::HttpServer(Scheduler* scheduler, const text::Tokenizer* tokenizer, ModelInfo model,
                       HttpServerOptions options)
    : impl_(new Impl{scheduler, tokenizer, std::move(model), std::move(options), {}, {}, {}}) {
  impl_->Routes();
}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<int> HttpServer::Bind() {
  const int threads = impl_->options.http_threads;
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which lets a second server
  // bind the same port and take half the connections (a different model, or none of this one's
  // --api-key); with REUSEADDR alone it fails with "address in use", and a restarted server
  // still binds at once over the old one's TIME_WAIT connections.
  impl_->http.set_socket_options([impl = impl_.get()](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
    impl->listen_socket = sock;
  });
  impl_->http.new_task_queue = [threads] {
    return new ConnectionThreads(static_cast<size_t>(threads));
  };
  // Without TCP_NODELAY (inherited by the accepted sockets) a response written in two pieces
  // waits for the client's delayed ACK: every request after the first on a kept-alive
  // connection took ~40 ms instead of ~1, and streamed chunks arrived bunched.
  impl_->http.set_tcp_nodelay(true);
  // httplib closes a connection after 5 requests by default; clients that pool connections
  // (the openai SDKs) then reconnect every fifth call.
  impl_->http.set_keep_alive_max_count(kKeepAliveMaxRequests);
  // A streaming client that stops reading for a while (a paused consumer, a full receive
  // buffer) lost the rest of its stream after httplib's 5 s with no error and no [DONE].
  impl_->http.set_write_timeout(kWriteTimeoutSeconds, 0);
  int port = impl_->options.port;
  if (port == 0) {
    port = impl_->http.bind_to_any_port(impl_->options.host);
    if (port <= 0) {
      return absl::UnavailableError(absl::StrCat("cannot listen on ", impl_->options.host, ":0"));
    }
  } else if (!impl_->http.bind_to_port(impl_->options.host, port)) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", impl_->options.host, ":",
                                               port,
                                               " (in use, or not an address of this machine)"));
  }
  // Best effort: if it fails, the socket keeps httplib's backlog.
  if (impl_->listen_socket >= 0) ::listen(impl_->listen_socket, kListenBacklog);
  impl_->port = port;
  return port;
}

void HttpServer::Serve() {
  impl_->serving.store(true);
  if (!impl_->stop_requested.load()) impl_->http.listen_after_bind();
  impl_->serving.store(false);
}

void HttpServer::Stop() {
  if (impl_ == nullptr) return;
  impl_->stop_requested.store(true);
  impl_->http.stop();
  // httplib's stop joins every connection's thread: the answers being written finish within
  // the grace period (ended generations send their error events at once), after which the
  // connections still open are shut down, so that clients that send their headers slowly or
  // stopped reading a stream (a write may block for kWriteTimeoutSeconds) do not hold the
  // server up.
  auto next_shutdown = std::chrono::steady_clock::now() + kStopGrace;
  while (impl_->serving.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    impl_->http.stop();
    if (impl_->port > 0 && std::chrono::steady_clock::now() >= next_shutdown) {
      ShutDownConnections(impl_->port);  // and again for any accepted meanwhile
      next_shutdown += std::chrono::milliseconds(100);
    }
  }
}

void HttpServer::Impl::Routes() {
  http.set_payload_max_length(options.max_body_bytes);
  http.set_default_headers({{"Access-Control-Allow-Origin", "*"}});
  // API key and CORS preflight before routing; every answered request is counted.
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "OPTIONS") {
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS");
      // The headers the browser asks for (the openai SDK sends x-stainless-*), else the two the
      // API needs; "*" would not cover Authorization (Fetch standard).
      const std::string asked = req.get_header_value("Access-Control-Request-Headers");
      const bool plain = !asked.empty() && asked.size() <= 4096 &&
                         asked.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                                                 "VWXYZ0123456789-_, ") == std::string::npos;
      res.set_header("Access-Control-Allow-Headers", plain ? asked : "Authorization, Content-Type");
      res.set_header("Access-Control-Max-Age", "600");
      return httplib::Server::HandlerResponse::Handled;
    }
    // cpp-httplib reads a Content-Length it cannot parse as 0 ("abc"), as too large (-5) or
    // leniently (+5), and takes the first of two: refuse such a header, saying why (digits only,
    // RFC 9110; a number too large for 64 bits is left to the 413 below). The connection stays
    // open (httplib decides that from the request's headers alone), so the unread body is parsed
    // as the next request, as it would be by httplib without this check.
    if (req.has_header("Content-Length")) {
      const std::string length = req.get_header_value("Content-Length");
      std::string problem;
      if (length.empty() || length.find_first_not_of("0123456789") != std::string::npos) {
        problem = absl::StrCat("the Content-Length header '", length,
                               "' is not a number of bytes");
      }
      for (size_t i = 1; problem.empty() && i < req.get_header_value_count("Content-Length");
           ++i) {
        if (req.get_header_value("Content-Length", i) != length) {
          problem = "the request has Content-Length headers that disagree";
        }
      }
      if (!problem.empty()) {
        SendError(res, ErrorFromStatus(absl::InvalidArgumentError(problem)));
        return httplib::Server::HandlerResponse::Handled;  // counted by the logger
      }
    }
    if (options.api_key.empty() || req.path == "/health" || req.path == "/v1/health") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const std::string auth = req.get_header_value("Authorization");
    const std::string bearer = "Bearer ";
    if (!absl::StartsWithIgnoreCase(auth, bearer) ||  // the scheme is case-insensitive
        !ConstantTimeEquals(auth.substr(bearer.size()), options.api_key)) {
      ApiError error = ErrorFromStatus(absl::UnauthenticatedError(
          auth.empty() ? "no API key: send the header 'Authorization: Bearer KEY'"
                       : "invalid API key"));
      SendError(res, error);
      requests.Count(Endpoint(req.path), res.status);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    if (res.status != 401) requests.Count(Endpoint(req.path), res.status);
  });
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    ApiError error;
    if (res.status == 404 && route_methods.count(req.path) != 0) {
      // A route asked with the other method (GET /v1/chat/completions): 405, as HTTP says.
      const std::string& allowed = route_methods.at(req.path);
      res.status = 405;
      res.set_header("Allow", allowed);
      error.status = 405;
      error.message = absl::StrCat(req.method, " ", req.path, ": this route takes ", allowed);
      SendError(res, error);
      return;
    }
    error.status = res.status;
    if (res.status == 404) {
      error.type = "not_found_error";
      error.message = absl::StrCat("no route ", req.method, " ", req.path);
    } else if (res.status == 413 &&
               absl::StartsWith(req.get_header_value("Content-Type"),
                                "application/x-www-form-urlencoded")) {
      // cpp-httplib reads a form body only up to 8 KiB, and `curl -d` without -H sends JSON as
      // a form.
      error.message =
          "a body sent as application/x-www-form-urlencoded (curl -d's default) may have at most "
          "8192 bytes; send JSON with 'Content-Type: application/json'";
    } else if (res.status == 413) {
      error.message = "the request body is too large";
    } else if (res.status == 414) {
      error.message = "the request's URI is too long (cpp-httplib reads at most 8192 bytes)";
    } else if (res.status == 400) {
      // cpp-httplib answers a request it cannot read before any route sees it: malformed HTTP,
      // or a POST without a Content-Length (or chunked encoding), which `curl -X POST URL` sends.
      error.message =
          "the request could not be read: malformed HTTP, or a body without a Content-Length "
          "header or chunked encoding (a POST needs a JSON body)";
    } else {
      error.message = absl::StrCat("HTTP ", res.status);
    }
    SendError(res, error);
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = absl::StrCat("internal error: ", e.what());
        } catch (...) {
        }
        SendError(res, ErrorFromStatus(absl::InternalError(what)));
      });

  // Every route is registered through these, so route_methods lists exactly the routes (httplib
  // answers HEAD with a GET route's handler).
  const auto post = [this](const char* path, httplib::Server::Handler handler) {
    route_methods[path] = "POST";
    http.Post(path, [handler = std::move(handler)](const httplib::Request& req,
                                                   httplib::Response& res) {
      // Both framings: a proxy in front may have taken the other one (request smuggling, RFC
      // 9112 6.3). Refused, as the RFC allows, once httplib has read the body by its chunks
      // (refused before that, the body would be parsed as the next request; closing the
      // connection instead cannot be asked of httplib 0.11, and a close with the body unread
      // resets it, losing this answer).
      if (req.has_header("Content-Length") && req.has_header("Transfer-Encoding")) {
        return SendError(res, ErrorFromStatus(absl::InvalidArgumentError(
                                  "the request has both Transfer-Encoding and Content-Length "
                                  "headers")));
      }
      handler(req, res);
    });
  };
  const auto get = [this](const char* path, httplib::Server::Handler handler) {
    route_methods[path] = "GET, HEAD";
    http.Get(path, std::move(handler));
  };
  for (const char* path : {"/v1/chat/completions", "/chat/completions"}) {
    post(path, [this](const httplib::Request& req, httplib::Response& res) {
      Completions(ApiKind::kChat, req, res);
    });
  }
  for (const char* path : {"/v1/completions", "/completions"}) {
    post(path, [this](const httplib::Request& req, httplib::Response& res) {
      Completions(ApiKind::kCompletion, req, res);
    });
  }
  const auto model_json = [this] {
    return json{{"id", options.model_name},
                {"object", "model"},
                {"created", created},
                {"owned_by", "cortiq"},
                {"meta",
                 {{"vocab_size", model.vocab_size},
                  {"context_length", scheduler->ctx_size()},
                  {"max_position_embeddings", model.max_position_embeddings}}}};
  };
  for (const char* path : {"/v1/models", "/models"}) {
    get(path, [model_json](const httplib::Request&, httplib::Response& res) {
      SendJson(res, 200, {{"object", "list"}, {"data", json::array({model_json()})}});
    });
  }
  // GET /v1/models/{id} (the SDKs' models.retrieve): the model, or 404 model_not_found.
  for (const char* path : {R"(/v1/models/(.+))", R"(/models/(.+))"}) {
    http.Get(path, [this, model_json](const httplib::Request& req, httplib::Response& res) {
      const std::string id = req.matches.size() > 1 ? req.matches[1].str() : std::string();
      if (id == options.model_name) return SendJson(res, 200, model_json());
      ApiError error;
      error.status = 404;
      error.type = "invalid_request_error";
      error.code = "model_not_found";
      error.param = "model";
      error.message = absl::StrCat("The model '", id, "' does not exist; this server serves '",
                                   options.model_name, "'");
      SendError(res, error);
    });
  }
  for (const char* path : {"/health", "/v1/health"}) {
    get(path, [](const httplib::Request&, httplib::Response& res) {
      SendJson(res, 200, {{"status", "ok"}});
    });
  }
  get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(PrometheusText(requests.Snapshot(), scheduler->Stats()),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    Tokenize(req, res);
  });
  post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    Detokenize(req, res);
  });
}

std::optional<ApiError> HttpServer::Impl::MakeJob(const CompletionRequest& request, Job* job) {
  if (request.kind == ApiKind::kChat || request.prompt_ids.empty()) {
    if (tokenizer == nullptr) {
      return InvalidRequest("the model has no tokenizer: send the prompt as token ids to "
                            "/v1/completions",
                            request.kind == ApiKind::kChat ? "messages" : "prompt");
    }
  }
  const char* prompt_param = request.kind == ApiKind::kChat ? "messages" : "prompt";
  if (request.kind == ApiKind::kChat) {
    text::ChatOptions chat;
    // A conversation that ends with an assistant message is a prefill: the model continues that
    // message (llama-server's behaviour; transformers' continue_final_message) rather than
    // answering it in a new turn.
    chat.continue_final_message =
        !request.messages.empty() && request.messages.back().role == "assistant";
    chat.add_generation_prompt = !chat.continue_final_message;
    chat.enable_thinking = request.enable_thinking;
    absl::StatusOr<std::string> rendered = RenderChatPrompt(*tokenizer, request.messages, chat);
    if (!rendered.ok()) return ErrorFromStatus(rendered.status(), "messages");
    absl::StatusOr<std::vector<int32_t>> ids = EncodePrompt(*tokenizer, *rendered);
    if (!ids.ok()) return ErrorFromStatus(ids.status(), "messages");
    job->prompt = *std::move(ids);
    job->end_of_generation_ids = ChatEndOfTurnIds(*tokenizer);
    job->split_thoughts = true;
  } else if (!request.prompt_ids.empty()) {
    job->prompt = request.prompt_ids;
    if (tokenizer != nullptr) job->end_of_generation_ids = EndOfGenerationIds(*tokenizer);
  } else {
    absl::StatusOr<std::vector<int32_t>> ids = EncodePrompt(*tokenizer, request.prompt);
    if (!ids.ok()) return ErrorFromStatus(ids.status(), "prompt");
    job->prompt = *std::move(ids);
    job->end_of_generation_ids = EndOfGenerationIds(*tokenizer);
  }
  if (job->prompt.empty()) return InvalidRequest("the prompt encodes to no tokens", prompt_param);
  if (static_cast<int64_t>(job->prompt.size()) > scheduler->ctx_size()) {
    ApiError error = InvalidRequest(
        absl::StrCat("the prompt has ", job->prompt.size(), " tokens, more than the context of ",
                     scheduler->ctx_size(), " tokens (cortiq-server --ctx-size)"),
        prompt_param);
    error.code = "context_length_exceeded";
    return error;
  }
  sampling::SamplingOptions defaults = tokenizer != nullptr ? ModelSamplingOptions(*tokenizer)
                                                            : sampling::DefaultSamplingOptions();
  job->sampling = ApplySamplingOverrides(request.sampling, defaults);
  if (tokenizer != nullptr) {
    for (const sampling::LogitBias& ban : UntokenizableIdBans(model.vocab_size, *tokenizer)) {
      job->sampling.logit_bias.push_back(ban);
    }
  }
  job->stop = request.stop;
  job->max_tokens = request.max_tokens;
  job->ignore_eos = request.ignore_eos;
  job->top_logprobs = request.top_logprobs;
  return std::nullopt;
}

namespace {

// What a response accumulates or streams while its job runs.
struct ResponseState {
  ResponseHeader header;
  std::shared_ptr<JobHandle> handle;
  LogprobsBuilder logprobs;
  bool want_logprobs = false;
  bool include_usage = false;
  bool sent_role = false;

  // Appends `event`'s logprobs to `out` (chat: {"content": [...]}; completions: the four
  // arrays, text_offset counting the reply's characters before each token).
  void AddLogprobs(const JobEvent& event, json* out) const {
    for (const PlacedLogprobs& placed : event.logprobs) {
      if (header.kind == ApiKind::kChat) {
        (*out)["content"].push_back(logprobs.ChatEntry(placed.logprobs));
      } else {
        logprobs.AddCompletion(placed.logprobs, placed.text_offset, out);
      }
    }
  }

  // The logprobs member of a chunk for `event` (null when none were asked for or none came).
  json EventLogprobs(const JobEvent& event) const {
    if (!want_logprobs || event.logprobs.empty()) return nullptr;
    json l = header.kind == ApiKind::kChat ? json{{"content", json::array()}}
                                           : LogprobsBuilder::EmptyCompletionLogprobs();
    AddLogprobs(event, &l);
    return l;
  }
};

}  // namespace

void HttpServer::Impl::Completions(ApiKind kind, const httplib::Request& req,
                                   httplib::Response& res) {
  CompletionRequest request;
  if (auto error = ParseCompletionRequest(kind, req.body, &request)) return SendError(res, *error);
  Job job;
  if (auto error = MakeJob(request, &job)) return SendError(res, *error);
  absl::StatusOr<std::shared_ptr<JobHandle>> handle = scheduler->Submit(std::move(job));
  if (!handle.ok()) {
    const std::string message(handle.status().message());
    return SendError(res, ErrorFromStatus(handle.status(), handle.status().code() ==
                                                                   absl::StatusCode::kInvalidArgument
                                                               ? SamplingParamOf(message)
                                                               : std::string()));
  }
  auto state = std::make_shared<ResponseState>(ResponseState{
      {kind, NewCompletionId(kind), UnixSeconds(), options.model_name.empty() ? request.model
                                                                              : options.model_name},
      *handle,
      LogprobsBuilder(tokenizer),
      request.top_logprobs >= 0,
      request.include_usage});

  if (!request.stream) {
    std::string text, reasoning;
    json logprobs = nullptr;
    if (state->want_logprobs) {
      logprobs = kind == ApiKind::kChat ? json{{"content", json::array()}}
                                        : LogprobsBuilder::EmptyCompletionLogprobs();
    }
    std::optional<JobResult> result;
    std::vector<JobEvent> events;
    // Nothing is written before the answer is whole, so the client's leaving is seen on its
    // socket (looked at once per kPollInterval; found at the first look, so that answers
    // faster than that never scan the process's sockets): a client gone frees the slot.
    int socket = -2;  // -2: not looked for yet; -1: not found
    bool cancelled = false;
    auto next_check = std::chrono::steady_clock::now() + kPollInterval;
    while (!result) {
      events.clear();
      state->handle->Wait(&events, &result, kPollInterval);
      if (!result && !cancelled && socket != -1 &&
          std::chrono::steady_clock::now() >= next_check) {
        next_check = std::chrono::steady_clock::now() + kPollInterval;
        if (socket == -2) {
          socket = FindConnectionSocket(req.remote_addr, req.remote_port, req.local_addr,
                                        req.local_port);
        }
        if (socket >= 0 && PeerClosed(socket)) {
          state->handle->Cancel();
          cancelled = true;
        }
      }
      for (const JobEvent& e : events) {
        if (state->want_logprobs) state->AddLogprobs(e, &logprobs);
        text += e.text;
        reasoning += e.reasoning;
      }
    }
    if (!result->status.ok()) return SendError(res, ErrorFromStatus(result->status));
    return SendJson(res, 200, CompletionJson(state->header, text, reasoning, logprobs, *result));
  }

  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  // The stream's body: chunked for HTTP/1.1 clients; HTTP/1.0 has no chunked transfer coding,
  // so for an HTTP/1.0 request it is written as it comes and ended by closing the connection.
  const auto provider = [state](size_t, httplib::DataSink& sink) {
    const auto write = [&](const std::string& data) {
      if (sink.write(data.data(), data.size())) return true;
      state->handle->Cancel();  // the client is gone: free the slot
      return false;
    };
    if (state->header.kind == ApiKind::kChat && !state->sent_role) {
      state->sent_role = true;
      const std::string empty;
      if (!write(SseData(ChunkJson(state->header, &empty, true, nullptr, nullptr)))) {
        return false;
      }
    }
    std::optional<JobResult> result;
    std::vector<JobEvent> events;
    while (!result) {
      events.clear();
      state->handle->Wait(&events, &result, kPollInterval);
      if (events.empty() && !result && !sink.is_writable()) {
        state->handle->Cancel();
        return false;
      }
      for (const JobEvent& e : events) {
        if (!e.reasoning.empty()) {
          // The thought channel's text in chunks of its own (delta.reasoning_content).
          if (!write(SseData(
                  ChunkJson(state->header, nullptr, false, nullptr, nullptr, &e.reasoning)))) {
            return false;
          }
        }
        if (e.text.empty() && !(state->want_logprobs && !e.logprobs.empty())) continue;
        const json chunk =
            ChunkJson(state->header, &e.text, false, state->EventLogprobs(e), nullptr);
        if (!write(SseData(chunk))) return false;
      }
    }
    if (!result->status.ok()) {
      // OpenAI streams report a failure as an error object in the stream.
      if (!write(SseData(ApiErrorBody(ErrorFromStatus(result->status))))) return false;
    } else {
      if (!write(SseData(ChunkJson(state->header, nullptr, false, nullptr,
                                   OpenAiFinishReason(result->reason))))) {
        return false;
      }
      if (state->include_usage && !write(SseData(UsageChunkJson(state->header, *result)))) {
        return false;
      }
    }
    if (!write(kSseDone)) return false;
    sink.done();
    return true;
  };
  const auto releaser = [state](bool success) {
    if (!success) state->handle->Cancel();
  };
  if (req.version == "HTTP/1.0") {
    res.set_header("Connection", "close");
    res.set_content_provider("text/event-stream", provider, releaser);
  } else {
    res.set_chunked_content_provider("text/event-stream", provider, releaser);
  }
}

void HttpServer::Impl::Tokenize(const httplib::Request& req, httplib::Response& res) {
  TokenizeRequest request;
  if (auto error = ParseTokenizeRequest(req.body, &request)) return SendError(res, *error);
  if (tokenizer == nullptr) return SendError(res, InvalidRequest("the model has no tokenizer"));
  text::EncodeOptions encode;
  encode.add_special_tokens = request.add_special;
  absl::StatusOr<std::vector<int32_t>> ids = tokenizer->Encode(request.content, encode);
  if (!ids.ok()) return SendError(res, ErrorFromStatus(ids.status(), "content"));
  json tokens = json::array();
  for (int32_t id : *ids) {
    if (!request.with_pieces) {
      tokens.push_back(id);
      continue;
    }
    absl::StatusOr<std::string> piece = tokenizer->Decode(absl::MakeConstSpan(&id, 1));
    tokens.push_back({{"id", id}, {"piece", piece.ok() ? *piece : std::string()}});
  }
  SendJson(res, 200, {{"tokens", tokens}});
}

void HttpServer::Impl::Detokenize(const httplib::Request& req, httplib::Response& res) {
  if (tokenizer == nullptr) {
    // The body is still checked first, as for /tokenize.
    DetokenizeRequest ignored;
    if (auto error = ParseDetokenizeRequest(req.body, SIZE_MAX, &ignored)) {
      return SendError(res, *error);
    }
    return SendError(res, InvalidRequest("the model has no tokenizer"));
  }
  DetokenizeRequest request;
  if (auto error = ParseDetokenizeRequest(req.body, tokenizer->vocab_size(), &request)) {
    return SendError(res, *error);
  }
  absl::StatusOr<std::string> text = tokenizer->Decode(request.tokens);
  if (!text.ok()) return SendError(res, ErrorFromStatus(text.status(), "tokens"));
  SendJson(res, 200, {{"content", *text}});
}

}  // namespace cortiq::server
