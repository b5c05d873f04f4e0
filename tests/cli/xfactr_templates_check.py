#!/usr/bin/env python3
"""An independent check of probe's template realisation in French, Spanish and Greek (stdlib only).

Usage: xfactr_templates_check.py TEMPLATES_DIR KG_DUMP.json.gz PREDICTIONS.jsonl

Each prediction's cloze sentence is rebuilt the way X-FACTR's prompt code builds it (scripts/prompt.py:
the template split into words, fill_x then fill_y, the entity's gender from P21 or else guessed from
the label's ending and its P31 classes' English labels) and compared with probe's. Written from
X-FACTR's rules, with the departures kglm documents (man 1 probe): a form/condition pair written
without '|' (fr P1923) and a stray ';' (fr P30) are read as meant; an article or preposition that the
template also writes just before it (fr P31 "est un [ARTIND;Y]", P159 "est en [PREPLOC;Y]") replaces
that word; the Russian/Greek rules are not needed here; an elided "l'" is written against its word;
a Greek article the table lacks (PREPDEF in the nominative) is left out. Greek slots are not inflected
(no tables in this run), as probe without --inflections."""
import json
import os
import re
import sys

import wikidata_dump

MASK = "<mask>"

FR_ARTICLES = {"PREPLOC;COUNTRY": "en", "PREPLOC;CITY": "à", "PREPDEF;MASC;SG": "du", "PREPDEF;FEM;SG": "de la",
               "PREPDEF;PL": "des", "PREPDEF;PROPN": "de", "ARTDEF;MASC;SG": "le", "ARTDEF;FEM;SG": "la",
               "ARTDEF;PL": "les", "ARTDEF;VOWEL": "l'", "PREPDEF-à;MASC;SG": "au", "PREPDEF-à;FEM;SG": "à la",
               "PREPDEF-à;PL": "aux", "PREPDEF-à;PROPN": "à", "ARTIND;MASC;SG": "un", "ARTIND;FEM;SG": "une",
               "ARTIND;PL": "des"}
FR_CLASS_WORDS = {"PREPLOC": "à au aux en dans", "PREPDEF": "de du des d'", "PREPDEF-à": "à au aux",
                  "ARTIND": "un une des", "ARTDEF": "le la les l'"}
ES_CLASS_WORDS = {"ART": "un una unos unas", "DEF": "el la los las"}

EL_DEF = {"NOM": (("ο", "η", "το"), ("οι", "οι", "τα")), "GEN": (("του", "της", "του"), ("των", "των", "των")),
          "ACC": (("τον", "την", "το"), ("τους", "τις", "τα"))}
EL_PREPDEF = {"GEN": (("στου", "στης", "στου"), ("στων", "στων", "στων")),
              "ACC": (("στον", "στην", "στο"), ("στους", "στις", "στα"))}
EL_INDEF = {"NOM": ("ένας", "μία", "ένα"), "GEN": ("ενός", "μίας", "ενός"), "ACC": ("έναν", "μία", "ένα")}
EL_PLURAL_REST = ("από τους", "από τις", "από τα")
GENDER_INDEX = {"MASC": 0, "FEM": 1, "NEUT": 2}


def fr_gender_by_ending(w):
    w = w.split(" ")[0]
    groups = [("FEM", "ouille aisse ousse aille eille ouche anche"),
              ("FEM", "asse esse isse ance anse ence once enne onne aine eine erne ande ende onde arde orde euse ouse "
                      "aise oise ache iche ehce oche uche iere eure atte otte oute orte ante ente inte onte alle elle "
                      "ille olle appe ampe ombe igue"),
              ("MASC", "aume isme ours euil ueil"),
              ("FEM", "aie oue eue ace ece ice une ine ade ase ese ise yse ose use ave eve ive ete ête"),
              ("MASC", "and ant ent int ond ont eau aud aut ais ait out oux age ege ème ome est eul all air erf ert "
                       "arc ars art our ord ors ort oir eur ail eil ing"),
              ("FEM", "te ée ie ue")]
    for gender, endings in groups:
        if any(w.endswith(e) for e in endings.split()):
            return gender
    return "MASC"


def es_gender_by_ending(w):
    w = w.split(" ", 1)[0]
    if w.endswith("o"):
        return "MASC"
    if w.endswith("a") or w[-4:] in ("ción", "sión") or w[-3:] in ("dad", "tad") or w[-5:] == "umbre":
        return "FEM"
    return "MASC"


def el_gender_by_ending(w):
    w = w.split(" ")[0]
    if w[-1:] in ("η", "ή", "α"):
        return "FEM"
    if w[-2:] in ("ος", "ης", "ής", "ας", "άς", "ός", "ήλ"):
        return "MASC"
    return "NEUT"


class Entities:
    def __init__(self, dump):
        self.gender, self.classes, english = {}, {}, {}
        p31 = {}
        for e in wikidata_dump.items(dump):
            qid = e["id"]
            labels = e.get("labels", {})
            if "en" in labels:
                english[qid] = labels["en"]["value"]
            claims = e.get("claims", {})
            for c in claims.get("P21", []):
                v = c.get("mainsnak", {}).get("datavalue", {}).get("value", {}).get("id")
                self.gender[qid] = {"Q6581097": "MASC", "Q6581072": "FEM"}.get(v, "NEUT")
            ids = [c["mainsnak"]["datavalue"]["value"]["id"] for c in claims.get("P31", [])
                   if c.get("mainsnak", {}).get("datavalue")]
            if ids:
                p31[qid] = ids
        # X-FACTR's instance string: the classes' labels; "in" tests on it.
        for qid, ids in p31.items():
            names = [english[c] for c in ids if c in english]
            if names:
                self.classes[qid] = ",".join(names)


def choice_forms(word):
    """The forms of "[a;X-Gender=MASC|b;X-Gender=FEM]" in order, with their conditions."""
    forms = []
    for field in re.split(r"[|;]", word[1:-1]):
        field = field.strip()
        if not field:
            continue
        if "=" in field:
            if forms:
                forms[-1][1].append(field)
        else:
            forms.append((field, []))
    return forms


def drop_template_word(words, i, class_words):
    if i > 0 and words[i - 1] in class_words.split():
        words[i - 1] = ""


class French:
    def __init__(self, ents):
        self.e = ents

    def features(self, uri, label):
        gender, country, city = self.e.gender.get(uri, "NEUT"), False, False
        if gender == "NEUT":
            gender = fr_gender_by_ending(label)
            inst = self.e.classes.get(uri)
            if inst is not None:
                if "state" in inst or "country" in inst:
                    country = True
                elif "business" in inst or "enterprise" in inst:
                    gender = "FEM"
                elif "city" in inst:
                    city = True
                elif "human" in inst:
                    gender = "MASC"
                elif "island" in inst or "musical group" in inst or "record label" in inst:
                    pass
                elif "language" in inst:
                    gender = "MASC"
                elif "sports team" in inst or "automobile manufacturer" in inst or "football club" in inst:
                    gender = "FEM"
        return gender, country, city

    def article(self, cls, gender, country, city, next_word):
        if cls == "ARTDEF":
            if not country:
                return ""
            if next_word[:1] in set("aoieuyàèùéâêîôû"):
                return FR_ARTICLES["ARTDEF;VOWEL"]
            return FR_ARTICLES[f"ARTDEF;{gender};SG"]
        if cls in ("PREPDEF", "PREPDEF-à"):
            return FR_ARTICLES[f"{cls};PROPN"] if not country else FR_ARTICLES[f"{cls};{gender};SG"]
        if cls == "ARTIND":
            return FR_ARTICLES[f"ARTIND;{gender};SG"]
        if cls == "PREPLOC":
            return FR_ARTICLES["PREPLOC;CITY" if city else "PREPLOC;COUNTRY"]
        raise KeyError(cls)

    def fill(self, words, who, uri, label, target):
        gender, country, city = self.features(uri, label)
        slot = "[" + who + "]"
        for i, w in enumerate(words):
            if w == slot:
                words[i] = target
        for i, w in enumerate(words):
            m = re.fullmatch(r"\[([A-Zà-]+);" + who + r"\]", w)
            if m:
                nxt = words[i + 1] if i + 1 < len(words) else ""
                art = self.article(m.group(1), gender, country, city, nxt if target == label else "")
                if art:
                    drop_template_word(words, i, FR_CLASS_WORDS[m.group(1)])
                words[i] = art
            elif w.startswith("[") and (who + "-Gender") in w:
                forms = choice_forms(w)
                words[i] = forms[0][0] if gender == "MASC" else forms[1][0]


class Spanish:
    def __init__(self, ents):
        self.e = ents

    def features(self, uri, label):
        gender, number = self.e.gender.get(uri, "NEUT"), "SG"
        if gender == "NEUT":
            gender = es_gender_by_ending(label)
            inst = self.e.classes.get(uri)
            if inst is not None:
                if "human" in inst:
                    gender = "MASC"
                if "state" in inst or "country" in inst:
                    gender = "FEM"
                elif "musical group" in inst:
                    gender, number = "MASC", "PL"
                elif "record label" in inst or "football club" in inst:
                    gender = "FEM"
        return gender, number

    def fill(self, words, who, uri, label, target):
        gender, number = self.features(uri, label)
        for i, w in enumerate(words):
            if w == "[" + who + "]":
                words[i] = target
            elif w == f"[ART;{who}-Gender]":
                drop_template_word(words, i, ES_CLASS_WORDS["ART"])
                words[i] = "una" if gender == "FEM" else "un"
            elif w == f"[DEF;{who}]":
                drop_template_word(words, i, ES_CLASS_WORDS["DEF"])
                words[i] = {"MASC": "el", "FEM": "la"}.get(gender, "un")
            elif w.startswith("[") and "|" in w and (who + "-Gender") in w:
                forms = [f for f, _ in choice_forms(w)]
                if number == "PL" and len(forms) == 3:
                    words[i] = forms[2]
                else:
                    words[i] = forms[1] if gender == "FEM" else forms[0]
            elif w.startswith("[") and "|" in w and (who + "-Number") in w:
                forms = [f for f, _ in choice_forms(w)]
                words[i] = forms[1] if number == "PL" else forms[0]


class Greek:
    def __init__(self, ents):
        self.e = ents

    def features(self, uri, label):
        gender, number = self.e.gender.get(uri, "NEUT"), "SG"
        if gender == "NEUT":
            gender = el_gender_by_ending(label)
        inst = self.e.classes.get(uri)
        if gender == "NEUT" and inst is not None:
            last = label[-1:]
            if "state" in inst or "country" in inst:
                gender = "NEUT" if last in ("ν", "ο", "ό") else "FEM"
            elif "business" in inst or "enterprise" in inst:
                gender = "FEM"
            elif "city" in inst:
                gender = "NEUT" if last in ("ι", "ο") else "FEM"
            elif "human" in inst:
                gender = "MASC"
            elif "island" in inst:
                gender = "FEM"
            elif "literary work" in inst:
                pass
            elif "musical group" in inst:
                gender, number = "MASC", "PL"
            elif "record label" in inst:
                gender = "FEM"
            elif "language" in inst:
                number = "PL"
            elif "sports team" in inst or "automobile manufacturer" in inst or "football club" in inst:
                gender = "FEM"
        if label[-2:] in ("ες", "ές"):
            gender, number = "FEM", "PL"
        return gender, number

    @staticmethod
    def article(table, gender, number, case):
        if case not in table:
            return ""
        forms = table[case]
        if table is EL_INDEF:
            word = forms[GENDER_INDEX[gender]]
            return word + " " + EL_PLURAL_REST[GENDER_INDEX[gender]] if number == "PL" else word
        return forms[1 if number == "PL" else 0][GENDER_INDEX[gender]]

    def fill(self, words, who, uri, label, target):
        gender, number = self.features(uri, label)
        case = "NOM"
        for i, w in enumerate(words):
            m = re.fullmatch(r"\[" + who + r"(?:\.(Nom|Gen|Acc))?\]", w)
            if m:
                case = (m.group(1) or "Nom").upper()
                words[i] = target
        for i, w in enumerate(words):
            if w == f"[DEF;{who}]":
                words[i] = self.article(EL_DEF, gender, number, case)
            elif w == f"[DEF.Gen;{who}]":
                words[i] = self.article(EL_DEF, gender, number, "GEN")
            elif w == f"[PREPDEF;{who}]":
                words[i] = self.article(EL_PREPDEF, gender, number, case)
            elif w == f"[INDEF;{who}]":
                words[i] = self.article(EL_INDEF, gender, number, case)
            elif w.startswith("[") and "|" in w and (who + "-Number") in w:
                forms = [f for f, _ in choice_forms(w)]
                words[i] = forms[1] if number == "PL" else forms[0]


def normalise(sentence):
    s = " ".join(sentence.replace("l' ", "l'").split())
    return s


def main():
    templates_dir, dump, predictions = sys.argv[1:4]
    rows = [json.loads(l) for l in open(predictions, encoding="utf-8")]
    langs = sorted({r["lang"] for r in rows} & {"fr", "es", "el"})
    ents = Entities(dump)
    templates = {}
    for lang in langs:
        for line in open(os.path.join(templates_dir, lang + ".jsonl"), encoding="utf-8"):
            t = json.loads(line)
            templates[(lang, t["relation"])] = t["template"]
    fillers = {"fr": French(ents), "es": Spanish(ents), "el": Greek(ents)}
    checked, per_lang = 0, {}
    for r in rows:
        lang = r["lang"]
        if r["method"] != "independent" or lang not in fillers:
            continue
        words = templates[(lang, r["relation"])].split(" ")
        f = fillers[lang]
        f.fill(words, "X", r["sub_uri"], r["sub_label"], r["sub_label"])
        f.fill(words, "Y", r["obj_uri"], r["obj_label"], " ".join([MASK] * r["num_mask"]))
        want = normalise(" ".join(words))
        got = normalise(r["sentence"])
        assert got == want, f'{lang} {r["relation"]} {r["sub_uri"]} {r["obj_uri"]}:\n  probe:  {got}\n  X-FACTR: {want}'
        checked += 1
        per_lang[lang] = per_lang.get(lang, 0) + 1
    assert set(per_lang) == {"fr", "es", "el"}, per_lang
    print(f"xfactr_templates_check: {checked} sentences agree with X-FACTR's rules ({per_lang})")


if __name__ == "__main__":
    main()
