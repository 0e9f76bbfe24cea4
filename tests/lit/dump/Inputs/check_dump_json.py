# Checks `cortiq-dump --json` of tiny-a (tests/lit/dump/json.test): the object parses, its
# sections agree with each other (totals = sums over the steps, cost formulas, liveness bounds)
# and with the tiny-a config (4 caches of layers 0-3, layers 4-7 KV-shared with layers 2 and 3).
# Usage: check_dump_json.py DUMP.json EXPECTED_FILE_FIELD
import json
import sys


def main():
    with open(sys.argv[1], "rb") as f:
        raw = f.read()
    dump = json.loads(raw.decode("utf-8"))
    assert dump["file"] == sys.argv[2], (dump["file"], sys.argv[2])

    model = dump["model"]
    assert (model["vocab_size"], model["hidden_size"], model["num_hidden_layers"],
            model["max_position_embeddings"]) == (512, 64, 8, 131072), model
    assert model["source"].endswith("tiny-a-f32"), model
    assert dump["header"]["version_major"] == 3
    assert dump["file_size"] == dump["header"]["weights_offset"] + dump["header"]["weights_size"]
    assert dump["ctx_size"] == 4096 and dump["position"] == 4095
    assert dump["layer_mapping"] == "taps"

    # Caches and sharing.
    caches = dump["caches"]
    assert [(c["layer"], c["sliding"], c["rows"]) for c in caches] == [
        (0, True, 519), (1, True, 519), (2, True, 519), (3, False, 4096)], caches
    for c in caches:
        assert c["bytes"] == 2 * 4 * c["rows"] * c["num_kv_heads"] * c["head_dim"], c
    assert [c["reader_layers"] for c in caches] == [[0], [1], [2, 4, 5, 6], [3, 7]], caches
    assert [(s["layer"], s["source_layer"]) for s in dump["kv_sharing"]] == [
        (4, 2), (5, 2), (6, 2), (7, 3)], dump["kv_sharing"]
    layers = dump["layers"]
    assert [l["layer"] for l in layers] == list(range(8))
    for l in layers:
        assert l["kv_shared"] == (l["layer"] >= 4), l
        assert (l["own_cache"] == -1) == l["kv_shared"], l

    # Steps: layers ascend (prologue, 0..7, head), logits_only steps form the head.
    steps = dump["steps"]
    weights = dump["weights"]
    order = {"pre": -1, "head": 100}
    last = -2
    kinds = set()
    for i, s in enumerate(steps):
        assert s["index"] == i
        kinds.add(s["kind"])
        rank = order.get(s["layer"], s["layer"])
        assert rank >= last, (i, s["layer"])
        last = rank
        assert s["logits_only"] == (s["layer"] == "head"), s
        assert s["rows"] in ("all", "logits"), s
        assert not s["logits_only"] or s["rows"] == "logits", s
        if s["kind"] == "kv_append":
            assert s["rows"] == "all", s
        w = s["weight"]
        if w is not None:
            assert weights[w["index"]]["name"] == w["name"], s
        if s["kind"] in ("linear", "lm_head"):
            rows, cols = w["shape"]
            assert s["flops"] == 2 * rows * cols and s["weight_bytes"] == w["size_bytes"], s
            assert s["flops_formula"] == "2*%d*%d" % (rows, cols), s
        if s["kind"] == "embedding":
            assert s["weight_bytes"] == w["size_bytes"] // w["shape"][0], s
        if s["kind"] == "attention":
            cache = caches[s["cache"]]
            keys = min(dump["position"] + 1, cache["window"]) if cache["sliding"] else dump["position"] + 1
            heads = s["params"]["num_heads"]
            assert s["params"]["window"] == (cache["window"] if cache["sliding"] else 0), s
            assert s["flops"] == heads * keys * (4 * cache["head_dim"] + 4), s
            assert s["kv_bytes_read"] == 2 * 4 * keys * cache["num_kv_heads"] * cache["head_dim"], s
        if s["kind"] == "kv_append":
            assert s["out"] is None and s["cache"] >= 0
        for op in s["operands"]:
            assert op["offset"] + 4 * op["num_elements"] <= dump["buffer_plan"]["arena_bytes"]
    for k in ("embedding", "linear", "rms_norm", "rope", "kv_append", "attention", "lm_head",
              "softcap"):
        assert k in kinds, k

    # Totals are the sums over the steps.
    t = dump["totals"]
    assert t["steps"] == len(steps)
    assert t["steps_without_logits"] == sum(1 for s in steps if not s["logits_only"])
    assert t["weight_bytes"] == sum(s["weight_bytes"] for s in steps)
    assert t["weight_bytes"] == (t["weight_bytes_matvec"] + t["weight_bytes_embedding"] +
                                 t["weight_bytes_other"])
    assert t["weight_bytes_without_logits"] == sum(
        s["weight_bytes"] for s in steps if not s["logits_only"])
    assert t["flops"] == sum(s["flops"] for s in steps)
    on_all = [s for s in steps if s["rows"] == "all"]
    assert t["steps_all_rows"] == len(on_all)
    assert t["weight_bytes_all_rows"] == sum(s["weight_bytes"] for s in on_all)
    assert t["flops_all_rows"] == sum(s["flops"] for s in on_all)
    # The KV-shared layers 4-7 feed only the logits: on the logits rows in a plan marked by
    # mark-rows (the default pipeline), on all rows without it (--no-opt).
    shared = set(s["rows"] for s in steps if isinstance(s["layer"], int) and s["layer"] >= 4)
    assert len(shared) == 1, shared
    assert t["flops"] == t["flops_matvec"] + t["flops_attention"] + t["flops_other"]
    assert t["flops_matvec"] == sum(s["flops"] for s in steps if s["kind"] in ("linear", "lm_head"))
    assert t["flops_attention"] == 4338432, t
    assert t["kv_bytes_read"] == 4206592 and t["kv_bytes_written"] == 1280, t
    assert t["kv_cache_bytes"] == sum(c["bytes"] for c in caches)

    # Buffer plan.
    b = dump["buffer_plan"]
    assert b["buffers"] == len(b["buffers_list"]) == b["results"] + b["views"] + b["unused"]
    assert 0 < b["peak_live_bytes"] <= b["arena_bytes"], b
    assert 0 <= b["peak_step"] < len(steps)
    for r in b["live_ranges"]:
        assert 0 <= r["first"] <= r["last"] < len(steps), r
    plan = dump["plan"]
    assert plan["max_batch"] >= 1 and plan["arena_bytes"] == b["arena_bytes"], plan
    logits = b["buffers_list"][plan["logits_buffer"]]
    assert logits["pinned"] and logits["num_elements"] == 512

    # Weights: 64-byte aligned, in order, inside the weight section; each with one XXH3-64 (16
    # hex digits) per chunk of weight_hash_chunk_bytes (format 3.1).
    chunk = plan["weight_hash_chunk_bytes"]
    assert chunk == 1 << 20, plan
    end = 0
    for w in weights:
        assert w["offset"] % 64 == 0 and w["offset"] >= end, w
        end = w["offset"] + w["size_bytes"]
        assert len(w["xxh3_64"]) == (w["size_bytes"] + chunk - 1) // chunk, w
        assert all(len(h) == 16 and int(h, 16) >= 0 for h in w["xxh3_64"]), w
    assert end <= dump["header"]["weights_size"]
    assert len(dump["taps"]) == 8
    print("json ok: %d steps, %d weights, %d caches" % (len(steps), len(weights), len(caches)))


main()
