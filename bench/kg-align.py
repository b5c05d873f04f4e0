#!/usr/bin/env python3
"""bench/kg-align: kg-align (TEKGEN's alignment) against the Python stdlib reference applying the same
rules (bench/reference/kg_align_ref.py) on the same input, in one run: lead sentences/s, sentences per
CPU-second, the speed-ups (wall and per core), how many (sentence, statement) alignments both found.

Input, built once and cached under --work:
  - the KG: wd-extract --langs en --sites enwiki on the dev KG fixture (xfactr-kg-dev.json.gz, 55k
    entities, item claims, English labels and aliases; its enwiki sitelink is the English label).
    The reference reads the same dump (JSON) instead of kg.h5.
  - real documents: the enwiki fixture's XML replicated to --mb MB by make-big-wiki.py, through
    wiki-extract; then every document's title (and id) is REASSIGNED round-robin to the English
    labels of the dev-KG entities with >= 3 item statements (objects with an English label) whose
    enwiki title leads back to them, so each article maps to a subject with statements. Real
    Wikipedia sentences meet real KG names: few align, as in TEKGEN, where a minority of sentences
    align.
  - generated documents, so that real alignments are in the mix: for --generated subjects with
    >= 2 item statements (seeded sample), a one-paragraph lead built from their statements:
    "<subject> is related to <object> and <object>." (objects by label or alias, sometimes in lower
    case), "He was also linked to <object>." (no subject name: the pronoun is replaced) and
    "It is often mentioned together with <some other entity>." (noise), in varying order.
The docs JSONL is cached as kg-align-docs-<mb>mb-<generated>.jsonl (an XML made here is deleted
once extracted); delete it to rebuild. A second table runs the same documents cut to their lead
(-lead.jsonl: text[:root_end] and its links), which leaves out the cost of reading whole articles
that both tools pay in the first. The sentence count of the rates is kg-align's "sentences"
statistic (lead sentences of mapped articles). The agreement is counted on (document, sentence
text, statement) over the full-article outputs (kg_align_ref.compare); a last line checks that
both write identical records on the embedded demo data (quantities, dates, qualifiers), which the
dev KG lacks.

Usage: bench/kg-align.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--mb 500]
                         [--generated 5000]
"""
import json
import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ for the imported reference in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
from benchlib import arguments, here, root, run, runs_by_threads, warm  # noqa: E402
from kg_align_ref import compare  # noqa: E402


def read_tsv(path):
    """Rows of a wd-extract --tsv table (header skipped, \\t \\n \\r \\\\ unescaped)."""
    def unescape(s):
        if "\\" not in s:
            return s
        out, i = [], 0
        while i < len(s):
            if s[i] == "\\" and i + 1 < len(s):
                out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}.get(s[i + 1], s[i + 1]))
                i += 2
            else:
                out.append(s[i])
                i += 1
        return "".join(out)

    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            yield [unescape(x) for x in line.rstrip("\n").split("\t")]


def kg_names(tsv):
    """(labels {Q: label}, aliases {Q: [alias]}, statements {Q: [object]} in dump order, titles {title: Q})."""
    labels = {e: t for e, lang, t in read_tsv(os.path.join(tsv, "labels.tsv")) if lang == "en"}
    aliases = {}
    for e, lang, t in read_tsv(os.path.join(tsv, "aliases.tsv")):
        if lang == "en":
            aliases.setdefault(e, []).append(t)
    statements = {}
    for s, _, o, rank in read_tsv(os.path.join(tsv, "triples.tsv")):
        if rank != "deprecated" and o in labels:
            statements.setdefault(s, []).append(o)
    titles = {}
    for e, site, title in read_tsv(os.path.join(tsv, "sitelinks.tsv")):
        if site == "enwiki":
            titles.setdefault(title, e)
    return labels, aliases, statements, titles


def generated_lead(rng, subject, objects, labels, aliases, all_labels):
    def name(o):
        n = labels[o]
        if aliases.get(o) and rng.random() < 0.3:
            n = rng.choice(aliases[o])
        if len(n) > 3 and any(c.islower() for c in n) and rng.random() < 0.1:
            n = n.lower()
        return n

    objects = objects[:]
    rng.shuffle(objects)
    third = objects[2] if len(objects) > 2 else objects[0]
    sentences = ["%s is related to %s and %s." % (labels[subject], name(objects[0]), name(objects[1])),
                 "He was also linked to %s." % name(third),
                 "It is often mentioned together with %s." % rng.choice(all_labels)]
    first, rest = sentences[0], sentences[1:]
    rng.shuffle(rest)
    return " ".join([first] + rest)


def build_documents(args, tsv, out_path):
    fixture = os.path.join(args.fixtures, "wikipedia", "enwiki-sample-a.xml.bz2")
    xml = os.path.join(args.work, "enwiki-%.0fmb.xml" % args.mb)
    made = not os.path.exists(xml)
    if made:
        subprocess.run([sys.executable, os.path.join(here, "make-big-wiki.py"), fixture, str(args.mb), xml],
                       check=True)
    raw = os.path.join(args.work, "kg-align-raw-docs.jsonl")
    subprocess.run([os.path.join(args.bin, "wiki-extract"), xml, "-o", raw, "--redirects",
                    os.path.join(args.work, "kg-align-redirects.tsv"), "--quiet"], check=True)
    if made:
        os.remove(xml)  # 500 MB; the documents are what is kept

    labels, aliases, statements, titles = kg_names(tsv)
    # Subjects whose enwiki title (their label) leads back to them, in dump order.
    mapped = [e for e in statements if e in labels and titles.get(labels[e]) == e]
    rich = [e for e in mapped if len(statements[e]) >= 3]
    rng = random.Random(0)
    generated = rng.sample([e for e in mapped if len(statements[e]) >= 2], args.generated)
    all_labels = sorted(set(labels.values()))
    n = 0
    with open(raw, encoding="utf-8") as f, open(out_path + ".tmp", "w", encoding="utf-8") as out:
        for n, line in enumerate(f, 1):
            doc = json.loads(line)
            doc["id"] = str(n)
            doc["title"] = labels[rich[(n - 1) % len(rich)]]
            out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
        for k, subject in enumerate(generated, n + 1):
            text = generated_lead(rng, subject, statements[subject], labels, aliases, all_labels)
            doc = {"id": str(k), "title": labels[subject], "text": text, "links": [], "sections": [],
                   "root_end": len(text.encode("utf-8"))}
            out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.remove(raw)
    os.replace(out_path + ".tmp", out_path)
    print("%s: %d real documents on %d subjects, %d generated" % (out_path, n, len(rich), len(generated)),
          file=sys.stderr)


def demo_check(args, ref):
    """Both tools on the embedded demo data (quantities, dates, qualifiers): identical records?"""
    data = os.path.join(root, "data")
    kg, docs = os.path.join(args.work, "kg-align-demo.h5"), os.path.join(args.work, "kg-align-demo-docs.jsonl")
    redirects = os.path.join(args.work, "kg-align-demo-redirects.tsv")
    subprocess.run([os.path.join(args.bin, "wd-extract"), os.path.join(data, "wikidata-sample.json"), "-o", kg,
                    "--langs", "en", "--sites", "enwiki", "--quiet"], check=True)
    subprocess.run([os.path.join(args.bin, "wiki-extract"), os.path.join(data, "enwiki-sample.xml"), "-o", docs,
                    "--redirects", redirects, "--quiet"], check=True)
    a, b = os.path.join(args.work, "kg-align-demo.jsonl"), os.path.join(args.work, "kg-align-demo-ref.jsonl")
    subprocess.run([os.path.join(args.bin, "kg-align"), "--kg", kg, "--redirects", redirects, "-o", a, "--quiet",
                    docs], check=True)
    subprocess.run(["/usr/bin/python3", ref, "--dump", os.path.join(data, "wikidata-sample.json"), "--redirects",
                    redirects, "-o", b, "--stats", os.devnull, docs], check=True)
    with open(a, encoding="utf-8") as fa, open(b, encoding="utf-8") as fb:
        ra, rb = fa.read().splitlines(), fb.read().splitlines()
    return sum(x == y for x, y in zip(ra, rb)), len(ra), len(rb)


def write_leads(docs, out_path):
    """The documents cut to their lead: what an aligner reads when wiki-extract keeps only the lead."""
    with open(docs, encoding="utf-8") as f, open(out_path + ".tmp", "w", encoding="utf-8") as out:
        for line in f:
            doc = json.loads(line)
            end = doc["root_end"]
            doc["text"] = doc["text"].encode("utf-8")[:end].decode("utf-8")
            doc["links"] = [link for link in doc["links"] if link[1] <= end]
            doc["sections"] = []
            out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.replace(out_path + ".tmp", out_path)


def measure(args, what, docs, kg, dump, redirects, ref, out, ref_out, cooc, ref_cooc):
    """kg-align --threads 1 and 2 and the reference on docs; prints the table; returns both stats."""
    stats = os.path.join(args.work, "kg-align.stats.json")
    rows = runs_by_threads("kg-align", lambda n: [
        os.path.join(args.bin, "kg-align"), "--kg", kg, "--redirects", redirects, "--cooc", cooc, "-o", out,
        "--threads", str(n), "--stats", stats, "--quiet", docs])
    s = json.load(open(stats))
    ref_stats = os.path.join(args.work, "kg-align-ref.stats.json")
    rows.append(("python3 stdlib reference",) + run([
        "/usr/bin/python3", ref, "--dump", dump, "--redirects", redirects, "--cooc", ref_cooc, "-o", ref_out,
        "--stats", ref_stats, docs]))
    r = json.load(open(ref_stats))
    sentences = s["sentences"]
    ref_wall, ref_cpu = rows[-1][1], rows[-1][2]
    print("\n%s: %s (%.0f MB, %d documents, %d mapped); KG: %s" % (
        what, docs, os.path.getsize(docs) / 1e6, s["documents"], s["articles_mapped"], kg))
    print("kg-align: %d lead sentences, %d aligned (%.1f%%), %d alignments + %d qualifier, %d pronouns replaced; "
          "reference: %d sentences, %d aligned" % (
              sentences, s.get("sentences_aligned", 0), 100.0 * s.get("sentences_aligned", 0) / max(1, sentences),
              s.get("alignments", 0), s.get("qualifier_alignments", 0), s.get("pronouns_replaced", 0),
              r.get("sentences", 0), r.get("sentences_aligned", 0)))
    print("Rates use kg-align's sentence count for every row. The reference spent %.1f s loading the KG "
          "(JSON dump) and %.1f s reading and aligning the documents." % (r["load_seconds"], r["align_seconds"]))
    print("%-28s %7s %7s %12s %16s %9s %14s %8s" % ("run", "wall s", "cpu s", "sentences/s", "sentences/cpu-s",
                                                 "vs python", "vs python/core", "peak MB"))
    for name, secs, cpu, rss in rows:
        print("%-28s %7.2f %7.2f %12.0f %16.0f %8.1fx %13.1fx %8.0f" % (
            name, secs, cpu, sentences / secs, sentences / cpu, ref_wall / secs, ref_cpu / cpu, rss))
    return s, r


def read_cooc(path):
    with open(path, encoding="utf-8") as f:
        return {tuple(line.split("\t")[:2]): int(line.split("\t")[2]) for line in f if not line.startswith("#")}


def main():
    def extra(ap):
        ap.add_argument("--mb", type=float, default=500, help="size of the replicated Wikipedia XML")
        ap.add_argument("--generated", type=int, default=5000, help="generated documents")

    args = arguments(extra)
    dump = os.path.join(args.fixtures, "xfactr-kg-dev.json.gz")
    if not os.path.exists(dump) or not os.path.exists(os.path.join(args.fixtures, "wikipedia")):
        sys.exit("fixtures not found: " + args.fixtures)
    kg, tsv = os.path.join(args.work, "kg-align-kg.h5"), os.path.join(args.work, "kg-align-kg-tsv")
    subprocess.run([os.path.join(args.bin, "wd-extract"), dump, "-o", kg, "--langs", "en", "--sites", "enwiki",
                    "--tsv", tsv, "--quiet"], check=True)
    docs = os.path.join(args.work, "kg-align-docs-%.0fmb-%d.jsonl" % (args.mb, args.generated))
    redirects = os.path.join(args.work, "kg-align-redirects.tsv")
    if not os.path.exists(docs) or not os.path.exists(redirects):
        build_documents(args, tsv, docs)
    warm(docs)
    warm(dump)

    lead = docs[:-len(".jsonl")] + "-lead.jsonl"
    if not os.path.exists(lead):
        write_leads(docs, lead)
    warm(lead)
    ref = os.path.join(here, "reference", "kg_align_ref.py")
    out, ref_out = os.path.join(args.work, "kg-align.jsonl"), os.path.join(args.work, "kg-align-ref.jsonl")
    cooc, ref_cooc = os.path.join(args.work, "kg-align-cooc.tsv"), os.path.join(args.work, "kg-align-ref-cooc.tsv")
    s, r = measure(args, "full articles", docs, kg, dump, redirects, ref, out, ref_out, cooc, ref_cooc)
    measure(args, "the same articles cut to their lead (text[:root_end])", lead, kg, dump, redirects, ref,
            os.path.join(args.work, "kg-align-lead.jsonl"), os.path.join(args.work, "kg-align-lead-ref.jsonl"),
            os.path.join(args.work, "kg-align-lead-cooc.tsv"), os.path.join(args.work, "kg-align-lead-ref-cooc.tsv"))

    c = compare(out, ref_out)
    print("\n(sentence, statement) alignments on the full articles: kg-align %d, reference %d, both %d: "
          "agreement %.2f%% (both / either)" % (c["a"], c["b"], c["both"], c["agreement_percent"]))
    print("  only kg-align: %d (%d aligned by the reference in a differently split or rewritten sentence, %d not)"
          % (c["a"] - c["both"], c["only_a_other_sentence"], c["only_a_missing"]))
    print("  only reference: %d (%d aligned by kg-align in a differently split or rewritten sentence, %d not)"
          % (c["b"] - c["both"], c["only_b_other_sentence"], c["only_b_missing"]))
    ca, cb = read_cooc(cooc), read_cooc(ref_cooc)
    print("relation pairs: kg-align %d, reference %d, %d with the same count" % (
        len(ca), len(cb), sum(ca.get(k) == v for k, v in cb.items())))
    same, na, nb = demo_check(args, ref)
    print("demo data (quantities, dates, qualifiers): %d of %d records identical (reference: %d)" % (same, na, nb))


if __name__ == "__main__":
    main()
