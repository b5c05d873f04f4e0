#!/usr/bin/env python3
"""Writes a synthetic Wikidata JSON dump (one entity per line, as the real dumps) of N items whose
shape follows Wikidata's where it matters to kglm's data tools, and the counts a correct extraction
must find, counted here independently of kglm:

- hub classes (every human is P31 -> Q5, every article P31 -> scholarly article), 200 countries,
  cities, occupations, journals, universities and companies chosen with Zipf (power-law in-degree),
  articles citing earlier articles (preferential: old articles collect citations), co-authors;
- about 13 statements per item, half of them item-valued; literals (time, quantity, string,
  external id, monolingual text, globe coordinate) and qualifiers (point in time, start time);
  deprecated-rank, novalue and somevalue statements, and item values pointing outside the dump;
- labels in the 10 KMLM languages (English always, others with falling rates) and in two more
  (pl, sv) that the default --langs drops; English aliases and descriptions; enwiki/dewiki sitelinks.

    python3 bench/make-synthetic-wikidata.py N OUT.json [--seed 1] [--counts OUT.counts.json]
    python3 bench/make-synthetic-wikidata.py N - | zstd -T0 -o dump.json.zst   # stdout

The counts JSON holds, for the default wd-extract options (--langs en,vi,nl,de,fr,it,es,ja,ko,zh,
--sites enwiki): items, properties, item_triples, triples_dropped_missing_object, deprecated_skipped,
novalue_skipped, somevalue_skipped, qualifiers, literal_<type>, labels_<lang>, aliases_en,
descriptions_en, sitelinks, and `degree` facts for kg-cycles (the largest in-degree, and how many
items have more than 1000 item-valued neighbours).
"""
import argparse
import bisect
import json
import random
import sys

LANGS = ["en", "de", "fr", "es", "it", "nl", "ja", "zh", "ko", "vi"]  # the KMLM ten
LABEL_RATE = {"en": 1.0, "de": 0.6, "fr": 0.55, "es": 0.5, "it": 0.4, "nl": 0.4, "ja": 0.3, "zh": 0.3, "ko": 0.2,
              "vi": 0.2, "pl": 0.3, "sv": 0.25}
KEPT_LANGS = set(LANGS)

# (P number, datatype, English label) of the properties the items use.
PROPERTIES = [
    (31, "wikibase-item", "instance of"), (17, "wikibase-item", "country"), (19, "wikibase-item", "place of birth"),
    (27, "wikibase-item", "country of citizenship"), (106, "wikibase-item", "occupation"),
    (69, "wikibase-item", "educated at"), (108, "wikibase-item", "employer"), (1433, "wikibase-item", "published in"),
    (50, "wikibase-item", "author"), (2860, "wikibase-item", "cites work"), (36, "wikibase-item", "capital"),
    (47, "wikibase-item", "shares border with"), (131, "wikibase-item", "located in"),
    (159, "wikibase-item", "headquarters location"), (569, "time", "date of birth"), (570, "time", "date of death"),
    (577, "time", "publication date"), (585, "time", "point in time"), (580, "time", "start time"),
    (1082, "quantity", "population"), (856, "url", "official website"), (356, "external-id", "DOI"),
    (1476, "monolingualtext", "title"), (625, "globe-coordinate", "coordinate location"),
]

CLASSES = {"human": 5, "city": 515, "country": 6256, "article": 13442814, "journal": 5633421, "occupation": 28640,
           "university": 3918, "company": 4830453}


class Zipf:
    """Draws from a list with probability proportional to 1 / (rank + 1) ** s (a power law)."""

    def __init__(self, items, rng, s=1.0):
        self.items, self.rng = items, rng
        total, self.cum = 0.0, []
        for r in range(len(items)):
            total += 1.0 / (r + 1) ** s
            self.cum.append(total)
        self.total = total

    def draw(self):
        return self.items[bisect.bisect_left(self.cum, self.rng.random() * self.total)]

    def distinct(self, k):
        out = []
        for _ in range(4 * k):
            x = self.draw()
            if x not in out:
                out.append(x)
                if len(out) == k:
                    break
        return out


class Counts:
    def __init__(self):
        self.c = {}
        self.in_degree = {}

    def add(self, key, n=1):
        self.c[key] = self.c.get(key, 0) + n


def snak(prop, datatype, value_json, value_type, snaktype="value"):
    if snaktype != "value":
        return '{"snaktype":"%s","property":"P%d","datatype":"%s"}' % (snaktype, prop, datatype)
    return ('{"snaktype":"value","property":"P%d","datavalue":{"value":%s,"type":"%s"},"datatype":"%s"}'
            % (prop, value_json, value_type, datatype))


def item_value(q):
    return '{"entity-type":"item","numeric-id":%d,"id":"Q%d"}' % (q, q)


def time_value(year):
    return ('{"time":"+%04d-01-01T00:00:00Z","timezone":0,"before":0,"after":0,"precision":9,'
            '"calendarmodel":"http://www.wikidata.org/entity/Q1985727"}' % year)


class Writer:
    def __init__(self, out, n, counts, rng, existing):
        self.out, self.n, self.k, self.rng, self.exists = out, n, counts, rng, existing

    def entity(self, q, labels, claims, sitelinks=()):
        k, rng = self.k, self.rng
        parts = []
        for lang, text in labels:
            parts.append('"%s":{"language":"%s","value":%s}' % (lang, lang, json.dumps(text, ensure_ascii=False)))
            if lang in KEPT_LANGS:
                k.add("labels_" + lang)
        desc = ""
        if rng.random() < 0.5:
            desc = '"en":{"language":"en","value":"synthetic entity %d"}' % q
            k.add("descriptions_en")
        aliases = ""
        if rng.random() < 0.3:
            a = ['{"language":"en","value":"%s alias %d"}' % (labels[0][1], i) for i in range(1 + (q % 2))]
            aliases = '"en":[%s]' % ",".join(a)
            k.add("aliases_en", len(a))
        claim_json = []
        for prop, statements in claims:
            claim_json.append('"P%d":[%s]' % (prop, ",".join(statements)))
        links = []
        for site in sitelinks:
            title = labels[0][1][:1].upper() + labels[0][1][1:]  # as Wikipedia's titles: first letter upper case
            links.append('"%s":{"site":"%s","title":"%s %d","badges":[]}' % (site, site, title, q))
            if site == "enwiki":
                k.add("sitelinks")
        self.out.write('{"type":"item","id":"Q%d","labels":{%s},"descriptions":{%s},"aliases":{%s},"claims":{%s},'
                       '"sitelinks":{%s}},\n' % (q, ",".join(parts), desc, aliases, ",".join(claim_json),
                                                 ",".join(links)))
        k.add("items")

    def statement(self, subject, prop, n, mainsnak, rank="normal", qualifiers=""):
        q = ',"qualifiers":{%s}' % qualifiers if qualifiers else ""
        return '{"mainsnak":%s,"type":"statement","id":"Q%d$%d-%d","rank":"%s"%s}' % (mainsnak, subject, prop, n,
                                                                                      rank, q)

    def item_claim(self, subject, prop, objects, qualifier=None):
        """Item-valued statements; a rare deprecated one, and a rare object outside the dump."""
        k, rng, out = self.k, self.rng, []
        for i, o in enumerate(objects):
            rank = "normal"
            if rng.random() < 0.01:
                rank = "deprecated"
                k.add("deprecated_skipped")
            elif rng.random() < 0.005:
                o = self.n + 1_000_000 + rng.randrange(1000)  # an item this dump does not have
            quals = ""
            if qualifier and rank != "deprecated":
                quals = '"P%d":[%s]' % (qualifier[0], snak(qualifier[0], "time", time_value(qualifier[1]), "time"))
            out.append(self.statement(subject, prop, i, snak(prop, "wikibase-item", item_value(o),
                                                             "wikibase-entityid"), rank, quals))
            if rank == "deprecated":
                continue
            if quals:
                k.add("qualifiers" if o in self.exists else "qualifiers_dropped_with_triple")
            if o in self.exists:
                k.add("item_triples")
                k.in_degree[o] = k.in_degree.get(o, 0) + 1
                k.in_degree[subject] = k.in_degree.get(subject, 0) + 1
            else:
                k.add("triples_dropped_missing_object")
        return (prop, out)

    def literal(self, subject, prop, datatype, value_json, value_type, counted, qualifier=None):
        quals = ""
        if qualifier:
            quals = '"P%d":[%s]' % (qualifier[0], snak(qualifier[0], "time", time_value(qualifier[1]), "time"))
            self.k.add("qualifiers")
        self.k.add("literal_" + counted)
        return (prop, [self.statement(subject, prop, 0, snak(prop, datatype, value_json, value_type), "normal",
                                      quals)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("items", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--counts")
    args = ap.parse_args()
    n = max(args.items, 2000)
    rng = random.Random(args.seed)
    # Item ids: the classes keep their real numbers; the others are numbered from 20,000,000 on.
    ids = iter(range(20_000_000, 10**10))
    kinds = {}

    def take(kind, count):
        out = [next(ids) for _ in range(count)]
        for q in out:
            kinds[q] = kind
        return out

    rest = n - len(CLASSES)
    countries = take("country", 200)
    occupations = take("occupation", 500)
    journals = take("journal", max(50, rest // 2000))
    universities = take("university", max(50, rest // 1000))
    companies = take("company", max(50, rest // 500))
    cities = take("city", max(100, rest // 50))
    left = rest - len(kinds)
    humans = take("human", int(left * 0.45))
    articles = take("article", rest - len(kinds))
    for name, q in CLASSES.items():
        kinds[q] = "class"
    existing = set(kinds)
    # Zipf draws: a few big countries, cities, journals, employers; prolific authors.
    z_country, z_city = Zipf(countries, rng, 1.1), Zipf(cities, rng, 1.0)
    z_occ, z_journal = Zipf(occupations, rng, 1.0), Zipf(journals, rng, 0.9)
    z_uni, z_company = Zipf(universities, rng, 0.9), Zipf(companies, rng, 0.9)
    z_author = Zipf(humans, rng, 0.8)

    counts = Counts()
    out = sys.stdout if args.out == "-" else open(args.out + ".tmp", "w", encoding="utf-8")
    w = Writer(out, n, counts, rng, existing)
    out.write("[\n")
    for prop, datatype, label in PROPERTIES:
        # Labels in every kept language, as Wikidata's properties have (the text tools need them).
        names = ",".join('"%s":{"language":"%s","value":"%s"}' % (lang, lang, label if lang == "en" else
                                                                   "%s (%s)" % (label, lang)) for lang in LANGS)
        out.write('{"type":"property","datatype":"%s","id":"P%d","labels":{%s},"descriptions":{},"aliases":{},'
                  '"claims":{}},\n' % (datatype, prop, names))
        counts.add("properties")
        for lang in LANGS:
            counts.add("labels_" + lang)

    def labels_of(q, kind):
        base = "%s %d" % (kind, q)
        return [(lang, base if lang == "en" else "%s %s" % (base, lang)) for lang in LABEL_RATE
                if lang == "en" or rng.random() < LABEL_RATE[lang]]

    def sites():
        return [s for s, p in (("enwiki", 0.6), ("dewiki", 0.3)) if rng.random() < p]

    for name, q in CLASSES.items():
        w.entity(q, labels_of(q, name), [], ("enwiki",))
    article_index = []
    for q in sorted(kinds):
        kind = kinds[q]
        if kind == "class":
            continue
        claims = [w.item_claim(q, 31, [CLASSES[kind]])]
        if kind == "human":
            claims.append(w.item_claim(q, 27, [z_country.draw()]))
            claims.append(w.item_claim(q, 19, [z_city.draw()]))
            claims.append(w.item_claim(q, 106, z_occ.distinct(1 + rng.randrange(3))))
            if rng.random() < 0.5:
                claims.append(w.item_claim(q, 69, [z_uni.draw()], (580, 1950 + rng.randrange(70))))
            if rng.random() < 0.3:
                claims.append(w.item_claim(q, 108, [z_company.draw()]))
            claims.append(w.literal(q, 569, "time", time_value(1900 + rng.randrange(100)), "time", "time"))
            if rng.random() < 0.3:
                claims.append(w.literal(q, 570, "time", time_value(1950 + rng.randrange(70)), "time", "time"))
            if rng.random() < 0.05:
                claims.append((21, [w.statement(q, 21, 0, snak(21, "wikibase-item", None, None, "somevalue"))]))
                counts.add("somevalue_skipped")
        elif kind == "article":
            claims.append(w.item_claim(q, 1433, [z_journal.draw()]))
            claims.append(w.item_claim(q, 50, z_author.distinct(1 + rng.randrange(4))))
            if article_index:
                cites = {article_index[int(len(article_index) * rng.random() ** 2)] for _ in range(rng.randrange(9))}
                if cites:
                    claims.append(w.item_claim(q, 2860, sorted(cites)))
            article_index.append(q)
            claims.append(w.literal(q, 577, "time", time_value(1950 + rng.randrange(75)), "time", "time"))
            claims.append(w.literal(q, 356, "external-id", '"10.%d/x%d"' % (1000 + q % 9000, q), "string",
                                    "external_id"))
            claims.append(w.literal(q, 1476, "monolingualtext", '{"text":"On article %d","language":"en"}' % q,
                                    "monolingualtext", "monolingualtext"))
        elif kind == "city":
            claims.append(w.item_claim(q, 17, [z_country.draw()]))
            claims.append(w.literal(q, 1082, "quantity", '{"amount":"+%d","unit":"1"}' % rng.randrange(1000, 10**7),
                                    "quantity", "quantity", (585, 2000 + rng.randrange(24))))
            claims.append(w.literal(q, 625, "globe-coordinate",
                                    '{"latitude":%.4f,"longitude":%.4f,"precision":0.0001,'
                                    '"globe":"http://www.wikidata.org/entity/Q2"}' % (rng.uniform(-60, 70),
                                                                                      rng.uniform(-180, 180)),
                                    "globecoordinate", "globe_coordinate"))
            if rng.random() < 0.02:
                claims.append((36, [w.statement(q, 36, 0, snak(36, "wikibase-item", None, None, "novalue"))]))
                counts.add("novalue_skipped")
        elif kind == "country":
            claims.append(w.item_claim(q, 36, [z_city.draw()]))
            claims.append(w.item_claim(q, 47, [c for c in rng.sample(countries, 3) if c != q]))
            claims.append(w.literal(q, 1082, "quantity", '{"amount":"+%d","unit":"1"}' % rng.randrange(10**5, 10**9),
                                    "quantity", "quantity", (585, 2000 + rng.randrange(24))))
        elif kind in ("university", "company"):
            claims.append(w.item_claim(q, 17, [z_country.draw()]))
            claims.append(w.item_claim(q, 131 if kind == "university" else 159, [z_city.draw()]))
            claims.append(w.literal(q, 856, "url", '"https://example.org/%d"' % q, "string", "string"))
        elif kind in ("journal", "occupation"):
            if rng.random() < 0.5:
                claims.append(w.item_claim(q, 17, [z_country.draw()]))
        w.entity(q, labels_of(q, kind), claims, sites())
    out.write("]\n")
    if out is not sys.stdout:
        out.close()
        import os
        os.replace(args.out + ".tmp", args.out)
    degrees = sorted(counts.in_degree.values(), reverse=True)
    result = dict(sorted(counts.c.items()))
    result["degree_max"] = degrees[0] if degrees else 0
    result["degree_over_1000"] = sum(1 for d in degrees if d > 1000)
    if args.counts:
        with open(args.counts, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
    print("synthetic Wikidata: %d items, %d item triples, largest degree %d" %
          (result["items"], result.get("item_triples", 0), result["degree_max"]), file=sys.stderr)


if __name__ == "__main__":
    main()
