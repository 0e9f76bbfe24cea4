#!/usr/bin/env python3
"""A bounded load test of cortiq-server over loopback (Python's standard library only).

    load_test.py CORTIQ_SERVER MODEL.cortiq [--requests N] [--clients C] [--parallel P]
                 [--max-rss-growth-mb M]

C client threads send N requests in all, a seeded random mix of what real clients do: chat and
completion requests, streamed and not, with random sampling options and stop strings; streams
abandoned after a few events (a client that goes away); a conversation that grows turn by turn
(prefix reuse); and every kind of bad request (malformed JSON, wrong member types, a prompt
longer than the context, a wrong API key, an unknown route). Each answer is checked: the status
the request calls for, an OpenAI-shaped body (or a well-formed event stream ending in
[DONE]), and usage counts that add up.

The server's resident memory is read from /proc after a warm-up (the first quarter of the
requests, which sizes the slots' caches, the allocator's arenas and the thread stacks) and at
the end: growing by more than --max-rss-growth-mb over the remaining three quarters is reported
as a leak. At the end /health answers, no slot is busy, nothing is queued, /metrics counts
every request, and the server exits cleanly on SIGTERM. Prints a summary line; exits 1 on any
failure.

ctest runs it with a few hundred requests on tiny-a (~20 s); run it by hand with
--requests 20000 for a soak.
"""
import argparse
import http.client
import json
import random
import re
import signal
import subprocess
import sys
import threading
import time

API_KEY = "load-test-key"
TIMEOUT = 120


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("server")
    p.add_argument("model")
    p.add_argument("--requests", type=int, default=400)
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--parallel", type=int, default=3)
    p.add_argument("--ctx-size", type=int, default=512)
    p.add_argument("--max-rss-growth-mb", type=float, default=16.0)
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args()


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


class Client:
    def __init__(self, host, port):
        self.host, self.port = host, port

    def request(self, method, path, body=None, raw=None, key=API_KEY):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = "Bearer " + key
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8")
        conn.close()
        parsed = json.loads(text) if "json" in resp.getheader("Content-Type", "") else text
        return resp.status, parsed

    def stream(self, path, body, abandon_after=None):
        """Events of a streamed request; with abandon_after, closes the connection after that
        many events (a client that goes away) and returns what it read."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        conn.request("POST", path, body=json.dumps(dict(body, stream=True)),
                     headers={"Content-Type": "application/json",
                              "Authorization": "Bearer " + API_KEY})
        resp = conn.getresponse()
        check(resp.status == 200, f"stream status {resp.status}")
        check(resp.getheader("Content-Type", "").startswith("text/event-stream"),
              "stream content type")
        events, done, buffer = [], False, b""
        while True:
            chunk = resp.read1(4096) if hasattr(resp, "read1") else resp.read(4096)
            if not chunk:
                break
            buffer += chunk
            while b"\n\n" in buffer:
                raw, buffer = buffer.split(b"\n\n", 1)
                raw = raw.decode("utf-8")
                check(raw.startswith("data: "), "event without data: " + raw[:80])
                payload = raw[len("data: "):]
                if payload == "[DONE]":
                    done = True
                    continue
                check(not done, "an event after [DONE]")
                events.append(json.loads(payload))
                if abandon_after is not None and len(events) >= abandon_after:
                    conn.close()
                    return events, False
        conn.close()
        check(done, "stream did not end with [DONE]")
        return events, done


WORDS = ("the cat sat on a mat while rain fell over quiet hills and rivers ran to the sea "
         "écrit 東京 Привет 😀 code() {} 12 34").split()


def text(rng, lo, hi):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def sampling(rng, chat=True):
    body = {"max_tokens": rng.randint(1, 24)}
    if rng.random() < 0.5:
        body["temperature"] = 0
    else:
        body.update(temperature=rng.choice([0.5, 1.0, 1.5]), top_p=rng.choice([0.5, 0.95, 1]),
                    top_k=rng.choice([0, 8, 64]), seed=rng.randint(0, 1000))
    if rng.random() < 0.2:
        body["stop"] = [rng.choice(WORDS)]
    if rng.random() < 0.1:
        body.update(presence_penalty=0.5, frequency_penalty=0.3)
    if rng.random() < 0.1:
        # Chat takes logprobs: true and top_logprobs; the legacy completions API an integer.
        body.update(logprobs=True, top_logprobs=3) if chat else body.update(logprobs=3)
    return body


def check_choice_usage(reply, kind):
    check(isinstance(reply, dict) and "choices" in reply, f"{kind}: no choices: {reply!r:.200}")
    usage = reply["usage"]
    check(usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"],
          f"{kind}: usage does not add up: {usage}")
    choice = reply["choices"][0]
    check(choice["finish_reason"] in ("stop", "length"), f"{kind}: finish {choice}")


def one_request(client, rng, history, ctx_size):
    """Sends one random request and checks its answer; returns its kind."""
    r = rng.random()
    if r < 0.25:
        body = dict(sampling(rng), messages=[{"role": "user", "content": text(rng, 1, 30)}])
        status, reply = client.request("POST", "/v1/chat/completions", body)
        check(status == 200, f"chat status {status}: {reply!r:.200}")
        check_choice_usage(reply, "chat")
        return "chat"
    if r < 0.45:
        body = dict(sampling(rng, chat=False), prompt=text(rng, 1, 30))
        status, reply = client.request("POST", "/v1/completions", body)
        check(status == 200, f"completion status {status}: {reply!r:.200}")
        check_choice_usage(reply, "completion")
        return "completion"
    if r < 0.6:
        body = dict(sampling(rng), messages=[{"role": "user", "content": text(rng, 1, 20)}])
        events, _ = client.stream("/v1/chat/completions", body)
        check(all(e["object"] == "chat.completion.chunk" for e in events), "chunk objects")
        return "stream"
    if r < 0.7:
        body = {"prompt": text(rng, 1, 5), "max_tokens": 400, "temperature": 0,
                "ignore_eos": True}
        client.stream("/v1/completions", body, abandon_after=rng.randint(1, 4))
        return "abandoned stream"
    if r < 0.8:
        # A conversation that grows (chat clients resend the whole history each turn).
        history.append({"role": "user", "content": text(rng, 1, 8)})
        body = {"messages": history, "max_tokens": 8, "temperature": 0}
        status, reply = client.request("POST", "/v1/chat/completions", body)
        if status == 400:  # the conversation outgrew the context: start again
            check(reply["error"]["code"] == "context_length_exceeded", f"{reply}")
            history.clear()
            return "conversation reset"
        check(status == 200, f"conversation status {status}: {reply!r:.200}")
        history.append({"role": "assistant",
                        "content": reply["choices"][0]["message"]["content"]})
        return "conversation"
    # Bad requests: each must get its OpenAI-shaped error.
    kind = rng.randrange(6)
    if kind == 0:
        status, reply = client.request("POST", "/v1/chat/completions", raw="{\"messages\": [")
        expected = 400
    elif kind == 1:
        status, reply = client.request("POST", "/v1/completions",
                                       {"prompt": "x", "max_tokens": "many"})
        expected = 400
    elif kind == 2:
        status, reply = client.request("POST", "/v1/completions",
                                       {"prompt": "word " * (ctx_size + 10), "max_tokens": 1})
        expected = 400
    elif kind == 3:
        status, reply = client.request("POST", "/v1/completions", {"prompt": "x"}, key="bad")
        expected = 401
    elif kind == 4:
        status, reply = client.request("GET", "/v1/nothing")
        expected = 404
    else:
        status, reply = client.request("POST", "/v1/chat/completions",
                                       {"messages": [{"role": "user", "content": 7}]})
        expected = 400
    check(status == expected, f"bad request {kind}: status {status}, expected {expected}")
    check(isinstance(reply, dict) and set(reply["error"]) == {"message", "type", "param", "code"},
          f"bad request {kind}: body {reply!r:.200}")
    return "error"


def metric(client, name):
    status, body = client.request("GET", "/metrics")
    check(status == 200, "metrics status")
    return sum(float(m) for m in re.findall(r"^" + re.escape(name) + r"(?:\{[^}]*\})? ([0-9.e+-]+)$",
                                           body, re.M))


def main():
    args = parse_args()
    proc = subprocess.Popen(
        [args.server, args.model, "--port", "0", "-t", "1", "--parallel", str(args.parallel),
         "-c", str(args.ctx_size), "--api-key", API_KEY, "--queue", "64"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    match = re.search(r"listening on http://([0-9.]+):(\d+)", line)
    if not match:
        proc.kill()
        print("cortiq-server did not start: " + line + proc.stderr.read(), file=sys.stderr)
        return 1
    threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
    client = Client(match.group(1), int(match.group(2)))

    counts, failures, lock = {}, [], threading.Lock()
    next_index = [0]
    warm = max(1, args.requests // 4)
    rss = {}

    def worker(index):
        rng = random.Random(args.seed * 1000 + index)
        history = []
        while True:
            with lock:
                i = next_index[0]
                if i >= args.requests or failures:
                    return
                next_index[0] += 1
                if i == warm:
                    rss["warm"] = rss_kb(proc.pid)
            try:
                kind = one_request(client, rng, history, args.ctx_size)
            except Exception as e:  # a failed check, a timeout, a reset connection
                with lock:
                    failures.append(f"request {i}: {type(e).__name__}: {e}")
                return
            with lock:
                counts[kind] = counts.get(kind, 0) + 1

    start = time.time()
    threads = [threading.Thread(target=worker, args=(c,)) for c in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.time() - start

    try:
        # Abandoned streams are cancelled asynchronously: wait for the slots to drain.
        deadline = time.time() + 30
        while time.time() < deadline and (metric(client, "cortiq_slots_busy") > 0 or
                                          metric(client, "cortiq_requests_queued") > 0):
            time.sleep(0.1)
        end_rss = rss_kb(proc.pid)
        check(client.request("GET", "/health", key=None) == (200, {"status": "ok"}), "health")
        check(metric(client, "cortiq_slots_busy") == 0, "a slot is still busy")
        check(metric(client, "cortiq_requests_queued") == 0, "requests still queued")
        answered = metric(client, "cortiq_requests_total")
        check(answered >= args.requests, f"/metrics counts {answered} requests of {args.requests}")
        growth_mb = (end_rss - rss.get("warm", end_rss)) / 1024
        check(growth_mb <= args.max_rss_growth_mb,
              f"RSS grew by {growth_mb:.1f} MB after the warm-up (limit "
              f"{args.max_rss_growth_mb} MB): a leak")
    except Exception as e:
        failures.append(f"after the load: {type(e).__name__}: {e}")
        growth_mb, end_rss = float("nan"), 0
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = "killed after 30 s"
    if code != 0:
        failures.append(f"cortiq-server exit status {code} after SIGTERM")

    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"load_test: {sum(counts.values())} requests from {args.clients} clients on "
          f"{args.parallel} slots in {seconds:.1f} s ({summary}); RSS after warm-up "
          f"{rss.get('warm', 0) / 1024:.1f} MB, at the end {end_rss / 1024:.1f} MB "
          f"(growth {growth_mb:+.1f} MB)")
    for f in failures:
        print("FAILED: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
