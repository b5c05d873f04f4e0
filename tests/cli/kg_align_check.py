#!/usr/bin/env python3
"""Independent checks of kg-align and verbalize outputs against the KG's TSV export (wd-extract --tsv).

  kg_align_check.py align TSV_DIR DOCS REDIRECTS ALIGNED COOC STATS
  kg_align_check.py subgraphs TSV_DIR COOC SUBGRAPHS
  kg_align_check.py render TEMPLATE_JSONL KMLM_DIR LINEAR_JSONL SUBGRAPHS
  kg_align_check.py qa TSV_DIR DOCS QUESTIONS_JSONL ALIGNED SILVER_JSON STATS paragraph|sentence

Written from the rules in man 1 kg-align and man 1 verbalize, with Python's own case folding and
word boundaries, so it shares no code with the tools. Exits 1 with a message on the first failure.
"""
import collections
import json
import os
import sys


def fail(message):
    print("FAIL:", message, file=sys.stderr)
    sys.exit(1)


def rows(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            yield line.rstrip("\n").split("\t")


def resolve_title(title, titles, redirects):
    """The entity of a page title: its sitelink, through a redirect, or with the first letter upper-cased."""
    for t in (title, title[:1].upper() + title[1:]):
        if t in titles:
            return titles[t]
        if t in redirects and redirects[t] in titles:
            return titles[redirects[t]]
    return None


def load_kg(tsv):
    names = collections.defaultdict(list)
    for e, lang, text in rows(os.path.join(tsv, "labels.tsv")):
        if lang == "en":
            names[e].append(text)
    for e, lang, text in rows(os.path.join(tsv, "aliases.tsv")):
        if lang == "en":
            names[e].append(text)
    titles = {title: e for e, site, title in rows(os.path.join(tsv, "sitelinks.tsv")) if site == "enwiki"}
    triples = [(s, r, o) for s, r, o, rank in rows(os.path.join(tsv, "triples.tsv")) if rank != "deprecated"]
    return names, titles, triples


def ambiguous(name):  # short names without a capital letter are not matched
    return len(name) <= 3 and not any(c.isupper() for c in name)


def exact(name):  # short names and acronyms match with their exact case
    return len(name) <= 3 or not any(c.islower() for c in name)


def written(name, text):
    """Whether name occurs in text as whole words, with kg-align's case rule."""
    hay, needle = (text, name) if exact(name) else (text.casefold(), name.casefold())
    if not needle:
        return False
    start = hay.find(needle)
    while start >= 0:
        end = start + len(needle)
        before_ok = start == 0 or not (hay[start - 1].isalnum() and needle[0].isalnum())
        after_ok = end == len(hay) or not (hay[end].isalnum() and needle[-1].isalnum())
        if before_ok and after_ok:
            return True
        start = hay.find(needle, start + 1)
    return False


def check_align(tsv, docs, redirects_path, aligned, cooc_path, stats_path):
    names, titles, triples = load_kg(tsv)
    redirects = dict((r[0], r[1]) for r in rows(redirects_path))
    by_subject = collections.defaultdict(list)
    for s, r, o in triples:
        by_subject[s].append((r, o))
    stats = json.load(open(stats_path))

    def resolve(title):
        return resolve_title(title, titles, redirects)

    records = [json.loads(line) for line in open(aligned, encoding="utf-8")]
    aligned_facts = collections.defaultdict(set)
    cooc = collections.Counter()
    statements = 0
    for rec in records:
        s, sentence = rec["subject"], rec["sentence"]
        relations = []
        for fact in rec["facts"]:
            if len(fact) != 3:
                continue
            relation, kind, value = fact
            statements += 1
            if kind != "item":
                continue
            if (relation, value) not in by_subject[s]:
                fail(f"{s} {relation} {value} is not a statement of the KG")
            usable = [n for n in names[value] if not ambiguous(n)]
            if not any(written(n, sentence) for n in usable):
                fail(f"aligned object {value} ({usable[:5]}) is not written in: {sentence}")
            aligned_facts[s].add((relation, value))
            relations.append(int(relation[1:]))
        relations.sort()
        distinct = sorted(set(relations))
        for i, a in enumerate(distinct):
            for b in distinct[i + 1:]:
                cooc[(a, b)] += 1
        for r, n in collections.Counter(relations).items():
            if n > 1:
                cooc[(r, r)] += 1
    written_cooc = {(int(a[1:]), int(b[1:])): int(c) for a, b, c in rows(cooc_path)}
    if written_cooc != dict(cooc):
        fail(f"co-occurrence counts differ from the examples: {sorted(written_cooc.items())[:5]} vs {sorted(cooc.items())[:5]}")
    # Completeness: an object name written in a mapped article's lead is aligned.
    mapped = 0
    missed = []
    for line in open(docs, encoding="utf-8"):
        doc = json.loads(line)
        s = resolve(doc["title"])
        if s is None:
            continue
        mapped += 1
        lead = doc["text"][: len(doc["text"].encode("utf-8")[: doc["root_end"]].decode("utf-8"))]
        for relation, o in by_subject[s]:
            if any(written(n, lead) for n in names[o] if not ambiguous(n)):
                if (relation, o) not in aligned_facts[s]:
                    missed.append((doc["title"], relation, o))
    if missed:
        fail(f"object names written in a lead but not aligned: {missed[:5]}")
    if mapped != stats["articles_mapped"] or mapped == 0:
        fail(f"articles mapped: {stats['articles_mapped']}, the checker maps {mapped}")
    if stats["sentences_aligned"] != len(records) or stats["alignments"] != statements:
        fail("statistics disagree with the records")
    if stats["total_triples"] != len(triples):
        fail(f"total_triples {stats['total_triples']} != {len(triples)} triples in the KG")
    if stats["triples_aligned"] != sum(len(v) for v in aligned_facts.values()):
        fail("triples_aligned disagrees with the records")
    print(f"align: {len(records)} examples, {statements} alignments, {mapped} articles, all sound and complete")


def check_subgraphs(tsv, cooc_path, subgraphs):
    _, _, triples = load_kg(tsv)
    cooc = collections.Counter()
    for a, b, c in rows(cooc_path):
        cooc[tuple(sorted((int(a[1:]), int(b[1:]))))] = int(c)

    def count(a, b):
        return cooc[tuple(sorted((int(a[1:]), int(b[1:]))))]

    remaining = collections.defaultdict(collections.Counter)
    for s, r, o in triples:
        remaining[s][(r, o)] += 1
    expected = collections.Counter(triples)
    found = collections.Counter()
    for line in open(subgraphs, encoding="utf-8"):
        rec = json.loads(line)
        s = rec["subject"]
        group = [(f[0], f[2]) for f in rec["facts"] if len(f) == 3]
        if not 1 <= len(group) <= 5:
            fail(f"subgraph {rec['id']} has {len(group)} statements")
        for k, (r, o) in enumerate(group):
            found[(s, r, o)] += 1
            left = remaining[s]
            if left[(r, o)] == 0:
                fail(f"{s} {r} {o} used twice")
            left[(r, o)] -= 1
            if k > 0:
                prev = group[k - 1][0]
                chosen = count(prev, r)
                best = max((count(prev, r2) for (r2, _), n in left.items() if n > 0), default=0)
                if chosen == 0 or chosen < best:
                    fail(f"{rec['id']}: {r} after {prev} (count {chosen}) while {best} was possible")
        if len(group) < 5:
            last = group[-1][0]
            if any(n > 0 and count(last, r2) > 0 for (r2, _), n in remaining[s].items()):
                fail(f"{rec['id']} closed while a co-occurring statement remained")
    if found != expected:
        fail(f"subgraphs cover {sum(found.values())} statements, the KG has {sum(expected.values())}")
    print(f"subgraphs: {sum(found.values())} statements, each once, greedy order holds")


def spans_ok(rec):
    text = rec["text"].encode("utf-8")
    for b, e, kind, ident in rec["spans"]:
        if not 0 <= b < e <= len(text):
            fail(f"span {b},{e} out of bounds in {rec}")
        if kind in ("entity", "relation") and not ident[:1] in ("Q", "P"):
            fail(f"span without id in {rec}")
        text[b:e].decode("utf-8")  # on character boundaries


def check_render(template_jsonl, kmlm_dir, linear_jsonl, subgraphs):
    langs = collections.Counter()
    for line in open(template_jsonl, encoding="utf-8"):
        rec = json.loads(line)
        spans_ok(rec)
        langs[rec["lang"]] += 1
        if "[" in rec["text"] or "]" in rec["text"] or "  " in rec["text"]:
            fail(f"template markup left in: {rec['text']}")
    if len(langs) != 7:
        fail(f"template records in {sorted(langs)}, 7 languages expected")
    for name in os.listdir(kmlm_dir):
        for line in open(os.path.join(kmlm_dir, name), encoding="utf-8"):
            rec = json.loads(line)
            spans_ok(rec)
            if rec["lang"] + ".jsonl" != name or "[mask]" not in rec["text"]:
                fail(f"kmlm record in {name}: {rec['text']}")
    # Both English forms need the same labels, so they render the same subjects.
    subjects = {json.loads(line)["subject"] for line in open(os.path.join(kmlm_dir, "en.jsonl"), encoding="utf-8")}
    all_subjects = {json.loads(line)["subject"] for line in open(subgraphs, encoding="utf-8")}
    docs = [json.loads(line) for line in open(linear_jsonl, encoding="utf-8")]
    if sorted(d["id"] for d in docs) != sorted(subjects) or len(subjects) < 0.8 * len(all_subjects):
        fail(f"{len(docs)} grouped documents for {len(subjects)} rendered subjects of {len(all_subjects)}")
    for d in docs:
        spans_ok(d)
    print(f"render: template records in {len(langs)} languages, {len(docs)} subject documents")


def check_qa(tsv, docs, questions_path, aligned, silver_path, stats_path, context_kind):
    """kg-align qa's SQuAD file: valid SQuAD v1.1, every answer the span at answer_start (Python's
    code-point indexes) of a context that is a paragraph (line) or sentence of its article, and a
    name of an object of (subject, relation) in the KG; questions are the relation's form (or the
    query form) with the subject's English label; every item statement aligned by kg-align (the
    quadruples) is asked in its article with its object among the answers."""
    names, _, triples = load_kg(tsv)
    label = {e: text for e, lang, text in rows(os.path.join(tsv, "labels.tsv")) if lang == "en"}
    forms = {}
    for line in open(questions_path, encoding="utf-8"):
        q = json.loads(line)
        forms[q["relation"]] = q["question"]
    objects = collections.defaultdict(set)
    for s, r, o in triples:
        objects[(s, r)].add(o)
    texts = {}
    for line in open(docs, encoding="utf-8"):
        doc = json.loads(line)
        texts[doc["id"]] = doc["text"]
    silver = json.load(open(silver_path, encoding="utf-8"))
    stats = json.load(open(stats_path))
    if silver.get("version") != "1.1" or not isinstance(silver.get("data"), list):
        fail("not a SQuAD v1.1 document")
    asked = set()  # (doc, relation, object)
    ids = set()
    questions = answers = 0
    for article in silver["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            for qa in paragraph["qas"]:
                questions += 1
                doc, _, relation = qa["id"].rsplit("-", 2)
                if qa["id"] in ids:
                    fail(f"id {qa['id']} given twice")
                ids.add(qa["id"])
                subject = qa["subject"]
                if relation != qa["relation"]:
                    fail(f"{qa['id']}: the id's relation is not {qa['relation']}")
                units = texts[doc].split("\n")
                if context_kind == "paragraph" and context not in units:
                    fail(f"{qa['id']}: the context is not a paragraph of document {doc}: {context[:80]}")
                if context_kind == "sentence" and not any(context in u for u in units):
                    fail(f"{qa['id']}: the context is not in a paragraph of document {doc}")
                name = label.get(subject, article["title"])
                want = forms[relation].replace("[X]", name) if relation in forms else None
                if want is not None and qa["question"] != want:
                    fail(f"{qa['id']}: question {qa['question']!r}, the form gives {want!r}")
                if want is None and not qa["question"].startswith(name + " "):
                    fail(f"{qa['id']}: the query form does not start with the subject: {qa['question']!r}")
                if not qa["answers"]:
                    fail(f"{qa['id']}: no answer")
                for a in qa["answers"]:
                    answers += 1
                    start, text = a["answer_start"], a["text"]
                    if context[start:start + len(text)] != text:
                        fail(f"{qa['id']}: {text!r} is not at {start} of its context")
                    named = [o for o in objects[(subject, relation)]
                             if any(n.casefold() == text.casefold() for n in names[o])]
                    if not named and not text[:1].isdigit():  # dates are checked by the alignment tests
                        fail(f"{qa['id']}: {text!r} names no object of {subject} {relation}")
                    for o in named:
                        asked.add((doc, relation, o))
    if questions != stats["qa_questions"] or answers != stats["qa_answers"] or questions == 0:
        fail(f"{questions} questions and {answers} answers, the statistics say {stats['qa_questions']} and "
             f"{stats['qa_answers']}")
    missing = []
    for line in open(aligned, encoding="utf-8"):
        rec = json.loads(line)
        for fact in rec["facts"]:
            if len(fact) == 3 and fact[1] == "item" and (rec["doc"], fact[0], fact[2]) not in asked:
                missing.append((rec["title"], fact[0], fact[2]))
    if len(missing) > stats.get("qa_answers_overlapping_subject", 0):
        fail(f"aligned statements not asked: {missing[:5]}")
    print(f"qa: {questions} questions, {answers} answers in {len(silver['data'])} articles; all spans of their "
          f"contexts, all naming their objects; every aligned item statement asked")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"align": check_align, "subgraphs": check_subgraphs, "render": check_render, "qa": check_qa}[mode](*args)
