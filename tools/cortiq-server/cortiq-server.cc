// cortiq-server: an OpenAI-compatible HTTP server for a compiled model, with continuous batching
// across requests (as llama.cpp's llama-server). Runtime only (no MLIR/LLVM).
//
//   cortiq-server MODEL.cortiq [--host 127.0.0.1] [--port 8080] [-t N] [--parallel N]
//                 [-c N] [--api-key KEY]
//
// One process maps the artifact once; --parallel slots each keep a KV cache of --ctx-size
// positions and their conversation (prefix reuse), and the decode steps of all generating slots
// run as one batched evaluation (server/scheduler.h). The routes are in server/http_server.h.
// "cortiq-server: listening on http://HOST:PORT" goes to stderr once the socket is bound (with
// --port 0, the port the system chose). SIGINT / SIGTERM stop it.
#include <algorithm>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/artifact.h"
#include "runtime/generation/model_text.h"
#include "server/http_server.h"
#include "server/scheduler.h"
#include "tools/common/flags.h"
#include "tools/common/session_flags.h"

namespace cortiq {
namespace {

struct ServerFlags {
  SessionFlags session;
  std::string host = "127.0.0.1";
  int64_t port = 8080;
  int64_t parallel = 1;
  int64_t queue = 16;
  int64_t prefill_chunk = 0;
  int64_t http_threads = 0;
  bool metrics = false;  // llama-server's --metrics: /metrics is always served
  bool log_disable = false;  // no line per request on stderr
  std::string api_key;
  std::string alias;
};

// The model id of /v1/models: the file name without its directory and ".cortiq".
std::string ModelName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (absl::EndsWith(name, ".cortiq")) name.resize(name.size() - 7);
  return name.empty() ? "model" : name;
}

absl::Status Run(const ServerFlags& f, const std::string& model_path) {
  // SIGINT / SIGTERM are taken by one thread with sigwait (blocked here, before any thread
  // starts, so every thread inherits the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that disconnects mid-write: an error, not a death

  CORTIQ_ASSIGN_OR_RETURN(SessionOptions session, ToSessionOptions(f.session));
  CORTIQ_ASSIGN_OR_RETURN(const ArtifactLoad load, ArtifactLoadOf(f.session));
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Artifact> artifact, Artifact::Open(model_path, load));
  NoteSlowPrefillActivations("cortiq-server", session);
  NotePrefillActivationsWithoutEffect("cortiq-server", session, artifact->plan());
  NoteContextClamp("cortiq-server", f.session, artifact->plan());
  std::optional<text::Tokenizer> tokenizer;
  absl::StatusOr<text::Tokenizer> loaded = LoadArtifactTokenizer(*artifact);
  if (loaded.ok()) {
    tokenizer.emplace(*std::move(loaded));
  } else if (loaded.status().code() == absl::StatusCode::kFailedPrecondition) {
    std::fprintf(stderr, "cortiq-server: warning: %s; only token-id prompts on /v1/completions\n",
                 std::string(loaded.status().message()).c_str());
  } else {
    return loaded.status();
  }
  server::SchedulerOptions options;
  options.parallel = static_cast<int>(f.parallel);
  options.session = session;
  options.prefill_chunk = f.prefill_chunk;
  options.max_queued = static_cast<int>(f.queue);
  options.log = f.log_disable ? nullptr : stderr;
  CORTIQ_ASSIGN_OR_RETURN(
      std::unique_ptr<server::Scheduler> scheduler,
      server::Scheduler::Create(*artifact, tokenizer ? &*tokenizer : nullptr, options));

  server::HttpServerOptions http;
  http.host = f.host;
  http.port = static_cast<int>(f.port);
  http.api_key = f.api_key;
  http.model_name = f.alias.empty() ? ModelName(model_path) : f.alias;
  // Every slot's request and every queued one hold a thread while they wait, and so does every
  // connection still sending its headers: threads are started as connections need them, so
  // the default is well above what the slots use.
  http.http_threads = f.http_threads > 0
                          ? static_cast<int>(f.http_threads)
                          : static_cast<int>(std::max<int64_t>(256, f.parallel + f.queue + 8));
  server::HttpServer server(scheduler.get(), tokenizer ? &*tokenizer : nullptr,
                            artifact->plan().model, http);
  CORTIQ_ASSIGN_OR_RETURN(const int port, server.Bind());
  std::fprintf(stderr,
               "cortiq-server: %s: %lld slot%s of %lld positions, %d threads; listening on "
               "http://%s:%d\n",
               model_path.c_str(), static_cast<long long>(f.parallel), f.parallel == 1 ? "" : "s",
               static_cast<long long>(scheduler->ctx_size()), session.threads, f.host.c_str(),
               port);
  std::fflush(stderr);
  // The first SIGINT / SIGTERM ends the running and queued generations (their clients get an
  // error) and stops the server, on a thread of its own (ending a generation waits for its
  // current step), so that the watcher is back in sigwait at once: a second signal exits
  // immediately (as llama-server does).
  std::atomic<bool> serving{true};
  std::thread stopper;
  std::thread watcher([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (!serving.load()) return;  // woken by Run itself
    std::fprintf(stderr, "cortiq-server: stopping (again to exit at once)\n");
    stopper = std::thread([&] {
      scheduler->Shutdown();
      server.Stop();
    });
    for (;;) {
      sigwait(&signals, &signal_number);
      if (!serving.load()) return;
      std::fprintf(stderr, "cortiq-server: exiting now\n");
      std::_Exit(128 + signal_number);
    }
  });
  server.Serve();
  serving.store(false);
  // Serve returned (a signal, or e.g. a listen error): wake the watcher if it still waits.
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  if (stopper.joinable()) stopper.join();
  std::fprintf(stderr, "cortiq-server: stopped\n");
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  ServerFlags f;
  Flags flags("cortiq-server", "MODEL.cortiq [options]",
              "Serves a compiled model over the OpenAI HTTP API (POST /v1/chat/completions, "
              "/v1/completions; GET /v1/models, /health, /metrics; POST /tokenize, /detokenize), "
              "with --parallel slots decoded together in one batched evaluation per step.");
  AddSessionFlags(flags, &f.session);
  flags.AddGroup("server");
  flags.AddString("--host", "ADDR", &f.host, "address to listen on");
  flags.AddInt("--port", "N", &f.port, 0, 65535, "port to listen on (0: any free port)");
  flags.AddInt("-np, --parallel", "N", &f.parallel, 1, 256,
               "slots: requests generated at the same time, each with its own KV cache of "
               "--ctx-size positions");
  flags.AddInt("--queue", "N", &f.queue, 0, 4096,
               "requests that may wait for a slot; more are answered 503");
  flags.AddInt("--prefill-chunk", "N", &f.prefill_chunk, 0, 1 << 20,
               "prompt tokens evaluated per step between decode steps (0: the batch size; at "
               "least 3, so that a prompt's last token is never evaluated alone)");
  flags.AddInt("--http-threads", "N", &f.http_threads, 0, 4096,
               "connections served at once, a thread each, started as needed (0: 256, or "
               "parallel + queue + 8 if more)");
  flags.AddBool("--log-disable", &f.log_disable,
                "no line on stderr per finished generation (slot, prompt and cached tokens, "
                "generated tokens, times, how it ended; as llama-server logs requests)");
  flags.AddBool("--metrics", &f.metrics,
                "llama-server's switch for /metrics, which is always served (no effect)");
  flags.AddString("--api-key", "KEY", &f.api_key,
                  "require 'Authorization: Bearer KEY' (every route but /health)");
  flags.AddString("--alias", "NAME", &f.alias, "model id in /v1/models and the responses "
                  "(default: the file name)");
  flags.AddEpilog(
      "examples:\n"
      "  cortiq-server model.cortiq --parallel 4 -c 8192\n"
      "  curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \\\n"
      "    -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}'");
  std::vector<std::string> positional = flags.ParseOrExit(argc, argv);
  NoteIgnoredFlags("cortiq-server", flags);
  absl::StatusOr<std::string> model = TakeModelPath(f.session, &positional);
  absl::Status status = model.status();
  if (status.ok() && !positional.empty()) {
    status = absl::InvalidArgumentError(absl::StrCat("unexpected argument '", positional[0], "'"));
  }
  // An empty value is most likely an unset variable (--api-key "$KEY"): serving without a key
  // then would be a silent surprise, so it is refused (omit the flag to serve without one).
  if (status.ok() && flags.IsSet("--api-key") && f.api_key.empty()) {
    status = absl::InvalidArgumentError(
        "--api-key is empty (an unset variable?); omit --api-key to serve without a key");
  }
  if (status.ok() && flags.IsSet("--host") && f.host.empty()) {
    status = absl::InvalidArgumentError("--host is empty; give an address such as 127.0.0.1");
  }
  if (status.ok()) status = Run(f, *model);
  if (!status.ok()) {
    std::fprintf(stderr, "cortiq-server: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) { return cortiq::Main(argc, argv); }
