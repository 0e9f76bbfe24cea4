#!/usr/bin/env python3
"""Concurrent streaming clients against cortiq-server: the continuous-batching figures.

    bench/server_bench.py MODEL.cortiq [--server build/bin/cortiq-server] [--clients 1,2,4,8]
                          [--tokens 64] [--threads N] [--ctx-size 2048] [--no-mmap]

Starts cortiq-server with --parallel = the largest client count, then for each client count N
runs N clients at once, each streaming a greedy completion of --tokens tokens (ignore_eos, a
prompt of its own so that no slot reuses another's prefix). Per run it prints the aggregate
generated tokens per second (all tokens / wall time from the first request to the last token),
the mean per-client decode rate ((tokens - 1) / time from its first to its last token), the
time to first token (mean and max) and the longest gap between two chunks of one stream (what a
prefill or a slow step costs a running stream). Not a test: numbers depend on the machine and
its load. Python standard library only.
"""
import argparse
import http.client
import json
import re
import statistics
import subprocess
import sys
import threading
import time


def stream_one(host, port, prompt, tokens, out):
    conn = http.client.HTTPConnection(host, port, timeout=600)
    body = {"prompt": prompt, "max_tokens": tokens, "temperature": 0, "ignore_eos": True,
            "stream": True, "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", body=json.dumps(body),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200, resp.read()
    stamps, usage, buffer = [], None, b""
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            payload = event[len(b"data: "):]
            if payload == b"[DONE]":
                continue
            data = json.loads(payload)
            if data.get("usage"):
                usage = data["usage"]
            elif data["choices"] and data["choices"][0]["finish_reason"] is None:
                stamps.append(time.perf_counter())
    conn.close()
    out.update(start=start, stamps=stamps, tokens=usage["completion_tokens"])


def run(host, port, clients, tokens, round_index):
    results = [dict() for _ in range(clients)]
    threads = [threading.Thread(target=stream_one,
                                args=(host, port,
                                      "Story %d.%d: once upon a time in a land far away" %
                                      (round_index, i), tokens, results[i]))
               for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first_start = min(r["start"] for r in results)
    last_token = max(r["stamps"][-1] for r in results)
    total = sum(r["tokens"] for r in results)
    ttft = [r["stamps"][0] - r["start"] for r in results]
    rates = [(len(r["stamps"]) - 1) / (r["stamps"][-1] - r["stamps"][0]) for r in results]
    gaps = [max(b - a for a, b in zip(r["stamps"], r["stamps"][1:])) for r in results]
    return {"clients": clients, "aggregate": total / (last_token - first_start),
            "per_client": statistics.mean(rates), "ttft_mean": statistics.mean(ttft),
            "ttft_max": max(ttft), "max_gap": max(gaps),
            "aggregate_decode": sum(rates)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--server", default="build/bin/cortiq-server")
    p.add_argument("--clients", default="1,2,4,8")
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--threads", type=int, default=0, help="cortiq-server -t (0: its default)")
    p.add_argument("--ctx-size", type=int, default=2048)
    p.add_argument("--no-mmap", action="store_true", help="cortiq-server --no-mmap")
    a = p.parse_args()
    counts = [int(c) for c in a.clients.split(",")]
    cmd = [a.server, a.model, "--port", "0", "--parallel", str(max(counts)), "-c",
           str(a.ctx_size)]
    if a.threads:
        cmd += ["-t", str(a.threads)]
    if a.no_mmap:
        cmd += ["--no-mmap"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    m = re.search(r"listening on http://([0-9.]+):(\d+)", line)
    if not m:
        proc.kill()
        sys.exit("cortiq-server did not start: " + line + proc.stderr.read())
    print(line.strip(), file=sys.stderr)
    host, port = m.group(1), int(m.group(2))
    try:
        run(host, port, 1, 8, 0)  # warm-up: pages of the weights mapped in
        print("%7s %14s %16s %16s %10s %10s %12s" % ("clients", "aggregate t/s", "decode sum t/s",
                                                      "per-client t/s", "TTFT mean", "TTFT max",
                                                      "max gap"))
        base = None
        for i, n in enumerate(counts):
            r = run(host, port, n, a.tokens, i + 1)
            base = base or r["per_client"]
            print("%7d %14.2f %16.2f %16.2f %9.2fs %9.2fs %11.3fs   (%.2fx the 1-client rate)" %
                  (n, r["aggregate"], r["aggregate_decode"], r["per_client"], r["ttft_mean"],
                   r["ttft_max"], r["max_gap"], r["aggregate_decode"] / base))
            sys.stdout.flush()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
