#!/usr/bin/env python3
"""Writes data/enwiki-sample.xml: kglm's small Wikipedia-format XML dump for the demo.

The articles below were written for this project about entities of data/wikidata-sample.json,
in English Wikipedia's markup (infoboxes, references, tables, files, categories, interlanguage
links, lists, headings) with wikilinks between them. Run:
    python3 data/make-wiki-sample.py > data/enwiki-sample.xml
"""
import sys
from xml.sax.saxutils import escape, quoteattr

NAMESPACES = {-2: "Media", -1: "Special", 0: "", 1: "Talk", 2: "User", 4: "Wikipedia", 6: "File",
              10: "Template", 12: "Help", 14: "Category", 100: "Portal"}

ARTICLES = {}
REDIRECTS = {}


def article(title, text):
    ARTICLES[title] = text.strip("\n")


article("Albert Einstein", """{{Short description|German-born theoretical physicist (1879–1955)}}
{{Infobox scientist
| name = Albert Einstein
| image = Einstein 1921.jpg
| birth_date = {{birth date|1879|3|14|df=y}}
| birth_place = [[Ulm]], [[Kingdom of Württemberg]], [[German Empire]]
| death_date = {{death date and age|1955|4|18|1879|3|14|df=y}}
| alma_mater = [[ETH Zurich]]
| awards = [[Nobel Prize in Physics]] (1921)
}}
[[File:Einstein 1921.jpg|thumb|upright|Einstein in 1921, the year of his [[Nobel Prize in Physics|Nobel Prize]]]]
'''Albert Einstein''' (14 March 1879 – 18 April 1955) was a German-born [[theoretical physics|theoretical]] [[physicist]] who developed the [[theory of relativity]].<ref name="nobel">{{cite web |title=The Nobel Prize in Physics 1921 |url=https://www.nobelprize.org/prizes/physics/1921/summary/ |publisher=Nobel Foundation}}</ref> He was born in [[Ulm]], in [[Germany]], and studied at [[ETH Zurich]]. He received the [[Nobel Prize in Physics]] in 1921 "for his services to theoretical physics".<ref name="nobel" /> Einstein held [[Germany|German]], [[Switzerland|Swiss]] and [[United States|American]] citizenship at different times of his life.

== Life ==
=== Early life ===
Einstein grew up in [[Munich]], where his family moved in 1880. In 1896 he entered the [[ETH Zurich|Swiss Federal Polytechnic]] in [[Zurich]], graduating in 1900.<!-- dates checked against the biography -->

=== Berlin ===
In 1914 Einstein moved to [[Berlin]] and joined the [[Humboldt University of Berlin|University of Berlin]]. He became a citizen of the [[United States]] in 1940 and died in [[Princeton, New Jersey|Princeton]].

== Awards ==
{| class="wikitable"
! Year !! Award
|-
| 1921 || [[Nobel Prize in Physics]]
|-
| 1925 || [[Copley Medal]]
|}
* [[Nobel Prize in Physics]] (1921)
* [[Copley Medal]] (1925)

== See also ==
* [[List of German inventors and discoverers]]

== References ==
{{Reflist}}

[[Category:1879 births]]
[[Category:Nobel laureates in Physics]]
[[de:Albert Einstein]]
[[fr:Albert Einstein]]""")

article("Marie Curie", """{{Infobox scientist
| name = Marie Curie
| birth_name = Maria Salomea Skłodowska
| birth_place = [[Warsaw]], [[Congress Poland|Kingdom of Poland]]
| spouse = {{marriage|[[Pierre Curie]]|1895|1906|end=died}}
}}
'''Marie Salomea Skłodowska–Curie''' (7 November 1867 – 4 July 1934), known as '''Marie Curie''', was a Polish and naturalised-French [[physicist]] and [[chemist]] who conducted pioneering research on [[radioactivity]]. She was born in [[Warsaw]] and studied at the [[University of Paris]]. She was the first woman to win a [[Nobel Prize]], and the only person to win it in two scientific fields: the [[Nobel Prize in Physics]] in 1903, shared with her husband [[Pierre Curie]], and the [[Nobel Prize in Chemistry]] in 1911.<ref>{{cite book |last=Quinn |first=Susan |title=Marie Curie: A Life |year=1995}}</ref>

== Career ==
Curie worked in [[Paris]] for most of her life. With Pierre Curie she discovered the elements [[polonium]], named after [[Poland]], and [[radium]].&nbsp;She spoke [[French language|French]] and [[Polish language|Polish]].

[[Category:1867 births]]
[[pl:Maria Skłodowska-Curie]]""")

article("Pierre Curie", """'''Pierre Curie''' (15 May 1859 – 19 April 1906) was a French [[physicist]] and a pioneer in [[crystallography]], [[magnetism]] and [[radioactivity]]. He was born in [[Paris]] and died there in a street accident. In 1903 he shared the [[Nobel Prize in Physics]] with his wife, [[Marie Curie]], and with [[Henri Becquerel]].{{sfn|Quinn|1995|p=102}}

== Work ==
Before his work on radioactivity, Pierre Curie and his brother Jacques discovered [[piezoelectricity]] in 1880. He taught at the [[University of Paris]].""")

article("Alan Turing", """{{Use British English|date=March 2020}}
{{Infobox scientist
| name = Alan Turing
| birth_place = [[Maida Vale]], [[London]], England
| alma_mater = {{plainlist|
* [[King's College, Cambridge]]
* [[Princeton University]]
}}
}}
'''Alan Mathison Turing''' (23 June 1912 – 7 June 1954) was an English [[mathematician]], [[computer scientist]], [[logic]]ian and [[cryptanalysis|cryptanalyst]]. He was born in [[London]] and studied at the [[University of Cambridge]]. Turing is widely considered to be the father of [[theoretical computer science]].<ref>{{cite journal |last=Turing |first=A. M. |title=On Computable Numbers |journal=Proceedings of the London Mathematical Society |year=1936}}</ref>

== Career ==
During the [[Second World War]], Turing worked at [[Bletchley Park]], breaking German ciphers. After the war he worked at the [[National Physical Laboratory (United Kingdom)|National Physical Laboratory]] and at the [[Victoria University of Manchester|University of Manchester]]. The [[Turing Award]] of the [[Association for Computing Machinery]] is named after him.

[[Category:English computer scientists]]""")

article("Tim Berners-Lee", """'''Sir Timothy John Berners-Lee''' (born 8 June 1955), also known as '''TimBL''', is an English [[computer scientist]] best known as the inventor of the [[World Wide Web]]. He was born in [[London]] and studied at [[The Queen's College, Oxford]], part of the [[University of Oxford]]. He received the 2016 [[Turing Award]] "for inventing the World Wide Web".<ref>{{cite news |title=Sir Tim Berners-Lee wins Turing Award |work=BBC News |date=4 April 2017}}</ref>

== Career ==
Berners-Lee proposed the Web in 1989 while working at [[CERN]] near [[Geneva]]. He later joined the [[Massachusetts Institute of Technology]] (MIT), where he directs the [[World Wide Web Consortium]].""")

article("Haruki Murakami", """{{Infobox writer
| name = Haruki Murakami
| native_name = {{nobold|村上 春樹}}
}}
'''Haruki Murakami''' ({{lang-ja|村上 春樹}}, born 12 January 1949) is a Japanese [[writer]]. He was born in [[Kyoto]] and grew up in [[Kobe]]. His novels, among them ''[[Norwegian Wood (novel)|Norwegian Wood]]'' (1987) and ''[[Kafka on the Shore]]'' (2002), have been translated into more than 50 languages. He writes in [[Japanese language|Japanese]] and has translated works from [[English language|English]].

== Works ==
# ''[[Hear the Wind Sing]]'' (1979)
# ''[[Norwegian Wood (novel)|Norwegian Wood]]'' (1987)
# ''[[Kafka on the Shore]]'' (2002)""")

article("Voltaire", """'''François-Marie Arouet''' (21 November 1694 – 30 May 1778), known by his ''[[nom de plume]]'' '''Voltaire''', was a French [[Age of Enlightenment|Enlightenment]] [[writer]], historian and philosopher. He was born in [[Paris]] and died in Paris. He studied at the [[Lycée Louis-le-Grand|Collège Louis-le-Grand]] and wrote in [[French language|French]] and [[English language|English]].

Voltaire was a versatile writer, producing works in almost every literary form, including plays, poems, novels and essays. His best-known work is ''[[Candide]]'' (1759).""")

article("Paris", """{{Infobox French commune
| name = Paris
| population = 2,102,650
}}
'''Paris''' ({{IPA-fr|paʁi|-|Paris.ogg}}) is the [[capital city|capital]] and most populous city of [[France]]. With an estimated population of 2,102,650 residents in January 2023 in an area of more than {{convert|105|km2|sqmi}}, Paris is the fourth-most populous city in the [[European Union]].<ref>{{cite web |url=https://www.insee.fr/ |title=Populations légales |publisher=INSEE}}</ref> The city is on the [[Seine]] river, in the north of the country.

== History ==
The [[University of Paris]] was founded in the 12th century. [[Voltaire]], [[Pierre Curie]] and many other scholars were born in Paris.

== Geography ==
Paris shares no border with [[Germany]], but the country of France borders [[Belgium]], [[Germany]], [[Switzerland]], [[Italy]] and [[Spain]].""")

article("Berlin", """'''Berlin''' ({{IPA-de|bɛʁˈliːn|lang|De-Berlin.ogg}}) is the capital and largest city of [[Germany]], both by area and by population.<ref name="stat">{{cite web |title=Bevölkerung |publisher=Statistik Berlin-Brandenburg}}</ref> Its more than 3.85 million inhabitants make it the [[European Union]]'s most populous city. The [[Humboldt University of Berlin]] was founded there in 1810.

[[Albert Einstein]] lived in Berlin from 1914 to 1932.""")

article("France", """{{Infobox country
| conventional_long_name = French Republic
| capital = [[Paris]]
| official_languages = [[French language|French]]
}}
'''France''', officially the '''French Republic''', is a country in Western [[Europe]]. Its capital is [[Paris]] and its official language is [[French language|French]]. France is a founding member of the [[European Union]] and a member of the [[United Nations]].<ref>{{cite web |title=Member States |publisher=United Nations}}</ref> It shares borders with [[Belgium]], [[Germany]], [[Switzerland]], [[Italy]] and [[Spain]]. With {{formatnum:68042591}} inhabitants counted as 68,042,591 in the census and an area of {{convert|643801|km2}} 643,801&nbsp;km<sup>2</sup>, it is the largest country of the [[European Union]] by area.""")

article("Germany", """'''Germany''',{{efn|{{lang-de|Deutschland}}}} officially the '''Federal Republic of Germany''', is a country in [[Central Europe]]. Its capital is [[Berlin]], and its official language is [[German language|German]]. Germany is a member of the [[European Union]] and the [[United Nations]]. It borders [[France]], [[Belgium]], the [[Netherlands]], [[Austria]], [[Switzerland]] and [[Poland]]. Its 84,358,845 inhabitants live on 357,588 square kilometres.

== Cities ==
Besides Berlin, the largest cities are [[Hamburg]] and [[Munich]]. The city of [[Ulm]] lies on the [[Danube]].""")

article("Ulm", """'''Ulm''' ({{IPA-de|ʊlm}}) is a city in the German state of [[Baden-Württemberg]], on the [[Danube|River Danube]]. [[Einstein|Albert Einstein]] was born in Ulm in 1879. The city is known for [[Ulm Minster]], the church with the tallest steeple in the world.""")

article("ETH Zurich", """'''ETH Zurich''' ({{lang-de|Eidgenössische Technische Hochschule Zürich}}) is a public research university in [[Zurich]], [[Switzerland]]. It was founded in 1854. [[Albert Einstein]] studied there from 1896 to 1900.""")

article("University of Cambridge", """The '''University of Cambridge''' is a public [[research university]] in [[Cambridge]], [[United Kingdom|England]]. Founded in 1209, it is the world's third-oldest surviving university. [[Alan Turing]] studied at [[King's College, Cambridge|King's College]].

== Colleges ==
The university has 31 colleges, among them [[Trinity College, Cambridge|Trinity]] and [[King's College, Cambridge|King's]].""")

article("Google", """'''Google LLC''' ({{IPAc-en|ˈ|ɡ|uː|ɡ|əl}}) is an American [[multinational corporation|multinational]] technology company. It was founded on 4 September 1998 by [[Larry Page]] and [[Sergey Brin]] while they were students at [[Stanford University]]. Its headquarters are in [[Mountain View, California|Mountain View]], [[California]]. [[Sundar Pichai]] has been its chief executive since 2015.""")

article("Nobel Prize in Physics", """The '''Nobel Prize in Physics''' is a yearly award given by the [[Royal Swedish Academy of Sciences]]. It is one of the five [[Nobel Prize]]s established by the will of [[Alfred Nobel]] in 1895.

== Laureates ==
Laureates include [[Pierre Curie]] and [[Madame Curie|Marie Curie]] (1903), [[Einstein]] (1921), [[Niels Bohr]] (1922) and [[Hideki Yukawa]] (1949), the first Japanese laureate.""")

article("Tokyo", """'''Tokyo''' ({{lang-ja|東京}}), officially the '''Tokyo Metropolis''', is the capital of [[Japan]]. With over 14 million residents, it is the most populous city of Japan. The [[University of Tokyo]] was founded there in 1877.""")

article("Japan", """'''Japan''' ({{lang-ja|日本}}, ''Nippon'' or ''Nihon'') is an island country in [[East Asia]]. Its capital is [[Tokyo]] and its official language is [[Japanese language|Japanese]]. The writer [[Haruki Murakami]] and the physicist [[Hideki Yukawa]] were born in Japan.""")

REDIRECTS.update({
    "Einstein": "Albert Einstein",
    "Madame Curie": "Marie Curie",
    "Maria Skłodowska": "Marie Curie",
    "Alan Mathison Turing": "Alan Turing",
    "TimBL": "Tim Berners-Lee",
    "Deutschland": "Germany",
    "Federal Republic of Germany": "Germany",
    "French Republic": "France",
    "Nobel Physics": "Nobel Prize in Physics",
    "ETH Zürich": "ETH Zurich",
})

OTHER_PAGES = [(1, "Talk:Albert Einstein", "== Sources ==\nThe birth date is sourced. ~~~~"),
               (14, "Category:Physicists", "Physicists. [[Category:Scientists]]")]


def page(out, page_id, ns, title, text, redirect=None):
    out.write("  <page>\n")
    out.write(f"    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{page_id}</id>\n")
    if redirect:
        out.write(f"    <redirect title={quoteattr(redirect)} />\n")
    out.write(f"    <revision>\n      <id>{page_id * 10 + 1}</id>\n")
    out.write("      <timestamp>2026-11-01T00:00:00Z</timestamp>\n")
    out.write("      <contributor><username>kglm</username><id>1</id></contributor>\n")
    out.write('      <model>wikitext</model>\n      <format>text/x-wiki</format>\n')
    out.write(f'      <text xml:space="preserve">{escape(text)}</text>\n    </revision>\n  </page>\n')


def main():
    out = sys.stdout
    out.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n')
    out.write("  <siteinfo>\n    <sitename>Wikipedia</sitename>\n    <dbname>enwiki</dbname>\n")
    out.write("    <case>first-letter</case>\n    <namespaces>\n")
    for key, name in NAMESPACES.items():
        out.write(f'      <namespace key="{key}" case="first-letter">{escape(name)}</namespace>\n')
    out.write("    </namespaces>\n  </siteinfo>\n")
    page_id = 100
    for title, text in ARTICLES.items():
        page_id += 1
        page(out, page_id, 0, title, text)
    for title, target in REDIRECTS.items():
        page_id += 1
        page(out, page_id, 0, title, f"#REDIRECT [[{target}]]\n\n{{{{R from alternative name}}}}", target)
    for ns, title, text in OTHER_PAGES:
        page_id += 1
        page(out, page_id, ns, title, text)
    out.write("</mediawiki>\n")


if __name__ == "__main__":
    main()
