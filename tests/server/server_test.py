#!/usr/bin/env python3
"""cortiq-server over loopback, with Python's standard library only (urllib, http.client).

    server_test.py CORTIQ_SERVER CORTIQ_RUN MODEL.cortiq SYNTH.cortiq

Starts the server on an ephemeral port (--port 0) and checks: greedy chat and completion equal
cortiq-run on the same prompt; streamed chunks concatenate to the non-streamed answer; concurrent
clients each get the answer they get alone, also while another client's long prompt is being
prefilled; a client that disconnects mid-stream, or before a non-streamed answer is whole, has
its generation stopped and its slot freed; a slow client that stops reading does not hold up the
others; every error case (malformed JSON,
wrong types naming the member, unknown members ignored, a prompt longer than the context, a
bad or missing API key, too many queued requests); /v1/models, /health, /metrics, /tokenize and
/detokenize; and, on SYNTH (a cortiq-synth model whose tokenizer has Gemma 4's thought-channel
markers), that a chat reply's thought channel comes as reasoning_content (and apart from the
answer in cortiq-run --chat). Every request has a timeout; the whole run takes a few seconds.
"""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

SERVER, RUN, MODEL, SYNTH_MODEL = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
API_KEY = "test-key-123"
TIMEOUT = 60  # seconds per request; the tiny model answers in milliseconds


class Server:
    """A cortiq-server process on an ephemeral port."""

    def __init__(self, *args, model=MODEL):
        self.proc = subprocess.Popen(
            [SERVER, model, "--port", "0", "-t", "1", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        match = re.search(r"listening on http://([0-9.]+):(\d+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError("cortiq-server did not start: " + line + self.proc.stderr.read())
        self.host, self.port = match.group(1), int(match.group(2))
        # Keep draining stderr so the server never blocks on a full pipe.
        self.log = []  # the lines after "listening on"
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        with self.proc.stderr:
            for line in self.proc.stderr:
                self.log.append(line)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

    def request(self, method, path, body=None, key=API_KEY, raw=None, headers=None):
        """(status, parsed JSON or text) of one request."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        h = {"Content-Type": "application/json"}
        if key is not None:
            h["Authorization"] = "Bearer " + key
        h.update(headers or {})
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8")
        conn.close()
        ctype = resp.getheader("Content-Type", "")
        return resp.status, (json.loads(text) if "json" in ctype else text)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def stream(self, path, body, key=API_KEY):
        """The parsed data events of a streamed request, and whether it ended with [DONE]."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        conn.request("POST", path, body=json.dumps(dict(body, stream=True)),
                     headers={"Content-Type": "application/json",
                              "Authorization": "Bearer " + key})
        resp = conn.getresponse()
        assert resp.status == 200, (resp.status, resp.read())
        assert resp.getheader("Content-Type").startswith("text/event-stream")
        events, done = [], False
        for raw in resp.read().decode("utf-8").split("\n\n"):
            if not raw.strip():
                continue
            assert raw.startswith("data: "), raw
            payload = raw[len("data: "):]
            if payload == "[DONE]":
                done = True
                continue
            assert not done, "an event after [DONE]"
            events.append(json.loads(payload))
        conn.close()
        return events, done

    def metric(self, name):
        status, text = self.request("GET", "/metrics")
        assert status == 200
        match = re.search(r"^" + re.escape(name) + r" ([0-9.e+-]+)$", text, re.M)
        assert match, name + " not in /metrics"
        return float(match.group(1))

    def open_stream(self, body, stream=True):
        """A raw socket with a (by default streamed) request sent and its response not read (a
        slow or vanishing client)."""
        s = socket.create_connection((self.host, self.port), timeout=TIMEOUT)
        data = json.dumps(dict(body, stream=stream)).encode()
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Authorization: Bearer " + API_KEY.encode() + b"\r\nContent-Length: " +
                  str(len(data)).encode() + b"\r\n\r\n" + data)
        return s


def cortiq_run(*args, model=MODEL):
    out = subprocess.run([RUN, model, "-t", "1", *args], capture_output=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode("utf-8")


def wait_for(predicate, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# A generation that lasts seconds on the tiny model: no end token, a context far beyond it.
LONG = {"prompt": "Once upon a time", "temperature": 0, "ignore_eos": True, "max_tokens": 30000}

PROMPTS = ["hello there", "The cat sat on", "Write a haiku about the sea", "1 2 3 4"]


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--parallel", "4", "-c", "32768", "--api-key", API_KEY,
                            "--prefill-chunk", "8")

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, "cortiq-server did not exit cleanly"

    def chat(self, content, **extra):
        body = {"model": "x", "messages": [{"role": "user", "content": content}],
                "temperature": 0, "max_tokens": 16, **extra}
        status, reply = self.server.post("/v1/chat/completions", body)
        self.assertEqual(status, 200, reply)
        return reply

    def complete(self, prompt, **extra):
        body = {"prompt": prompt, "temperature": 0, "max_tokens": 16, **extra}
        status, reply = self.server.post("/v1/completions", body)
        self.assertEqual(status, 200, reply)
        return reply

    # Greedy answers against cortiq-run on the same prompt.
    def test_greedy_chat_equals_cortiq_run(self):
        for prompt in PROMPTS:
            reply = self.chat(prompt)
            self.assertEqual(reply["object"], "chat.completion")
            choice = reply["choices"][0]
            self.assertEqual(choice["message"]["role"], "assistant")
            self.assertEqual(choice["message"]["content"],
                             cortiq_run("--chat", "-p", prompt, "--temp", "0", "-n", "16"))
            self.assertIn(choice["finish_reason"], ("stop", "length"))
            usage = reply["usage"]
            self.assertEqual(usage["total_tokens"],
                             usage["prompt_tokens"] + usage["completion_tokens"])

    def test_greedy_completion_equals_cortiq_run(self):
        for prompt in PROMPTS:
            reply = self.complete(prompt)
            self.assertEqual(reply["object"], "text_completion")
            self.assertEqual(reply["choices"][0]["text"],
                             cortiq_run("-p", prompt, "--temp", "0", "-n", "16"))
            self.assertEqual(reply["choices"][0]["finish_reason"], "length")
            self.assertEqual(reply["usage"]["completion_tokens"], 16)

    def test_seeded_sampling_equals_cortiq_run(self):
        reply = self.complete("The cat", temperature=0.9, top_k=20, top_p=0.9, min_p=0.0, seed=7,
                              presence_penalty=0.5, frequency_penalty=0.2)
        self.assertEqual(reply["choices"][0]["text"],
                         cortiq_run("-p", "The cat", "--temp", "0.9", "--top-k", "20", "--top-p",
                                    "0.9", "--min-p", "0", "-s", "7", "--presence-penalty", "0.5",
                                    "--frequency-penalty", "0.2", "-n", "16"))

    def test_a_cached_prompt_answers_as_a_fresh_one(self):
        # The same greedy request again finds its prompt cached: at least its last two tokens
        # are evaluated again, in one batch, so the answer and its log probabilities have the
        # bits of the first (a one-row evaluation of the last token used the decode kernels).
        body = {"prompt": "Alpha beta gamma delta", "max_tokens": 6, "temperature": 0,
                "logprobs": 3}
        replies = [self.complete(**body) for _ in range(3)]
        first = replies[0]["choices"][0]
        for reply in replies[1:]:
            self.assertEqual(reply["choices"][0]["text"], first["text"])
            self.assertEqual(reply["choices"][0]["logprobs"], first["logprobs"])
            usage = reply["usage"]
            self.assertEqual(usage["prompt_tokens_details"]["cached_tokens"],
                             usage["prompt_tokens"] - 2)
        self.assertEqual(first["text"], cortiq_run("-p", body["prompt"], "--temp", "0", "-n", "6"))

    def test_prefill_chunks_of_two_still_answer_as_a_fresh_prompt(self):
        # --prefill-chunk 2 is raised to 3: chunks of 2 would leave an odd prompt's last token
        # alone, and a cached prompt (whose last two tokens are evaluated together) would answer
        # differently.
        server = Server("--prefill-chunk", "2", "--api-key", API_KEY)
        try:
            body = {"prompt": "One two three four five six seven", "max_tokens": 6,
                    "temperature": 0, "logprobs": 2}
            replies = []
            for _ in range(2):
                status, reply = server.post("/v1/completions", body)
                self.assertEqual(status, 200, reply)
                replies.append(reply)
            self.assertEqual(replies[0]["usage"]["prompt_tokens_details"]["cached_tokens"], 0)
            self.assertEqual(replies[0]["choices"][0]["logprobs"],
                             replies[1]["choices"][0]["logprobs"])
            self.assertEqual(replies[0]["choices"][0]["text"],
                             cortiq_run("-p", body["prompt"], "--temp", "0", "-n", "6"))
        finally:
            self.assertEqual(server.stop(), 0)

    def test_http_1_0_streams_without_chunked_coding(self):
        # HTTP/1.0 has no chunked transfer coding: the events come as they are and the server
        # closes the connection after data: [DONE].
        s = socket.create_connection((self.server.host, self.server.port), timeout=TIMEOUT)
        body = json.dumps({"prompt": "Hi", "max_tokens": 3, "stream": True,
                           "temperature": 0}).encode()
        s.sendall(b"POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\n"
                  b"Authorization: Bearer " + API_KEY.encode() + b"\r\nContent-Length: " +
                  str(len(body)).encode() + b"\r\n\r\n" + body)
        data = b""
        while True:
            chunk = s.recv(65536)  # b"" once the server closes; a timeout fails the test
            if not chunk:
                break
            data += chunk
        s.close()
        head, _, payload = data.decode("utf-8").partition("\r\n\r\n")
        self.assertIn(" 200 ", head.split("\r\n")[0])
        self.assertNotIn("chunked", head.lower())
        self.assertIn("connection: close", head.lower())
        events = [e for e in payload.split("\n\n") if e]
        self.assertEqual(events[-1], "data: [DONE]")
        text = "".join(json.loads(e[len("data: "):])["choices"][0]["text"] for e in events[:-1])
        self.assertEqual(text, cortiq_run("-p", "Hi", "--temp", "0", "-n", "3"))

    def test_stop_string_and_max_tokens(self):
        full = self.complete("hello there", max_tokens=16)["choices"][0]["text"]
        stop = full[3:5]
        self.assertTrue(stop)
        reply = self.complete("hello there", stop=[stop])
        self.assertEqual(reply["choices"][0]["text"], full[:full.index(stop)])
        self.assertEqual(reply["choices"][0]["finish_reason"], "stop")
        self.assertEqual(self.complete("hello there", max_tokens=0)["choices"][0]["text"], "")

    # Streaming.
    def test_stream_concatenates_to_the_answer(self):
        for prompt in PROMPTS:
            whole = self.chat(prompt)["choices"][0]["message"]["content"]
            events, done = self.server.stream(
                "/v1/chat/completions",
                {"messages": [{"role": "user", "content": prompt}], "temperature": 0,
                 "max_tokens": 16, "stream_options": {"include_usage": True}})
            self.assertTrue(done)
            self.assertEqual(events[0]["choices"][0]["delta"]["role"], "assistant")
            for e in events:
                self.assertEqual(e["object"], "chat.completion.chunk")
                self.assertEqual(e["id"], events[0]["id"])
            text = "".join(e["choices"][0]["delta"].get("content", "")
                           for e in events if e["choices"])
            self.assertEqual(text, whole)
            self.assertIsNotNone(events[-2]["choices"][0]["finish_reason"])
            self.assertEqual(events[-1]["choices"], [])
            self.assertIn("usage", events[-1])

            whole = self.complete(prompt)["choices"][0]["text"]
            events, done = self.server.stream("/v1/completions",
                                              {"prompt": prompt, "temperature": 0,
                                               "max_tokens": 16})
            self.assertTrue(done)
            self.assertEqual("".join(e["choices"][0]["text"] for e in events), whole)

    def test_logprobs(self):
        reply = self.chat("hello there", logprobs=True, top_logprobs=3, max_tokens=4)
        content = reply["choices"][0]["logprobs"]["content"]
        self.assertEqual(len(content), 4)
        for entry in content:
            self.assertLessEqual(entry["logprob"], 0.0)
            self.assertEqual(len(entry["top_logprobs"]), 3)
            # Greedy: the sampled token is the most likely one.
            self.assertAlmostEqual(entry["logprob"], entry["top_logprobs"][0]["logprob"], places=6)
            tops = [t["logprob"] for t in entry["top_logprobs"]]
            self.assertEqual(tops, sorted(tops, reverse=True))
        reply = self.complete("hello there", logprobs=2, max_tokens=3)
        logprobs = reply["choices"][0]["logprobs"]
        self.assertEqual(len(logprobs["tokens"]), 3)
        self.assertEqual(len(logprobs["token_logprobs"]), 3)
        self.assertEqual(len(logprobs["text_offset"]), 3)

    def test_a_final_assistant_message_is_continued(self):
        # A prefill, as llama-server takes it (it used to be closed and answered in a new turn).
        rendered = "<bos><|turn>user\nhello there<turn|>\n<|turn>model\nThe cat"
        status, tokens = self.server.post("/tokenize", {"content": rendered})
        self.assertEqual(status, 200)
        messages = [{"role": "user", "content": "hello there"},
                    {"role": "assistant", "content": "The cat "}]
        reply = self.chat("", messages=messages, max_tokens=8)
        self.assertEqual(reply["usage"]["prompt_tokens"], len(tokens["tokens"]))
        continued = self.complete(rendered, max_tokens=8)
        self.assertNotEqual(continued["choices"][0]["text"], "")
        self.assertEqual(reply["choices"][0]["message"]["content"],
                         continued["choices"][0]["text"])

    def test_logprobs_follow_the_text_a_stop_string_holds_or_cuts(self):
        # tiny-a answers "hello there" greedily with " attention" 12 times, one token each.
        unit = " attention"
        plain = self.complete("hello there", logprobs=0, max_tokens=12)["choices"][0]
        self.assertEqual(plain["text"], unit * 12)

        def check(reply, text, tokens):
            choice = reply["choices"][0]
            self.assertEqual(choice["text"], text)
            logprobs = choice["logprobs"]
            self.assertEqual(logprobs["tokens"], tokens)
            self.assertEqual(logprobs["text_offset"], [len(unit) * i for i in range(len(tokens))])
            self.assertEqual(len(logprobs["token_logprobs"]), len(tokens))
            # Streamed: the same text and logprobs, each token's logprobs in the chunk that
            # completes its text (or the last, for a token cut by the stop string): never
            # before its text starts.
            events, done = self.server.stream("/v1/completions", dict(
                prompt="hello there", temperature=0, max_tokens=12, logprobs=0,
                stop=reply["stop"]))
            self.assertTrue(done)
            streamed_text, streamed_tokens, streamed_offsets = "", [], []
            for e in events:
                c = e["choices"][0]
                if c.get("logprobs"):
                    self.assertLess(c["logprobs"]["text_offset"][-1],
                                    len(streamed_text) + max(1, len(c["text"])))
                    streamed_tokens += c["logprobs"]["tokens"]
                    streamed_offsets += c["logprobs"]["text_offset"]
                streamed_text += c["text"]
            self.assertEqual((streamed_text, streamed_tokens, streamed_offsets),
                             (text, tokens, logprobs["text_offset"]))

        # A stop string matched in part at every token (held), then not: text_offset counts
        # the reply's characters before each token (it counted only those released: 0, 0, 10...).
        reply = self.complete("hello there", logprobs=0, max_tokens=12,
                              stop=[unit * 2 + "!"])
        reply["stop"] = [unit * 2 + "!"]
        check(reply, unit * 12, [unit] * 12)
        # A stop string matched from the second character: the reply is " ", and of the three
        # tokens generated only the first, whose text starts in it, has its logprobs (all three
        # came before).
        stop = (unit * 3)[1:]
        reply = self.complete("hello there", logprobs=0, max_tokens=12, stop=[stop])
        self.assertEqual(reply["usage"]["completion_tokens"], 3)
        self.assertEqual(reply["choices"][0]["finish_reason"], "stop")
        reply["stop"] = [stop]
        check(reply, " ", [unit])

    def test_each_finished_generation_is_logged(self):
        # One line per generation on stderr, as llama-server logs requests (there was none).
        reply = self.complete("The cat", max_tokens=3)
        prompt = reply["usage"]["prompt_tokens"]
        pattern = re.compile(r"cortiq-server: slot \d+: prompt %d tokens \(\d+ cached\) in "
                             r"[0-9.]+ s after [0-9.]+ s queued; 3 generated in [0-9.]+ s "
                             r"\([0-9.]+ tokens/s\); finish_reason length" % prompt)
        self.assertTrue(wait_for(lambda: any(pattern.match(l) for l in self.server.log)),
                        self.server.log[-5:])

    def test_logprobs_bytes_of_a_byte_token_are_its_byte(self):
        # tiny-a's 209 is <0xC3>, the first byte of "é": its text alone is U+FFFD, but `bytes`
        # must be [0xC3] (it was U+FFFD's [239, 191, 189]) so that clients can join them.
        reply = self.chat("hello there", logprobs=True, top_logprobs=2, max_tokens=1,
                          logit_bias={"209": 100})
        entry = reply["choices"][0]["logprobs"]["content"][0]
        self.assertEqual(entry["bytes"], [0xC3])
        self.assertEqual(entry["token"], "\ufffd")
        for top in entry["top_logprobs"]:  # the unbiased distribution's: ordinary tokens
            self.assertEqual(bytes(top["bytes"]).decode("utf-8"), top["token"])

    def test_logprobs_of_byte_tokens_wait_for_their_character(self):
        # tiny-a, seeded: two byte tokens (one invalid byte each, U+FFFD), then "atch.", then
        # two byte tokens "f" that complete the stop string "ff". The byte tokens' text comes
        # only when their run ends: "atch." starts after the run's 2 characters (it was placed
        # at 0), and the "f" tokens, cut with the stop string, have no logprobs (they were
        # listed, at 7, since their held text counted as given).
        body = {"prompt": "été café", "max_tokens": 20, "seed": 932, "temperature": 1.5,
                "logprobs": 1, "stop": ["ff"]}
        status, reply = self.server.post("/v1/completions", body)
        self.assertEqual(status, 200, reply)
        choice = reply["choices"][0]
        self.assertEqual(choice["text"], "\ufffd\ufffdatch.")
        self.assertEqual(reply["usage"]["completion_tokens"], 5)
        self.assertEqual(choice["logprobs"]["tokens"], ["\ufffd", "\ufffd", "atch."])
        self.assertEqual(choice["logprobs"]["text_offset"], [0, 0, 2])
        events, done = self.server.stream("/v1/completions", body)
        self.assertTrue(done)
        streamed = [(t, o) for e in events if e["choices"][0].get("logprobs")
                    for t, o in zip(e["choices"][0]["logprobs"]["tokens"],
                                    e["choices"][0]["logprobs"]["text_offset"])]
        self.assertEqual(streamed, [("\ufffd", 0), ("\ufffd", 0), ("atch.", 2)])

    # Concurrency.
    def concurrent(self, bodies):
        results = [None] * len(bodies)

        def run(i):
            results[i] = self.server.post("/v1/completions", bodies[i])

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(bodies))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        return results

    def test_concurrent_clients_get_their_own_answers(self):
        bodies = [{"prompt": p, "temperature": 0, "max_tokens": 24, "ignore_eos": True}
                  for p in PROMPTS + ["Another prompt", "The capital of France is"]]
        alone = [self.server.post("/v1/completions", b)[1]["choices"][0]["text"] for b in bodies]
        for _ in range(2):
            together = self.concurrent(bodies)
            for (status, reply), expected in zip(together, alone):
                self.assertEqual(status, 200, reply)
                self.assertEqual(reply["choices"][0]["text"], expected)

    def test_concurrent_while_a_long_prompt_is_prefilled(self):
        long_prompt = " ".join(["word%d" % i for i in range(300)])
        bodies = [{"prompt": long_prompt, "temperature": 0, "max_tokens": 8}]
        bodies += [{"prompt": p, "temperature": 0, "max_tokens": 24, "ignore_eos": True}
                   for p in PROMPTS[:3]]
        alone = [self.server.post("/v1/completions", b)[1]["choices"][0]["text"] for b in bodies]
        # Fresh slots for the long prompt (no reuse): another long prompt first fills them.
        together = self.concurrent(bodies)
        for (status, reply), expected in zip(together, alone):
            self.assertEqual(status, 200, reply)
            self.assertEqual(reply["choices"][0]["text"], expected)

    def test_prefix_reuse(self):
        messages = [{"role": "user", "content": "hello there"}]
        first = self.chat("hello there", max_tokens=8)
        messages.append({"role": "assistant", "content": first["choices"][0]["message"]["content"]})
        messages.append({"role": "user", "content": "and again"})
        status, second = self.server.post("/v1/chat/completions",
                                          {"messages": messages, "temperature": 0, "max_tokens": 8})
        self.assertEqual(status, 200)
        usage = second["usage"]
        self.assertGreaterEqual(usage["prompt_tokens_details"]["cached_tokens"],
                                first["usage"]["prompt_tokens"])

    # Clients that go away or read slowly.
    def test_disconnect_mid_stream_frees_the_slot(self):
        cancelled = self.server.metric("cortiq_jobs_cancelled_total")
        s = self.server.open_stream(LONG)
        self.assertIn(b"200 OK", s.recv(4096))
        s.close()
        self.assertTrue(wait_for(lambda: self.server.metric("cortiq_jobs_cancelled_total") ==
                                 cancelled + 1))
        self.assertTrue(wait_for(lambda: self.server.metric("cortiq_slots_busy") == 0))
        # Stopped long before its 30000 tokens.
        self.assertLess(self.server.metric("cortiq_generated_tokens_total"), 25000)

    def test_disconnect_before_a_whole_answer_frees_the_slot(self):
        # Not streamed: nothing is written until the end, so only the socket tells.
        cancelled = self.server.metric("cortiq_jobs_cancelled_total")
        generated = self.server.metric("cortiq_generated_tokens_total")
        s = self.server.open_stream(LONG, stream=False)
        self.assertTrue(wait_for(lambda: self.server.metric("cortiq_slots_busy") == 1))
        s.close()
        self.assertTrue(wait_for(lambda: self.server.metric("cortiq_jobs_cancelled_total") ==
                                 cancelled + 1))
        self.assertTrue(wait_for(lambda: self.server.metric("cortiq_slots_busy") == 0))
        self.assertLess(self.server.metric("cortiq_generated_tokens_total") - generated, 25000)

    def test_slow_client_does_not_block_others(self):
        s = self.server.open_stream(LONG)  # never read while the others run
        time.sleep(0.3)
        start = time.time()
        reply = self.complete("hello there")
        self.assertEqual(reply["choices"][0]["text"],
                         cortiq_run("-p", "hello there", "--temp", "0", "-n", "16"))
        events, done = self.server.stream("/v1/chat/completions",
                                          {"messages": [{"role": "user", "content": "hi"}],
                                           "max_tokens": 8, "temperature": 0})
        self.assertTrue(done)
        self.assertLess(time.time() - start, 20)
        s.close()
        self.assertTrue(wait_for(lambda: self.server.metric("cortiq_slots_busy") == 0))

    # Errors.
    def assertError(self, response, status, param=None, contains=None, code=None):
        got_status, body = response
        self.assertEqual(got_status, status, body)
        self.assertIsInstance(body, dict, body)
        error = body["error"]
        self.assertEqual(set(error), {"message", "type", "param", "code"})
        if param is not None:
            self.assertEqual(error["param"], param)
        if contains is not None:
            self.assertIn(contains, error["message"])
        if code is not None:
            self.assertEqual(error["code"], code)
        return error

    def test_errors(self):
        post = self.server.post
        self.assertError(post("/v1/chat/completions", None, raw="{not json"), 400,
                         contains="malformed JSON")
        self.assertError(post("/v1/chat/completions", None, raw="[1, 2]"), 400,
                         contains="JSON object")
        self.assertError(post("/v1/chat/completions", {"messages": "hi"}), 400, param="messages",
                         contains="'messages' must be an array")
        self.assertError(post("/v1/chat/completions", {}), 400, param="messages")
        self.assertError(post("/v1/chat/completions",
                              {"messages": [{"role": "user", "content": 5}]}), 400,
                         param="messages[0].content")
        self.assertError(post("/v1/chat/completions",
                              {"messages": [{"content": "x"}]}), 400, param="messages[0].role")
        for member, value in [("temperature", "hot"), ("max_tokens", 1.5), ("stream", "yes"),
                              ("top_p", [1]), ("seed", "x"), ("stop", 3), ("logprobs", 1)]:
            self.assertError(post("/v1/chat/completions",
                                  {"messages": [{"role": "user", "content": "x"}], member: value}),
                             400, param=member, contains="'%s' must be" % member)
        self.assertError(post("/v1/completions", {"prompt": "x", "top_p": 1.5}), 400,
                         param="top_p", contains="top_p")
        self.assertError(post("/v1/completions", {"prompt": "x", "n": 2}), 400, param="n")
        self.assertError(post("/v1/completions", {"prompt": ["a", "b"]}), 400, param="prompt")
        self.assertError(post("/v1/completions", {"prompt": [1, 99999]}), 400,
                         contains="out of range")
        self.assertError(post("/v1/chat/completions",
                              {"messages": [{"role": "user", "content": [
                                  {"type": "image_url", "image_url": {"url": "x"}}]}]}), 400,
                         param="messages[0].content[0].type", contains="not supported")
        # Unknown members are ignored.
        status, reply = post("/v1/completions", {"prompt": "x", "max_tokens": 2,
                                                 "frobnicate": {"a": 1}, "user": "me"})
        self.assertEqual(status, 200, reply)
        # A prompt longer than the context (the tiny server below has 64 positions).
        small = Server("--parallel", "1", "-c", "64")
        try:
            error = self.assertError(small.post("/v1/completions", {"prompt": "word " * 200}), 400,
                                     param="prompt", code="context_length_exceeded")
            self.assertIn("more than the context of 64 tokens", error["message"])
            self.assertError(small.post("/v1/chat/completions",
                                        {"messages": [{"role": "user", "content": "word " * 200}]}),
                             400, param="messages", code="context_length_exceeded")
        finally:
            self.assertEqual(small.stop(), 0)

    def test_too_many_queued_requests(self):
        # One slot, no queue: while the slot generates, another request is refused with 503.
        small = Server("--parallel", "1", "--queue", "0", "-c", "32768")
        try:
            s = small.open_stream(LONG)
            self.assertTrue(wait_for(lambda: small.metric("cortiq_slots_busy") == 1))
            status, body = small.post("/v1/completions", {"prompt": "x", "max_tokens": 2})
            error = self.assertError((status, body), 503, code="server_overloaded")
            self.assertIn("too many requests", error["message"])
            s.close()
            # The slot is freed and the next request is served.
            self.assertTrue(wait_for(lambda: small.metric("cortiq_slots_busy") == 0))
            status, body = small.post("/v1/completions", {"prompt": "x", "max_tokens": 2})
            self.assertEqual(status, 200, body)
        finally:
            self.assertEqual(small.stop(), 0)

    def test_api_key(self):
        body = {"prompt": "x", "max_tokens": 1}
        self.assertError(self.server.post("/v1/completions", body, key=None), 401,
                         code="invalid_api_key", contains="no API key")
        self.assertError(self.server.post("/v1/completions", body, key="wrong"), 401,
                         code="invalid_api_key")
        self.assertError(self.server.request("GET", "/v1/models", key="wrong"), 401)
        self.assertEqual(self.server.request("GET", "/health", key=None)[0], 200)

    def test_port_in_use_is_refused(self):
        # A second server on a port the first listens on must fail (llama-server does), not
        # share the port and take some of its connections (SO_REUSEPORT).
        second = subprocess.run(
            [SERVER, MODEL, "--port", str(self.server.port), "--host", self.server.host,
             "-t", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            timeout=20)
        self.assertNotEqual(second.returncode, 0)
        self.assertIn("cannot listen on", second.stderr)
        self.assertEqual(self.server.request("GET", "/health", key=None)[0], 200)

    def test_a_signal_ends_running_generations(self):
        # Ctrl-C while a long generation runs: its client gets a 503 at once and the server
        # exits, rather than after the generation's 30000 tokens.
        other = Server("--api-key", API_KEY, "-c", "32768")
        replies = []
        client = threading.Thread(
            target=lambda: replies.append(other.post("/v1/completions", dict(LONG))))
        try:
            client.start()
            self.assertTrue(wait_for(lambda: other.metric("cortiq_slots_busy") == 1))
            start = time.time()
            other.proc.send_signal(signal.SIGINT)
            self.assertEqual(other.proc.wait(timeout=20), 0)
        finally:
            if other.proc.poll() is None:
                other.proc.kill()
        client.join(timeout=20)
        self.assertLess(time.time() - start, 10)
        self.assertEqual(len(replies), 1)
        status, body = replies[0]
        self.assertEqual(status, 503, body)
        self.assertIn("shutting down", body["error"]["message"])

    def test_a_signal_does_not_wait_for_stalled_clients(self):
        # A stream whose client stopped reading (its writes block up to a minute) and clients
        # still sending their headers held the exit for up to 60 s, or as long as they kept
        # sending: after a short grace their connections are shut down.
        other = Server("-c", "32768")
        stalled = []
        try:
            body = json.dumps(dict(LONG, stream=True, logprobs=20)).encode()
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect((other.host, other.port))
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            stalled.append(s)
            for _ in range(5):
                c = socket.create_connection((other.host, other.port), timeout=TIMEOUT)
                c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                stalled.append(c)
            self.assertTrue(wait_for(lambda: other.metric("cortiq_slots_busy") == 1))
            time.sleep(1)  # the stream fills the socket buffers
            start = time.time()
            other.proc.send_signal(signal.SIGTERM)
            self.assertEqual(other.proc.wait(timeout=30), 0)
            self.assertLess(time.time() - start, 10)
        finally:
            if other.proc.poll() is None:
                other.proc.kill()
            for c in stalled:
                c.close()

    def test_the_bearer_scheme_is_case_insensitive(self):
        for scheme in ("bearer", "BEARER"):
            status, _ = self.server.request("GET", "/v1/models", key=None,
                                            headers={"Authorization": scheme + " " + API_KEY})
            self.assertEqual(status, 200, scheme)

    def test_empty_api_key_or_host_is_refused(self):
        # --api-key "$KEY" with KEY unset must not quietly serve without a key.
        for flag in ("--api-key", "--host"):
            run = subprocess.run([SERVER, MODEL, "--port", "0", "-t", "1", flag, ""],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                 timeout=20)
            self.assertNotEqual(run.returncode, 0)
            self.assertIn(flag + " is empty", run.stderr)

    def test_a_stop_string_in_held_back_bytes_stops_at_its_token(self):
        # A newline sampled as the byte token <0x0A> (held by the stream decoder until the run
        # of byte tokens ends): stop ["\n"] ends the generation at that token.
        status, tokens = self.server.post("/tokenize", {"content": "\n"})
        self.assertEqual(status, 200, tokens)
        newline = tokens["tokens"][-1]
        status, reply = self.server.post("/v1/completions", {
            "prompt": "Hello", "max_tokens": 30, "ignore_eos": True, "stop": ["\n"],
            "logit_bias": {str(newline): 100}})
        self.assertEqual(status, 200, reply)
        self.assertEqual(reply["choices"][0]["finish_reason"], "stop")
        self.assertEqual(reply["choices"][0]["text"], "")
        self.assertEqual(reply["usage"]["completion_tokens"], 1)

    def test_says_when_the_context_is_clamped(self):
        proc = subprocess.Popen([SERVER, MODEL, "--port", "0", "-t", "1", "-c", "99999999"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stderr.readline()
            self.assertIn("a context of 99999999 positions (-c, default 4096) is more than the "
                          "model's max_position_embeddings", line)
            self.assertIn("clamped", line)
            maximum = re.search(r"max_position_embeddings \((\d+)\)", line).group(1)
        finally:
            proc.kill()
            proc.wait(timeout=20)
            proc.stderr.close()
        # -c 0: the model's maximum, as llama.cpp's -c 0, without a note.
        proc = subprocess.Popen([SERVER, MODEL, "--port", "0", "-t", "1", "-c", "0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stderr.readline()
            self.assertIn(": 1 slot of %s positions" % maximum, line)
        finally:
            proc.kill()
            proc.wait(timeout=20)
            proc.stderr.close()

    def test_a_large_form_body_says_to_send_json(self):
        # curl -d without -H sends JSON as a form, which cpp-httplib caps at 8 KiB.
        body = json.dumps({"prompt": "x " * 6000, "max_tokens": 1})
        error = self.assertError(
            self.server.request("POST", "/v1/completions", raw=body,
                                headers={"Content-Type": "application/x-www-form-urlencoded"}),
            413)
        self.assertIn("Content-Type: application/json", error["message"])

    def test_unknown_route(self):
        self.assertError(self.server.request("GET", "/v1/nothing"), 404)
        # /metrics labels requests by route; an invented path counts as "other", not a new label.
        status, text = self.server.request("GET", "/metrics")
        self.assertNotIn("/v1/nothing", text)
        self.assertIn('endpoint="other"', text)

    def requests_counted(self, endpoint, status):
        text = self.server.request("GET", "/metrics")[1]
        match = re.search(r'cortiq_requests_total\{endpoint="%s",status="%d"\} (\d+)'
                          % (re.escape(endpoint), status), text)
        return int(match.group(1)) if match else 0

    def test_malformed_content_length_is_400(self):
        for length in ["-5", "abc", "+5", "1e3"]:
            before = self.requests_counted("/v1/completions", 400)
            error = self.assertError(
                self.server.request("POST", "/v1/completions", raw='{"prompt": "x"}',
                                    headers={"Content-Length": length}), 400,
                contains="is not a number of bytes")
            self.assertIn("'" + length + "'", error["message"])
            self.assertEqual(self.requests_counted("/v1/completions", 400), before + 1)

    def raw_exchange(self, data):
        """The status line and body of a raw HTTP request `data` (bytes), sent on a new socket."""
        with socket.create_connection((self.server.host, self.server.port), timeout=TIMEOUT) as c:
            c.sendall(data)
            reply = b""
            while b"\r\n\r\n" not in reply:
                chunk = c.recv(65536)
                if not chunk:
                    break
                reply += chunk
            head, _, body = reply.partition(b"\r\n\r\n")
            length = re.search(rb"Content-Length: (\d+)", head)
            while length and len(body) < int(length.group(1)):
                chunk = c.recv(65536)
                if not chunk:
                    break
                body += chunk
        return head.split(b"\r\n")[0].decode(), body.decode()

    def test_clients_sending_headers_slowly_do_not_lock_others_out(self):
        # Each connection still sending its headers holds a thread: 40 of them held every thread
        # of httplib's fixed pool (parallel + queue + 8) until its 5 s read timeout, /health
        # included. Threads are now started as connections need them.
        slow = []
        try:
            for _ in range(40):
                c = socket.create_connection((self.server.host, self.server.port), timeout=TIMEOUT)
                c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # no blank line yet
                slow.append(c)
            time.sleep(0.2)
            conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=3)
            conn.request("GET", "/health")
            resp = conn.getresponse()
            self.assertEqual(resp.status, 200)
            resp.read()
            conn.close()
        finally:
            for c in slow:
                c.close()

    def test_chunked_and_content_length_together_is_400(self):
        # A request framed both ways is how requests are smuggled past a proxy: refused (it was
        # read as chunked and answered), its body never taken as a request (a check before the
        # body was read answered the request inside it, a 404 here), the connection still in
        # step for the next one.
        inner = b"GET /v1/models/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        auth = b"Authorization: Bearer " + API_KEY.encode() + b"\r\n"
        with socket.create_connection((self.server.host, self.server.port), timeout=TIMEOUT) as c:
            c.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + auth +
                      b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" +
                      b"%x\r\n" % len(inner) + inner + b"\r\n0\r\n\r\n")
            reply = b""
            while b"}}" not in reply:  # the end of the first answer's error object
                reply += c.recv(65536)
            time.sleep(0.2)  # anything answered to the body would be here by now
            c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                reply += chunk
        statuses = re.findall(rb"HTTP/1\.1 (\d+) ", reply)
        self.assertEqual(statuses, [b"400", b"200"], reply)
        self.assertIn(b"both Transfer-Encoding and Content-Length", reply)
        self.assertNotIn(b"smuggled", reply)
        status, text = self.raw_exchange(
            b"GET /" + b"a" * 10000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertIn(" 414 ", status)
        self.assertIn("URI is too long", json.loads(text)["error"]["message"])

    def test_cors_preflight(self):
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=TIMEOUT)
        conn.request("OPTIONS", "/v1/chat/completions")
        resp = conn.getresponse()
        resp.read()
        conn.close()
        self.assertEqual(resp.status, 204)
        self.assertEqual(resp.getheader("Access-Control-Allow-Methods"), "GET, HEAD, POST, OPTIONS")
        self.assertEqual(resp.getheader("Access-Control-Allow-Headers"),
                         "Authorization, Content-Type")
        # A browser running the openai SDK asks for its x-stainless-* headers too: they are
        # allowed (only Authorization and Content-Type were, so its preflight failed).
        asked = "authorization,content-type,x-stainless-os,x-stainless-retry-count"
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=TIMEOUT)
        conn.request("OPTIONS", "/v1/chat/completions",
                     headers={"Origin": "http://localhost:3000",
                              "Access-Control-Request-Method": "POST",
                              "Access-Control-Request-Headers": asked})
        resp = conn.getresponse()
        resp.read()
        conn.close()
        self.assertEqual(resp.status, 204)
        self.assertEqual(resp.getheader("Access-Control-Allow-Headers"), asked)
        self.assertEqual(resp.getheader("Access-Control-Allow-Origin"), "*")

    def test_kept_alive_connection_answers_without_delay(self):
        # Without TCP_NODELAY every request after the first on a connection waited for the
        # client's delayed ACK (~40 ms on Linux) and httplib closed it after 5 requests. The
        # median of 8 requests after the first stays far below that delay on any machine that
        # answers the first in time.
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=TIMEOUT)
        seconds = []
        for _ in range(9):
            start = time.monotonic()
            conn.request("GET", "/health")
            resp = conn.getresponse()
            resp.read()
            seconds.append(time.monotonic() - start)
            self.assertEqual(resp.status, 200)
            self.assertIn("max=1000", resp.getheader("Keep-Alive", ""))
        conn.close()
        later = sorted(seconds[1:])
        self.assertLess(later[len(later) // 2], 0.025, seconds)

    def test_wrong_method_is_405(self):
        error = self.assertError(self.server.request("GET", "/v1/chat/completions"), 405,
                                 contains="this route takes POST")
        self.assertIn("GET /v1/chat/completions", error["message"])
        self.assertError(self.server.request("POST", "/v1/models", body={}), 405,
                         contains="this route takes GET")

    # The other routes.
    def test_models_health_metrics(self):
        status, models = self.server.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual(models["object"], "list")
        self.assertEqual(models["data"][0]["object"], "model")
        self.assertEqual(models["data"][0]["id"], os.path.basename(MODEL)[:-len(".cortiq")])
        # One model by id (the SDKs' models.retrieve), created when the server started.
        model_id = models["data"][0]["id"]
        status, model = self.server.request("GET", "/v1/models/" + model_id)
        self.assertEqual((status, model), (200, models["data"][0]))
        self.assertEqual(self.server.request("GET", "/v1/models")[1], models)
        error = self.assertError(self.server.request("GET", "/v1/models/gpt-4o"), 404,
                                 contains="The model 'gpt-4o' does not exist")
        self.assertEqual(error["code"], "model_not_found")
        self.assertEqual(self.server.request("GET", "/health"), (200, {"status": "ok"}))
        status, text = self.server.request("GET", "/metrics")
        self.assertEqual(status, 200)
        for name in ["cortiq_requests_total", "cortiq_generated_tokens_total",
                     "cortiq_requests_queued", "cortiq_generation_tokens_per_second",
                     "cortiq_slots 4"]:
            self.assertIn(name, text)

    def test_tokenize_detokenize(self):
        status, reply = self.server.post("/tokenize", {"content": "The cat sat"})
        self.assertEqual(status, 200)
        ids = reply["tokens"]
        self.assertTrue(all(isinstance(i, int) for i in ids))
        status, with_bos = self.server.post("/tokenize", {"content": "The cat sat",
                                                          "add_special": True})
        self.assertEqual(with_bos["tokens"][1:], ids)
        status, reply = self.server.post("/detokenize", {"tokens": ids})
        self.assertEqual((status, reply), (200, {"content": "The cat sat"}))
        status, pieces = self.server.post("/tokenize", {"content": "The cat sat",
                                                        "with_pieces": True})
        self.assertEqual("".join(p["piece"] for p in pieces["tokens"]), "The cat sat")
        self.assertError(self.server.post("/tokenize", {"content": 3}), 400, param="content")
        self.assertError(self.server.post("/detokenize", {"tokens": [-1]}), 400, param="tokens")


OPEN, CLOSE = "<|channel>", "<channel|>"


def split_thought_channel(raw, stop=None):
    """(answer, reasoning, reasoning token count, answer token count) of a reply printed with its
    special tokens, as the Gemma 4 chat template's strip_thinking reads it: the text from
    <|channel> to <channel|> is the thought channel, its first line the channel's name. `raw` is
    made of the four pieces the test allows (the two markers, "a", "\n"), one token each. With
    `stop` (a one-character stop string), the reply ends where the answer first has it."""
    answer, reasoning, tokens, answer_tokens = "", "", 0, 0
    state = "answer"
    pos = 0
    while pos < len(raw):
        piece = next(p for p in (OPEN, CLOSE, "a", "\n") if raw.startswith(p, pos))
        pos += len(piece)
        if state == "answer":
            if piece == OPEN:
                state, tokens = "name", tokens + 1
            elif piece != CLOSE:  # a stray <channel|> is a special token: no text
                answer_tokens += 1
                if stop is not None and piece == stop:
                    break
                answer += piece
            else:
                answer_tokens += 1
            continue
        tokens += 1
        if piece == CLOSE:
            state = "answer"
        elif piece == OPEN:
            pass
        elif state == "name":
            if piece == "\n":
                state = "reasoning"
        else:
            reasoning += piece
    return answer, reasoning, tokens, answer_tokens


class ThoughtChannelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(model=SYNTH_MODEL)

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, "cortiq-server did not exit cleanly"

    def test_the_thought_channel_is_reasoning_content(self):
        ids = []
        for piece in (OPEN, CLOSE, "a", "\n"):
            status, tokens = self.server.post("/tokenize", {"content": piece})
            self.assertEqual(status, 200, tokens)
            self.assertEqual(len(tokens["tokens"]), 1, (piece, tokens))
            ids.append(tokens["tokens"][0])
        # Only those four tokens are likely: replies that open and close the channel at random.
        bias = {str(i): 100 for i in ids}
        checked_channels = with_reasoning = with_answer = 0
        for seed in (5, 6, 7):
            run_args = ["--chat", "-p", "Hi", "--special", "--temp", "1", "-s", str(seed), "-n",
                        "40", "--ignore-eos"]
            for i in ids:
                run_args += ["-l", "%d+100" % i]
            raw = cortiq_run(*run_args, model=SYNTH_MODEL)
            answer, reasoning, reasoning_tokens, answer_tokens = split_thought_channel(raw)
            # cortiq-run without --special, stdout a pipe: the answer on stdout, the thoughts on
            # stderr (before its timings).
            run = subprocess.run([RUN, SYNTH_MODEL, "-t", "1"] +
                                 [a for a in run_args if a != "--special"],
                                 capture_output=True, timeout=TIMEOUT)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(run.stdout.decode("utf-8"), answer)
            self.assertTrue(run.stderr.decode("utf-8").startswith(reasoning), run.stderr)
            self.assertNotIn(OPEN, run.stdout.decode("utf-8"))
            checked_channels += raw.count(OPEN)
            body = {"messages": [{"role": "user", "content": "Hi"}], "temperature": 1,
                    "seed": seed, "max_tokens": 40, "ignore_eos": True, "logit_bias": bias}
            status, reply = self.server.post("/v1/chat/completions", body)
            self.assertEqual(status, 200, reply)
            message = reply["choices"][0]["message"]
            self.assertEqual(message["content"], answer, raw)
            self.assertEqual(message.get("reasoning_content", ""), reasoning, raw)
            self.assertNotIn("thought", message["content"])
            usage = reply["usage"]
            self.assertEqual(usage["completion_tokens"], 40)
            self.assertEqual(usage["completion_tokens_details"]["reasoning_tokens"],
                             reasoning_tokens, raw)
            # Streamed: the same split, reasoning in delta.reasoning_content chunks of its own.
            events, done = self.server.stream("/v1/chat/completions", body)
            self.assertTrue(done)
            deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
            self.assertEqual("".join(d.get("content", "") for d in deltas), answer)
            self.assertEqual("".join(d.get("reasoning_content", "") for d in deltas), reasoning)
            for d in deltas:
                self.assertFalse("content" in d and "reasoning_content" in d, d)
            # Log probabilities: one entry per answer token, none for the thought channel's.
            status, reply = self.server.post("/v1/chat/completions", dict(body, logprobs=True))
            self.assertEqual(status, 200, reply)
            self.assertEqual(reply["choices"][0]["message"]["content"], answer)
            self.assertEqual(len(reply["choices"][0]["logprobs"]["content"]), answer_tokens, raw)
            # A stop string applies to the answer only: "a" in the reasoning does not stop it.
            stop_answer, stop_reasoning, _, _ = split_thought_channel(raw, stop="a")
            status, reply = self.server.post("/v1/chat/completions", dict(body, stop=["a"]))
            self.assertEqual(status, 200, reply)
            message = reply["choices"][0]["message"]
            self.assertEqual(message["content"], stop_answer, raw)
            self.assertEqual(message.get("reasoning_content", ""), stop_reasoning, raw)
            with_reasoning += "a" in reasoning
            with_answer += bool(answer)
            # A raw completion keeps every token's text in `text` (no chat format, no split).
            status, reply = self.server.post("/v1/completions", {
                "prompt": "Hi", "max_tokens": 8, "temperature": 0, "logit_bias": {ids[2]: 100}})
            self.assertEqual(status, 200, reply)
            self.assertEqual(reply["choices"][0]["text"], "a" * 8)
            self.assertEqual(reply["usage"]["completion_tokens_details"]["reasoning_tokens"], 0)
        # The seeds gave replies with channels, reasoning with an "a" in it and an answer.
        self.assertGreater(checked_channels, 3)
        self.assertGreater(with_reasoning, 0)
        self.assertGreater(with_answer, 0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
