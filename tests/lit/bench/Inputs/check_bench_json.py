# Checks `cortiq-bench --json` (tests/lit/bench/bench.test): the output is one valid JSON object
# (strict UTF-8) whose "model" is the path given, and whose results carry the documented fields.
# Usage: check_bench_json.py BENCH.json EXPECTED_MODEL
import json
import sys


def main():
    with open(sys.argv[1], "rb") as f:
        bench = json.loads(f.read().decode("utf-8"))
    assert bench["model"] == sys.argv[2], (bench["model"], sys.argv[2])
    assert bench["weight_formats"] == "f32", bench
    assert bench["weight_bytes_per_token"] > bench["weight_bytes_per_prompt_token"] > 0, bench
    assert bench["bandwidth_gbs"] == {"1": 10.0}, bench
    tests = [r["test"] for r in bench["results"]]
    assert tests == ["pp2", "tg1"], tests
    for r in bench["results"]:
        speed = r["tokens_per_s"]
        assert 0 < speed["min"] <= speed["median"] <= speed["max"], r
    print("bench json ok: %d results" % len(bench["results"]))


main()
