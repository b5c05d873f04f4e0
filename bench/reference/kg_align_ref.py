#!/usr/bin/env python3
"""The benchmark peer of kg-align: TEKGEN's triple-to-sentence alignment in Python's stdlib, on the
same inputs (the Wikidata JSON dump that kg.h5 was built from, wiki-extract's documents JSONL and
redirects TSV), writing the same JSONL records and co-occurrence TSV.

    python3 bench/reference/kg_align_ref.py --dump KG.json.gz [--redirects R.tsv] [--cooc C.tsv]
        [--stats S.json] -o ALIGNED.jsonl DOCS.jsonl...
    python3 bench/reference/kg_align_ref.py --check A.jsonl B.jsonl   # how many alignments agree

The rules (man 1 kg-align, lib/gen/kg_align.cpp), written the plain Python way:
  - KG: one entity per line (gzip, bzip2 or plain; "[", "]" and trailing commas allowed). English
    labels and aliases, enwiki sitelinks (the first entity with a title keeps it), and the
    non-deprecated claims with a value: items (kept when the object is in the dump), quantities
    (amount, unit), times (value, precision), strings, monolingual texts; their qualifiers.
  - A document's title maps to a subject through the sitelinks, then the redirects, then with its
    first letter upper-cased. Its lead, text[:root_end] (UTF-8 bytes), is split into sentences.
  - Names (an entity's English label and aliases; a string's value) of at most 3 characters without
    a capital letter are not used (units excepted). Names match a sentence when they occur
    in it after case folding (str.lower, every Unicode space as ' ', typographic apostrophes as "'"),
    or exactly for names of at most 3 characters or without lower-case letters, and do not cut a
    word (no letter or digit on both sides of either end; a unit's start may touch its number).
  - An item statement aligns when a name of its object matches; a string or English monolingual
    text when its value does; a quantity when its amount (canonical decimal; "1,234.50" = "1234.5")
    is written, followed by a name of its unit (or that name + "s" for names of >= 4 characters
    ending in a letter other than s) after nothing or one space, or alone when it has no unit; a
    time when a date written in the sentence (D Month Y, Month D, Y, YYYY-MM-DD, Month Y, Y, with
    eras) agrees component by component at the statement's precision. A qualifier aligns as the
    sub-triple (s, o + " " + qualifier, value) where its statement aligns.
  - A sentence that does not name the subject gets its first "he", "she", "him" (-> label) or
    "his", "hers" (-> label + "'s") replaced.

Not ICU: sentences are split at newlines and after '.', '!' or '?' (and closing quotes) followed by
whitespace and an upper-case letter, except after a few abbreviations (Mr., Dr., St., No., U.S. ...); kg-align uses ICU's sentence iterator with CLDR's suppressions and never splits inside
a link, so some sentence boundaries (and with them some alignments) differ. Case folding is
str.lower, not ICU's simple case folding, and "letter or digit" is str.isalnum: they differ only on
rare characters. Offsets are characters, not bytes (the output holds none).
"""
import argparse
import bz2
import collections
import gzip
import json
import re
import sys
import time

# ---------------------------------------------------------------- input


def open_text(path):
    """A text stream over path, gzip/bzip2/plain recognised from the first bytes."""
    if path == "-":
        return sys.stdin
    with open(path, "rb") as f:
        magic = f.read(3)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8")
    if magic == b"BZh":
        return bz2.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def snak_value(snak):
    """(kind, ...) of a value snak, or None (novalue, somevalue, unsupported types)."""
    if snak.get("snaktype") != "value" or "datavalue" not in snak:
        return None
    dv = snak["datavalue"]
    v, t = dv.get("value"), dv.get("type")
    if t == "wikibase-entityid":
        et = v.get("entity-type", "item")
        if et not in ("item", "property"):
            return None
        return (et, v.get("id") or ("Q" if et == "item" else "P") + str(v["numeric-id"]))
    if t == "quantity":
        unit = v.get("unit", "1")
        return ("quantity", v["amount"], None if unit == "1" else unit.rsplit("/", 1)[-1])
    if t == "time":
        p = v.get("precision")
        return ("time", v["time"], int(p) if p is not None else -1)
    if t == "string":
        return ("external_id" if snak.get("datatype") == "external-id" else "string", v)
    if t == "monolingualtext":
        return ("monolingualtext", v["text"], v["language"])
    return None  # globe coordinates: not written in prose


class KG:
    """English names, enwiki titles and statements of a Wikidata JSON dump."""

    KIND_ORDER = ("item", "quantity", "time", "string", "monolingualtext")

    def __init__(self, path):
        self.label, self.aliases, self.titles, self.items = {}, {}, {}, set()
        self.entities = set()
        raw = {}
        with open_text(path) as f:
            for line in f:
                line = line.strip().rstrip(",")
                if line in ("[", "]", ""):
                    continue
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                eid = e.get("id")
                if e.get("type") not in ("item", "property") or eid in self.entities:
                    continue
                self.entities.add(eid)
                if e["type"] == "item":
                    self.items.add(eid)
                label = e.get("labels", {}).get("en")
                if label:
                    self.label[eid] = label["value"]
                aliases = e.get("aliases", {}).get("en")
                if aliases:
                    self.aliases[eid] = [a["value"] for a in aliases]
                site = e.get("sitelinks", {}).get("enwiki")
                if site:
                    self.titles.setdefault(site["title"], eid)
                statements = []
                for prop, claims in e.get("claims", {}).items():
                    for st in claims:
                        if st.get("rank") == "deprecated":
                            continue
                        value = snak_value(st.get("mainsnak", {}))
                        if value is None or value[0] in ("external_id",):
                            continue
                        qualifiers = []
                        for qprop, snaks in st.get("qualifiers", {}).items():
                            for q in snaks:
                                qv = snak_value(q)
                                if qv is not None:
                                    qualifiers.append((qprop, qv))
                        statements.append((prop, value, qualifiers))
                if statements:
                    raw[eid] = statements
        # Item statements whose object is absent are dropped (wd-extract does). Item (and
        # property) objects first, then the literal kinds, each in claim order.
        self.facts = {}
        for eid, statements in raw.items():
            facts = []
            for kind in self.KIND_ORDER:
                for prop, value, qualifiers in statements:
                    k = "item" if value[0] in ("item", "property") else value[0]
                    if k != kind or (k == "item" and value[1] not in self.entities):
                        continue
                    facts.append((prop, value, qualifiers))
            if facts:
                self.facts[eid] = facts

    def names(self, eid):
        label = self.label.get(eid)
        return ([label] if label else []) + self.aliases.get(eid, [])

    def text(self, eid):
        return self.label.get(eid, eid)


def read_redirects(path):
    redirects = {}
    if path:
        with open_text(path) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 2:
                    redirects.setdefault(parts[0], parts[1])
    return redirects


# ---------------------------------------------------------------- text rules

_SPACES = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
FOLD = {ord(c): " " for c in _SPACES}
FOLD.update({0x2018: "'", 0x2019: "'", 0x02BC: "'"})


def fold(s):
    f = s.lower()
    if len(f) != len(s):  # a character that lowers to two ("İ"): keep it as it is
        f = "".join(c.lower() if len(c.lower()) == 1 else c for c in s)
    return f.translate(FOLD)


def needs_exact_case(name):
    return len(name) <= 3 or not any(c.islower() for c in name)


def too_ambiguous(name):
    """Short names without a capital ("in", "it": language codes kept as aliases) are not matched."""
    return len(name) <= 3 and not any(c.isupper() or c.istitle() for c in name)


def canonical_decimal(s):
    m = re.fullmatch(r"([+\-\u2212]?)([0-9]*)(?:\.([0-9]*))?", s)
    if not m or not (m.group(2) or m.group(3)):
        return None
    integer, fraction = m.group(2).lstrip("0"), (m.group(3) or "").rstrip("0")
    sign = "-" if m.group(1) in ("-", "\u2212") and (integer or fraction) else ""
    return sign + (integer or "0") + ("." + fraction if fraction else "")


def format_amount(canonical):
    sign, rest = ("-", canonical[1:]) if canonical.startswith("-") else ("", canonical)
    integer, dot, fraction = rest.partition(".")
    return sign + "{:,}".format(int(integer)) + dot + fraction


# A number: not inside a word; after '.' or ',' only when that follows a letter ("c.1500");
# thousands separators only after a first group of 1-3 digits.
NUMBER = re.compile(r"(?<![^\W_])(?:(?<![.,])|(?<=[^\W\d_][.,]))"
                    r"([0-9]{1,3}(?:,[0-9]{3}(?![0-9]))+|[0-9]+)(\.[0-9]+)?")


def find_numbers(text):
    """[(start, end, canonical value)] of the numbers written in text."""
    out = []
    for m in NUMBER.finditer(text):
        start = m.start()
        sign = ""
        if start and text[start - 1] in "-\u2212" and not (start > 1 and text[start - 2].isalnum()):
            sign = "-"
        out.append((start, m.end(), canonical_decimal(sign + m.group(1).replace(",", "") + (m.group(2) or ""))))
    return out


MONTHS = {m[:3]: i + 1 for i, m in enumerate(("January", "February", "March", "April", "May", "June", "July",
                                              "August", "September", "October", "November", "December"))}
MONTH_NAMES = ["", "January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]
DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
SP = r"[ \u00a0\u202f]+"
END = r"(?![^\W_]|%|\u00b0|[.,][0-9]|(?<=0)['\u2019]s(?![^\W_]))"  # a year ends cleanly: not "1990s", "1990's", "50%"
ERA = r"(?:B\.C\.E\.|B\.C\.|A\.D\.|C\.E\.|(?:BCE|BC|AD|CE)(?![^\W_]))"
NONZERO = r"(?!0+(?![0-9]))"


def month(k):
    return (rf"(?:(?P<m{k}>January|February|March|April|May|June|July|August|September|October|November|December)"
            rf"(?![^\W_])|(?P<m{k}a>Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)(?:\.|(?![^\W_])))")


def year(k, alone):
    """A year: "AD 79", "300 BC", "1879"; alone (no day): 3-4 digits unless an era is written."""
    plain = rf"(?P<z{k}>[1-9][0-9]{{2,3}})(?![0-9]){END}" if alone else \
        rf"(?P<z{k}>{NONZERO}[0-9]{{1,4}})(?![0-9]){END}"
    return (rf"(?:(?:A\.D\.|AD){SP}(?P<p{k}>{NONZERO}[0-9]{{1,4}})(?![0-9]){END}"
            rf"|(?P<y{k}>{NONZERO}[0-9]{{1,4}})(?![0-9])[ \u00a0\u202f]*(?P<e{k}>{ERA})|{plain})")


ORDINAL = r"(?:st|nd|rd|th)(?![^\W_])"
DATE = re.compile(
    # Forms that start with a digit: not inside a word or a number, not after a sign or currency.
    r"(?<![^\W_])(?<![$#\u00a3\u20ac])(?:(?<![.,])|(?<=[^\W\d_][.,]))(?:(?<![-+\u2212])|(?<=[^\W_][-+\u2212]))"
    r"(?:(?P<iy>[0-9]{4})-(?P<im>[0-9]{2})-(?P<id>[0-9]{2})(?![0-9])(?:" + END + r"|(?=T[0-9]))"
    r"|(?P<d1>[0-9]{1,2})(?![0-9])(?P<o1>" + ORDINAL + r")?" + SP + r"(?(o1)(?:of(?![^\W_])" + SP + r")?)" +
    month(1) + SP + year(1, False) + "|" + year(2, True) + ")"
    # Forms that start with a capital: "March 14, 1879", "March 1879", "AD 79".
    r"|(?<![^\W_])(?:" + month(3) + SP + r"(?:(?P<d3>[0-9]{1,2})(?![0-9])(?:" + ORDINAL + r")?,?" + SP +
    year(3, False) + "|" + year(4, True) + r")|(?:A\.D\.|AD)" + SP + r"(?P<p5>" + NONZERO +
    r"[0-9]{1,4})(?![0-9])" + END + ")")


def _year_of(m, k):
    g = m.groupdict()
    if g.get("p%d" % k):
        return int(g["p%d" % k])
    if g.get("y%d" % k):
        value = int(g["y%d" % k])
        return -value if g["e%d" % k].startswith("B") else value
    if g.get("z%d" % k):
        return int(g["z%d" % k])
    return None


def _month_of(m, k):
    name = m.group("m%d" % k) or m.group("m%da" % k)
    return MONTHS[name[:3]]


def find_dates(text):
    """[(year, month, day)] of the real dates written in text (0: component absent)."""
    out = []
    for m in DATE.finditer(text):
        if m.group("iy"):
            y, mo, d = int(m.group("iy")), int(m.group("im")), int(m.group("id"))
            if mo == 0 or mo > 12 or d == 0:
                continue  # shaped like a date, names none
        elif m.group("d1"):
            y, mo, d = _year_of(m, 1), _month_of(m, 1), int(m.group("d1"))
        elif m.group("d3"):
            y, mo, d = _year_of(m, 3), _month_of(m, 3), int(m.group("d3"))
        elif m.group("m3") or m.group("m3a"):
            y, mo, d = _year_of(m, 4), _month_of(m, 3), -1
        elif m.group("p5"):
            y, mo, d = int(m.group("p5")), 0, -1
        else:
            y, mo, d = _year_of(m, 2), 0, -1
        if d == -1:
            d = 0
        elif not 1 <= d <= DAYS[mo]:
            continue  # "30 February 1900": no date at all
        if y:
            out.append((y, mo, d))
    return out


TIME = re.compile(r"([+-]?)([0-9]{1,16})-([0-9]{2})-([0-9]{2})(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?)?")


def parse_time(value, precision):
    """A Wikidata time at its precision (9 year, 10 month, 11+ day) as (year, month, day), or None."""
    m = TIME.fullmatch(value)
    if not m or not 9 <= precision <= 14:
        return None
    y = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    mo = int(m.group(3)) if precision >= 10 else 0
    d = int(m.group(4)) if precision >= 11 else 0
    if y == 0 or (precision >= 10 and not 1 <= mo <= 12) or (precision >= 11 and not 1 <= d <= DAYS[mo]):
        return None
    return (y, mo, d)


def dates_agree(a, b):
    return a[0] == b[0] and (not a[1] or not b[1] or a[1] == b[1]) and (not a[2] or not b[2] or a[2] == b[2])


def date_en(d):
    y, mo, day = d
    text = str(abs(y)) + (" BC" if y < 0 else "")
    if mo:
        text = MONTH_NAMES[mo] + " " + text
        if day:
            text = "%d %s" % (day, text)
    return text


def date_iso(d):
    y, mo, day = d
    text = ("-" if y < 0 else "") + "%04d" % abs(y)
    if mo:
        text += "-%02d" % mo + ("-%02d" % day if day else "")
    return text


PRONOUN = re.compile(r"(?<![^\W_])(he|she|him|his|hers)(?![^\W_])", re.I | re.A)
POSSESSIVE = {"his", "hers"}


def replace_first_pronoun(sentence, name):
    for m in PRONOUN.finditer(sentence):
        # the whole run of ASCII letters must be the pronoun (no letter of any script around it)
        if (m.start() and sentence[m.start() - 1].isalnum()) or (m.end() < len(sentence) and
                                                                 sentence[m.end()].isalnum()):
            continue
        word = m.group(1).lower()
        return sentence[:m.start()] + name + ("'s" if word in POSSESSIVE else "") + sentence[m.end():], True
    return sentence, False


BREAK = re.compile(r"[.!?]['\"\u2019\u201d)\]]*\s+")
ABBREVIATIONS = {"Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Mt", "Ft", "Jr", "Sr", "No", "Nos", "Vol", "vs", "ca",
                 "approx", "Inc", "Ltd", "Co", "Corp", "Bros", "Gen", "Col", "Lt", "Sgt", "Capt", "Gov", "Sen", "Rep",
                 "Rev", "Hon", "Fr", "U.S", "U.K", "e.g", "i.e", "Jan", "Feb", "Aug", "Sept", "Oct", "Nov", "Dec"}
LAST_WORD = re.compile(r"(?<![\w.])([\w.]*)\.$")


def split_sentences(text):
    """Sentences of text: at newlines, and after [.!?] (+ closing quotes) + whitespace before an
    upper-case letter (an opening quote or parenthesis may come first), except after an abbreviation."""
    out = []
    for line in text.split("\n"):
        start = 0
        for m in BREAK.finditer(line):
            nxt = line[m.end():m.end() + 2]
            if not nxt or not (nxt[0].isupper() or (nxt[0] in "\"'(\u201c" and nxt[1:2].isupper())):
                continue
            if line[m.start()] == ".":
                w = LAST_WORD.search(line, max(start, m.start() - 12), m.start() + 1)
                word = w.group(1) if w else ""
                if word in ABBREVIATIONS:
                    continue
            piece = line[start:m.end()].strip()
            if piece:
                out.append(piece)
            start = m.end()
        piece = line[start:].strip()
        if piece:
            out.append(piece)
    return out


# ---------------------------------------------------------------- alignment

UNIT_GAPS = ("", " ", "\u00a0", "\u2009", "\u202f")


class Candidate:
    __slots__ = ("parent", "fact", "qualifier", "how", "amount", "has_unit", "date")

    def __init__(self, fact, qualifier, parent):
        self.fact, self.qualifier, self.parent = fact, qualifier, parent
        self.how, self.amount, self.has_unit, self.date = "name", None, False, None


class Aligner:
    def __init__(self, kg, redirects):
        self.kg, self.redirects = kg, redirects
        self.stats = collections.Counter()
        self.cooc = collections.Counter()

    def resolve(self, title):
        titles = self.kg.titles
        for t in (title, title[:1].upper() + title[1:]):
            if t in titles:
                return titles[t]
            if t in self.redirects and self.redirects[t] in titles:
                return titles[self.redirects[t]]
        return None

    # Patterns of an article: {(searched text, exact): [target]}, target = ("subject",),
    # ("object", candidate index) or ("unit", candidate index).
    def add_names(self, patterns, names, target, unit=False):
        added = 0
        for name in names:
            if not name or (too_ambiguous(name) and not unit):
                continue
            added += 1
            variants = [name]
            if unit and len(name) >= 4 and name[-1].isascii() and name[-1].isalpha() and name[-1] != "s":
                variants.append(name + "s")
            for v in variants:
                exact = needs_exact_case(v)
                patterns.setdefault((v if exact else fold(v), exact), []).append(target)
        return added

    def set_quantity(self, patterns, c, amount, unit, index):
        c.how, c.amount, c.has_unit = "quantity", canonical_decimal(amount), unit is not None
        if c.amount is None:
            return False
        if unit is None:
            return True
        return unit in self.kg.items and self.add_names(patterns, self.kg.names(unit), ("unit", index), True) > 0

    def set_value(self, patterns, c, value, index, statement):
        kind = value[0]
        if kind == "item" or (kind == "property" and statement):
            if not statement and value[1] not in self.kg.items:
                return False
            return self.add_names(patterns, self.kg.names(value[1]), ("object", index)) > 0
        if kind == "quantity":
            return self.set_quantity(patterns, c, value[1], value[2], index)
        if kind == "time":
            c.how, c.date = "date", parse_time(value[1], value[2])
            return c.date is not None
        if kind == "monolingualtext" and statement and not (value[2] == "en" or value[2].startswith("en-")):
            return False
        if kind in ("string", "monolingualtext"):
            return self.add_names(patterns, [value[1]], ("object", index)) > 0
        return False

    def article(self, doc, out):
        st = self.stats
        st["documents"] += 1
        subject = self.resolve(doc["title"])
        if subject is None:
            st["articles_unmapped"] += 1
            return
        st["articles_mapped"] += 1
        facts = self.kg.facts.get(subject)
        if not facts:
            st["articles_without_statements"] += 1
            return
        patterns, candidates = {}, []
        self.add_names(patterns, self.kg.names(subject), ("subject",))
        for fact in facts:
            parent = len(candidates)
            c = Candidate(fact, None, None)
            if not self.set_value(patterns, c, fact[1], parent, True):
                continue
            candidates.append(c)
            for j, (qprop, qvalue) in enumerate(fact[2]):
                q = Candidate(fact, j, parent)
                if self.set_value(patterns, q, qvalue, len(candidates), False):
                    candidates.append(q)
        any_quantity = any(c.how == "quantity" for c in candidates)
        any_date = any(c.how == "date" for c in candidates)
        lead = doc["text"].encode("utf-8")[:doc["root_end"]].decode("utf-8", "replace")
        sentences = split_sentences(lead)
        st["sentences"] += len(sentences)
        for index, sentence in enumerate(sentences):
            folded = fold(sentence)
            n = len(sentence)
            named = False
            matched = [False] * len(candidates)
            unit_starts = []
            for (key, exact), targets in patterns.items():
                text = sentence if exact else folded
                at = text.find(key)
                while at >= 0:
                    end = at + len(key)
                    left_ok = not (at and sentence[at - 1].isalnum() and sentence[at].isalnum())
                    right_ok = not (end < n and sentence[end - 1].isalnum() and sentence[end].isalnum())
                    if right_ok:
                        for target in targets:
                            if target[0] == "unit":
                                unit_starts.append((at, target[1]))
                            elif left_ok:
                                if target[0] == "subject":
                                    named = True
                                else:
                                    matched[target[1]] = True
                    at = text.find(key, at + 1)
            numbers = find_numbers(sentence) if any_quantity else ()
            dates = find_dates(sentence) if any_date else ()
            aligned, relations = [], []
            for i, c in enumerate(candidates):
                if c.how == "quantity":
                    matched[i] = any(value == c.amount and (not c.has_unit or any(
                        u == i and begin >= end and sentence[end:begin] in UNIT_GAPS for begin, u in unit_starts))
                        for start, end, value in numbers)
                elif c.how == "date":
                    matched[i] = any(dates_agree(c.date, d) for d in dates)
                if c.parent is not None and not matched[c.parent]:
                    matched[i] = False
                if matched[i]:
                    aligned.append(c)
                    if c.parent is None:
                        relations.append(c.fact[0])
            if not aligned:
                continue
            st["sentences_aligned"] += 1
            st["alignments"] += len(relations)
            st["qualifier_alignments"] += len(aligned) - len(relations)
            self.count_cooccurrence(relations)
            if named:
                st["sentences_naming_subject"] += 1
            else:
                sentence, replaced = replace_first_pronoun(sentence, self.kg.label.get(subject, doc["title"]))
                st["pronouns_replaced"] += replaced
            out.write(self.record(subject, doc, index, aligned, sentence))

    def count_cooccurrence(self, relations):
        counts = collections.Counter(relations)
        distinct = sorted(counts, key=lambda p: int(p[1:]))
        for r in distinct:
            if counts[r] > 1:
                self.cooc[(r, r)] += 1
        for i, a in enumerate(distinct):
            for b in distinct[i + 1:]:
                self.cooc[(a, b)] += 1

    # ------------------------------------------------------------ output (FactText's JSON)

    def value_text(self, value):
        kind = value[0]
        if kind in ("item", "property"):
            return self.kg.text(value[1])
        if kind == "quantity":
            amount = canonical_decimal(value[1])
            if amount is None:
                return value[1]
            text = format_amount(amount)
            if value[2] and value[2] in self.kg.label:
                text += " " + self.kg.label[value[2]]
            return text
        if kind == "time":
            d = parse_time(value[1], value[2])
            return date_en(d) if d else value[1]
        return value[1]

    @staticmethod
    def value_id(value):
        kind = value[0]
        if kind == "quantity":
            return (canonical_decimal(value[1]) or value[1]) + (" " + value[2] if value[2] else "")
        if kind == "time":
            d = parse_time(value[1], value[2])
            return date_iso(d) if d else value[1]
        return value[1]

    def record(self, subject, doc, index, aligned, sentence):
        s = self.kg.text(subject)
        triples, facts, serialized = [], [], []
        for c in aligned:
            prop, value, qualifiers = c.fact
            r, o = self.kg.text(prop), self.value_text(value)
            kind = "item" if value[0] in ("item", "property") else value[0]
            fact = [prop, kind, self.value_id(value)]
            if c.qualifier is None:
                triples.append([s, r, o])
                serialized.append(" %s %s" % (r, o))
            else:
                qprop, qvalue = qualifiers[c.qualifier]
                ql, v = self.kg.text(qprop), self.value_text(qvalue)
                triples.append([s, r, o + " " + ql, v])
                serialized.append(" %s %s %s" % (o, ql, v))
                fact += [qprop, qvalue[0], self.value_id(qvalue)]
            facts.append(fact)
        return json.dumps({"subject": subject, "title": doc["title"], "doc": doc["id"], "sentence_index": index,
                           "triples": triples, "serialized_triples": s + ",".join(serialized), "facts": facts,
                           "sentence": sentence}, ensure_ascii=False, separators=(",", ":")) + "\n"

    def write_cooc(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write("# relation_i\trelation_j\tcount\n")
            for (a, b), count in sorted(self.cooc.items(), key=lambda kv: (int(kv[0][0][1:]), int(kv[0][1][1:]))):
                f.write("%s\t%s\t%d\n" % (a, b, count))


# ---------------------------------------------------------------- agreement


def alignment_keys(path):
    """Counter of (doc, sentence, fact) over a kg-align JSONL output, and {(doc, fact): [sentences]}."""
    keys, by_fact = collections.Counter(), collections.defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            for fact in r["facts"]:
                fact = json.dumps(fact, ensure_ascii=False)
                keys[(r["doc"], r["sentence"], fact)] += 1
                by_fact[(r["doc"], fact)].append(r["sentence"])
    return keys, by_fact


def compare(a_path, b_path):
    """Agreement of two outputs on (sentence, statement) alignments: a dict of counts. Sentences are
    compared by their text; a statement found by only one side counts as 'other_sentence' when the
    other side aligned it in the same document to a sentence overlapping this one (a different
    sentence boundary or pronoun replacement), else as 'missing'."""
    a, a_by = alignment_keys(a_path)
    b, b_by = alignment_keys(b_path)
    both = sum((a & b).values())
    result = {"a": sum(a.values()), "b": sum(b.values()), "both": both}

    def overlaps(x, y):
        return x in y or y in x or x[:40] == y[:40] or x[-40:] == y[-40:]

    for name, mine, other_by in (("only_a", a - b, b_by), ("only_b", b - a, a_by)):
        other = missing = 0
        for (doc, sentence, fact), count in mine.items():
            if any(overlaps(sentence, s) for s in other_by.get((doc, fact), ())):
                other += count
            else:
                missing += count
        result[name + "_other_sentence"] = other
        result[name + "_missing"] = missing
    union = result["a"] + result["b"] - both
    result["agreement_percent"] = round(100.0 * both / union, 2) if union else 100.0
    return result


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", help="the Wikidata JSON dump kg.h5 was built from")
    ap.add_argument("--redirects")
    ap.add_argument("--cooc")
    ap.add_argument("--stats")
    ap.add_argument("-o", "--output")
    ap.add_argument("--check", nargs=2, metavar=("A", "B"), help="compare two outputs and exit")
    ap.add_argument("docs", nargs="*")
    args = ap.parse_args()
    if args.check:
        json.dump(compare(*args.check), sys.stdout, indent=2)
        print()
        return
    if not args.dump or not args.output or not args.docs:
        ap.error("--dump, -o and documents are required")
    start = time.perf_counter()
    kg = KG(args.dump)
    aligner = Aligner(kg, read_redirects(args.redirects))
    loaded = time.perf_counter()
    with open(args.output, "w", encoding="utf-8") as out:
        for path in args.docs:
            with open_text(path) as f:
                for line in f:
                    if line.strip():
                        aligner.article(json.loads(line), out)
    if args.cooc:
        aligner.write_cooc(args.cooc)
    stats = dict(aligner.stats)
    stats["relation_pairs"] = len(aligner.cooc)
    stats["load_seconds"] = round(loaded - start, 3)
    stats["align_seconds"] = round(time.perf_counter() - loaded, 3)
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump(stats, f, indent=2, sort_keys=True)
    else:
        json.dump(stats, sys.stderr, indent=2, sort_keys=True)
        print(file=sys.stderr)


if __name__ == "__main__":
    main()
