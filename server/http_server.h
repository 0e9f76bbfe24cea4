// HttpServer: cortiq-server's HTTP front end (cpp-httplib): the routes of the OpenAI API and of
// llama-server, API-key checking, and the translation between requests and scheduler jobs.
//
//   POST /v1/chat/completions   messages -> the Gemma 4 chat format -> generation; stream: SSE
//   POST /v1/completions        a raw prompt (text, or token ids)
//   GET  /v1/models             the one model
//   GET  /health                {"status": "ok"} (no API key needed)
//   GET  /metrics               Prometheus text (metrics.h)
//   POST /tokenize              {"content", "add_special", "with_pieces"} -> {"tokens"}
//   POST /detokenize            {"tokens"} -> {"content"}
// (also without the /v1 prefix, as llama-server). Every error is an OpenAI error object with its
// status (api_error.h). A streamed request whose client goes away is cancelled (its slot freed)
// at the next event or within 100 ms.
#ifndef CORTIQ_SERVER_HTTP_SERVER_H_
#define CORTIQ_SERVER_HTTP_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/plan.h"
#include "runtime/text/tokenizer.h"
#include "server/metrics.h"
#include "server/scheduler.h"

namespace httplib {
class Server;
}

namespace cortiq::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (Bind returns it)
  // Required as "Authorization: Bearer KEY" on every route but /health; empty: no key.
  std::string api_key;
  std::string model_name;  // the id /v1/models lists and responses carry
  // The most connections served at once, a thread each (started when needed; server/
  // connection_threads.h): each streaming or waiting request holds one, and so does a client
  // that sends its headers slowly. More connections wait for a free thread.
  int http_threads = 256;
  size_t max_body_bytes = size_t{64} << 20;  // larger bodies: 413
};

class HttpServer {
 public:
  // `scheduler` and `tokenizer` (may be null: then text endpoints answer 400) must outlive the
  // server. `model` describes the artifact (vocab_size, max_position_embeddings).
  HttpServer(Scheduler* scheduler, const text::Tokenizer* tokenizer, ModelInfo model,
             HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; returns the port. Errors: Unavailable "cannot listen on
  // HOST:PORT".
  absl::StatusOr<int> Bind();
  // Serves until Stop (call Bind first). Blocks. Returns at once if Stop came first.
  void Serve();
  // Stops Serve (from any thread, e.g. a signal watcher), also one that is only about to start
  // (cpp-httplib's stop() is lost before its accept loop runs, so it is repeated while Serve
  // runs); returns when Serve has returned, or at once if it is not running.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_HTTP_SERVER_H_
