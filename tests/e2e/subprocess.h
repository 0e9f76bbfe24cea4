// Running the tools from the end-to-end tests: a command to completion (RunCommand), or a child
// with pipes on stdin/stdout/stderr that a test talks to and signals (Child: cortiq-chat).
#ifndef CORTIQ_TESTS_E2E_SUBPROCESS_H_
#define CORTIQ_TESTS_E2E_SUBPROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace cortiq {
namespace testing {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

// Runs `command` (shell syntax) under a 120 s timeout with stdout and stderr captured in files
// under `dir`.
inline CommandResult RunCommand(const std::string& command, const std::string& dir) {
  const std::string out = dir + "/cmd.stdout", err = dir + "/cmd.stderr";
  const int status =
      std::system(absl::StrCat("timeout 120 ", command, " >", out, " 2>", err).c_str());
  CommandResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  std::ifstream o(out, std::ios::binary), e(err, std::ios::binary);
  r.out.assign(std::istreambuf_iterator<char>(o), {});
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

// A child process with its stdin, stdout and stderr on pipes.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int in[2], out[2], err[2];
    if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) std::abort();
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
      for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    stderr_ = err[0];
    fcntl(stdout_, F_SETFL, O_NONBLOCK);
    fcntl(stderr_, F_SETFL, O_NONBLOCK);
  }
  ~Child() {
    CloseStdin();
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
    close(stdout_);
    close(stderr_);
  }

  void Write(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(stdin_, text.data() + done, text.size() - done);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }
  void CloseStdin() {
    if (stdin_ >= 0) close(stdin_);
    stdin_ = -1;
  }
  void Signal(int signal_number) { kill(pid_, signal_number); }

  // Reads stdout until it holds `text` (searched from `from`) or `seconds` pass; true if found.
  bool WaitForOutput(const std::string& text, double seconds, size_t from = 0) {
    return WaitFor(&out_, stdout_, text, seconds, from);
  }
  // Reads stdout until it holds at least `bytes` bytes or `seconds` pass; true if it does.
  bool WaitForOutputBytes(size_t bytes, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      Drain();
      if (out_.size() >= bytes) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      pollfd p = {stdout_, POLLIN, 0};
      poll(&p, 1, 10);
    }
  }
  bool WaitForError(const std::string& text, double seconds, size_t from = 0) {
    return WaitFor(&err_, stderr_, text, seconds, from);
  }
  // Waits for the exit (reading the rest of the output) and returns the exit code, -1 for a
  // signal, -2 after `seconds` (the child is then killed).
  int Wait(double seconds = 120) {
    if (pid_ <= 0) return exit_code_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    int status = 0;
    for (;;) {
      Drain();
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = 0;
        exit_code_ = -2;
        return exit_code_;
      }
      pollfd fds[2] = {{stdout_, POLLIN, 0}, {stderr_, POLLIN, 0}};
      poll(fds, 2, 10);
    }
    Drain();
    pid_ = 0;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  static void ReadSome(int fd, std::string* into) {
    char buffer[4096];
    for (;;) {
      const ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n <= 0) return;
      into->append(buffer, static_cast<size_t>(n));
    }
  }
  void Drain() {
    ReadSome(stdout_, &out_);
    ReadSome(stderr_, &err_);
  }
  bool WaitFor(std::string* buffer, int fd, const std::string& text, double seconds,
               size_t from) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      Drain();
      if (buffer->find(text, from) != std::string::npos) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      pollfd p = {fd, POLLIN, 0};
      poll(&p, 1, 10);
    }
  }

  pid_t pid_ = -1;
  int stdin_ = -1, stdout_ = -1, stderr_ = -1;
  std::string out_, err_;
  int exit_code_ = -1;
};

}  // namespace testing
}  // namespace cortiq

#endif  // CORTIQ_TESTS_E2E_SUBPROCESS_H_
