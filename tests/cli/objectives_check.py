"""Checks for tests/cli/objectives.sh, independent of the C++ code (stdlib only).

  masks            reads `pretrain masks` JSONL on stdin: the rules every row must follow
  frozen A B SPEC  compares two model.safetensors: what --train-layers SPEC froze is bit-identical
  metrics LOG      the per-term losses in a metrics log of a mixed-objective run
"""
import json
import struct
import sys

WORD_START, ENTITY, RELATION, LINK, ANSWER, SPECIAL = 1, 2, 4, 8, 16, 32
DEFAULTS = {"text": "mlm", "annotated": "mlm", "kmlm": "knowledge", "kmlm-parallel": "knowledge",
            "kmlm-alias": "knowledge", "reasoning-3": "reasoning", "reasoning-4": "reasoning",
            "entitycs": "pep-ms+mlm"}


def fail(msg):
    sys.exit("objectives_check: " + msg)


def check_masks(lines):
    rows = kinds = 0
    seen = {}
    for line in lines:
        r = json.loads(line)
        rows += 1
        kind, objective = r["kind"], r["objective"]
        seen[kind] = seen.get(kind, 0) + 1
        if objective != DEFAULTS[kind]:
            fail(f"row {r['row']}: {kind} trained with {objective}, not {DEFAULTS[kind]}")
        ids, flags, spans, inp = r["ids"], r["flags"], r["spans"], r["input"]
        positions, became, terms = r["positions"], r["became"], r["terms"]
        if not (len(ids) == len(flags) == len(spans) == len(inp)) or not (len(positions) == len(became) == len(terms)):
            fail(f"row {r['row']}: array lengths differ")
        if positions != sorted(set(positions)):
            fail(f"row {r['row']}: positions not increasing")
        chosen = dict(zip(positions, became))
        for i, (a, b) in enumerate(zip(ids, inp)):
            if flags[i] & (LINK | SPECIAL) and i in chosen:
                fail(f"row {r['row']}: position {i} (flags {flags[i]}) is a link slot or special token with a loss")
            if a != b and i not in chosen:
                fail(f"row {r['row']}: position {i} changed without a loss")
            what = chosen.get(i)
            if what == "same" and a != b:
                fail(f"row {r['row']}: position {i} kept but changed")
        expected_term = {"knowledge": "knowledge", "reasoning": "reasoning"}.get(objective, "mlm")
        if any(t != expected_term for t in terms):
            fail(f"row {r['row']}: {objective} tokens must count towards {expected_term}")
        if objective == "knowledge" and any(not flags[p] & (ENTITY | RELATION) for p in positions):
            fail(f"row {r['row']}: knowledge masked a token outside the entities and relations")
        if objective == "reasoning":
            mentioned = {}
            for p in positions:
                mentioned.setdefault(spans[p], []).append(p)
            relations = [s for s, ps in mentioned.items() if flags[ps[0]] & RELATION and not flags[ps[0]] & ENTITY]
            for s, ps in mentioned.items():
                whole = [i for i in range(len(ids)) if spans[i] == s and not flags[i] & (LINK | SPECIAL)]
                if ps != whole:
                    fail(f"row {r['row']}: span {s} masked partly")
            if any(b != "mask" for b in became):
                fail(f"row {r['row']}: reasoning tokens all become <mask>")
            if kind == "reasoning-3" and (len(relations) != 1 or len(mentioned) != 1):
                fail(f"row {r['row']}: a 3-cycle must have exactly one relation masked, got spans {sorted(mentioned)}")
            if kind == "reasoning-4" and not (len(relations) == 1 and len(mentioned) in (2, 3)
                                              or not relations and len(mentioned) == 2):
                fail(f"row {r['row']}: a 4-cycle masks one relation + 1-2 entities, or one sentence's entities")
        if objective.startswith("wep") and "random" in [b for p, b in chosen.items() if flags[p] & ENTITY]:
            fail(f"row {r['row']}: WEP replaced an entity subword with a random token")
    if rows == 0:
        fail("no rows")
    print("masks: %d rows checked (%s)" % (rows, ", ".join(f"{k} {n}" for k, n in sorted(seen.items()))))


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: data[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in header.items() if k != "__metadata__"}


def check_frozen(a_path, b_path, spec, layers):
    a, b = read_safetensors(a_path), read_safetensors(b_path)
    last = int(spec.split(",")[0].split(":")[1])
    embeddings_frozen = spec.endswith(",frozen-embeddings")
    same = changed = 0
    for name in a:
        frozen = False
        if ".encoder.layer." in name:
            frozen = int(name.split(".encoder.layer.")[1].split(".")[0]) < layers - last
        elif ".embeddings." in name:
            frozen = embeddings_frozen
        if frozen and a[name] != b[name]:
            fail(f"{name} is frozen by --train-layers {spec} but changed")
        if not frozen and a[name] == b[name] and "position_ids" not in name:
            fail(f"{name} is trained by --train-layers {spec} but did not change")
        same += frozen
        changed += not frozen
    print(f"frozen: {same} tensors bit-identical, {changed} trained ({spec})")


def check_metrics(path):
    steps = [json.loads(l) for l in open(path) if '"loss"' in l]
    if not steps:
        fail("no steps logged")
    for term in ("mlm", "knowledge", "reasoning"):
        if not any(s.get("loss_" + term) is not None and s.get("masked_" + term, 0) > 0 for s in steps):
            fail(f"no step has a {term} loss")
    for s in steps:
        terms = {t: s["loss_" + t] for t in ("mlm", "knowledge", "reasoning") if s["loss_" + t] is not None}
        total = terms.get("mlm", 0) + 0.3 * (terms.get("knowledge", 0) + terms.get("reasoning", 0))
        if abs(total - s["loss"]) > 1e-4 * max(1, abs(total)):
            fail(f"step {s['step']}: loss {s['loss']} is not L_MLM + 0.3(L_K + L_R) = {total}")
        if sum(s["masked_" + t] for t in ("mlm", "knowledge", "reasoning")) != s["masked"]:
            fail(f"step {s['step']}: per-term masked counts do not add up")
    print(f"metrics: {len(steps)} steps, every loss = L_MLM + 0.3(L_K + L_R)")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "masks":
        check_masks(sys.stdin)
    elif what == "frozen":
        check_frozen(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif what == "metrics":
        check_metrics(sys.argv[2])
    else:
        fail("unknown check " + what)
