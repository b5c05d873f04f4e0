#!/usr/bin/env python3
"""Writes data/wikidata-sample.json: kglm's small embedded Wikidata-format dump.

The facts below were written for this project (countries, cities, people, organisations, their
relations and labels in several scripts); ids of well-known entities follow Wikidata, the others
are real where known. Run: python3 data/make-sample.py > data/wikidata-sample.json
"""
import json
import sys

LANGS = ["en", "de", "fr", "es", "it", "nl", "vi", "ja", "zh", "ko", "ru", "ar"]

# id: (english, {lang: label}, [aliases en], description en)
P = {
    "P17": ("country", {"de": "Staat", "fr": "pays", "es": "país", "ja": "国", "zh": "国家", "ko": "국가", "ru": "страна", "vi": "quốc gia", "nl": "land", "it": "paese"}, ["sovereign state"]),
    "P19": ("place of birth", {"de": "Geburtsort", "fr": "lieu de naissance", "es": "lugar de nacimiento", "ja": "出生地", "zh": "出生地", "ko": "출생지", "ru": "место рождения", "vi": "nơi sinh", "nl": "geboorteplaats", "it": "luogo di nascita"}, ["birthplace", "born in"]),
    "P20": ("place of death", {"de": "Sterbeort", "fr": "lieu de mort", "es": "lugar de fallecimiento", "ja": "死没地", "zh": "逝世地点", "ru": "место смерти", "nl": "overlijdensplaats"}, ["died in"]),
    "P27": ("country of citizenship", {"de": "Staatsangehörigkeit", "fr": "pays de nationalité", "es": "país de nacionalidad", "ja": "国籍", "zh": "国籍", "ko": "국적", "ru": "гражданство", "vi": "quốc tịch", "nl": "nationaliteit"}, ["citizenship", "nationality"]),
    "P30": ("continent", {"de": "Kontinent", "fr": "continent", "es": "continente", "ja": "大陸", "zh": "大洲", "ko": "대륙", "ru": "континент", "vi": "lục địa", "nl": "continent"}, []),
    "P31": ("instance of", {"de": "ist ein(e)", "fr": "nature de l'élément", "es": "instancia de", "ja": "分類", "zh": "隶属于", "ru": "это частный случай понятия", "nl": "is een"}, ["is a"]),
    "P36": ("capital", {"de": "Hauptstadt", "fr": "capitale", "es": "capital", "ja": "首都", "zh": "首都", "ko": "수도", "ru": "столица", "vi": "thủ đô", "nl": "hoofdstad", "it": "capitale"}, ["capital city"]),
    "P1376": ("capital of", {"de": "Hauptstadt von", "fr": "capitale de", "es": "capital de", "ja": "首都", "zh": "首都", "ru": "столица для", "nl": "hoofdstad van"}, []),
    "P37": ("official language", {"de": "Amtssprache", "fr": "langue officielle", "es": "idioma oficial", "ja": "公用語", "zh": "官方语言", "ko": "공용어", "ru": "официальный язык", "nl": "officiële taal"}, []),
    "P47": ("shares border with", {"de": "grenzt an", "fr": "frontalier de", "es": "comparte frontera con", "ja": "隣接", "zh": "接壤", "ru": "граничит с", "nl": "grenst aan"}, ["borders"]),
    "P69": ("educated at", {"de": "besuchte Bildungseinrichtung", "fr": "scolarité", "es": "educado en", "ja": "出身校", "zh": "就读学校", "ko": "출신 학교", "ru": "место учёбы", "nl": "opleiding gevolgd aan"}, ["alma mater", "studied at"]),
    "P106": ("occupation", {"de": "Tätigkeit", "fr": "occupation", "es": "ocupación", "ja": "職業", "zh": "职业", "ko": "직업", "ru": "род занятий", "vi": "nghề nghiệp", "nl": "beroep"}, ["profession", "job"]),
    "P108": ("employer", {"de": "Arbeitgeber", "fr": "employeur", "es": "empleador", "ja": "雇用者", "zh": "雇主", "ru": "работодатель", "nl": "werkgever"}, ["worked at"]),
    "P131": ("located in the administrative territorial entity", {"de": "liegt in der Verwaltungseinheit", "fr": "localisation administrative", "es": "situado en la entidad territorial administrativa", "ja": "所在地", "zh": "所在行政领土实体", "ru": "административно-территориальная единица", "nl": "gelegen in bestuurlijke eenheid"}, ["located in"]),
    "P159": ("headquarters location", {"de": "Hauptsitz", "fr": "siège", "es": "sede", "ja": "本部所在地", "zh": "总部位置", "ru": "штаб-квартира", "nl": "hoofdkantoor"}, ["headquarters"]),
    "P463": ("member of", {"de": "Mitglied von", "fr": "membre de", "es": "miembro de", "ja": "所属", "zh": "成员", "ru": "член", "nl": "lid van"}, []),
    "P1412": ("languages spoken, written or signed", {"de": "gesprochene oder publizierte Sprachen", "fr": "langues parlées", "es": "lenguas habladas", "ja": "話せる言語", "zh": "使用语言", "ru": "языки", "nl": "taalbeheersing"}, ["speaks"]),
    "P26": ("spouse", {"de": "Ehepartner", "fr": "conjoint", "es": "cónyuge", "ja": "配偶者", "zh": "配偶", "ko": "배우자", "ru": "супруг", "nl": "echtgenoot"}, ["wife", "husband"]),
    "P166": ("award received", {"de": "Auszeichnung", "fr": "distinction reçue", "es": "premio recibido", "ja": "受賞", "zh": "获奖", "ru": "награды", "nl": "onderscheiding"}, ["award"]),
    "P569": ("date of birth", {"de": "Geburtsdatum", "fr": "date de naissance", "es": "fecha de nacimiento", "ja": "生年月日", "zh": "出生日期", "ru": "дата рождения", "nl": "geboortedatum"}, ["born"]),
    "P570": ("date of death", {"de": "Sterbedatum", "fr": "date de mort", "es": "fecha de fallecimiento", "ja": "死亡年月日", "zh": "逝世日期", "ru": "дата смерти", "nl": "overlijdensdatum"}, ["died"]),
    "P571": ("inception", {"de": "Gründung", "fr": "date de fondation", "es": "fecha de fundación", "ja": "設立", "zh": "成立或建立时间", "ru": "дата основания", "nl": "oprichting"}, ["founded"]),
    "P1082": ("population", {"de": "Einwohnerzahl", "fr": "population", "es": "población", "ja": "人口", "zh": "人口", "ko": "인구", "ru": "население", "nl": "inwonertal"}, []),
    "P2046": ("area", {"de": "Fläche", "fr": "superficie", "es": "área", "ja": "面積", "zh": "面积", "ru": "площадь", "nl": "oppervlakte"}, []),
    "P625": ("coordinate location", {"de": "geographische Koordinaten", "fr": "coordonnées géographiques", "es": "coordenadas", "ja": "位置座標", "zh": "坐标", "ru": "географические координаты", "nl": "geografische locatie"}, ["coordinates"]),
    "P856": ("official website", {"de": "offizielle Website", "fr": "site officiel", "es": "sitio web oficial", "ja": "公式ウェブサイト", "zh": "官方网站", "ru": "официальный сайт"}, ["website"]),
    "P214": ("VIAF ID", {"de": "VIAF-ID", "fr": "identifiant VIAF", "ja": "VIAF識別子"}, []),
    "P1448": ("official name", {"de": "offizieller Name", "fr": "nom officiel", "es": "nombre oficial", "ja": "正式名称", "zh": "正式名称", "ru": "официальное название"}, []),
    "P580": ("start time", {"de": "Startzeitpunkt", "fr": "date de début", "es": "fecha de inicio", "ja": "開始日", "zh": "开始时间"}, ["from"]),
    "P582": ("end time", {"de": "Endzeitpunkt", "fr": "date de fin", "es": "fecha de fin", "ja": "終了日", "zh": "结束时间"}, ["until"]),
}
DATATYPE = {"P569": "time", "P570": "time", "P571": "time", "P580": "time", "P582": "time", "P1082": "quantity",
            "P2046": "quantity", "P625": "globe-coordinate", "P856": "url", "P214": "external-id",
            "P1448": "monolingualtext"}

ITEMS = {}   # id -> dict(label, labels, aliases, desc, claims list)


def item(qid, en, labels=None, aliases=None, desc=None, enwiki=True):
    ITEMS[qid] = {"en": en, "labels": labels or {}, "aliases": aliases or [], "desc": desc, "claims": [],
                  "enwiki": enwiki}


def claim(s, p, o, rank="normal", qualifiers=None):
    ITEMS[s]["claims"].append((p, o, rank, qualifiers or []))


# Classes and continents
item("Q5", "human", {"de": "Mensch", "fr": "être humain", "es": "ser humano", "ja": "ヒト", "zh": "人类", "ko": "사람", "ru": "человек", "vi": "người", "nl": "mens", "it": "essere umano", "ar": "إنسان"})
item("Q6256", "country", {"de": "Staat", "fr": "pays", "es": "país", "ja": "国", "zh": "国家", "ko": "나라", "ru": "страна", "vi": "quốc gia", "nl": "land", "it": "paese", "ar": "دولة"})
item("Q515", "city", {"de": "Stadt", "fr": "ville", "es": "ciudad", "ja": "都市", "zh": "城市", "ko": "도시", "ru": "город", "vi": "thành phố", "nl": "stad", "it": "città", "ar": "مدينة"})
item("Q3918", "university", {"de": "Universität", "fr": "université", "es": "universidad", "ja": "大学", "zh": "大学", "ko": "대학교", "ru": "университет", "vi": "đại học", "nl": "universiteit", "it": "università", "ar": "جامعة"})
item("Q34749", "language", {"de": "Sprache", "fr": "langue", "es": "idioma", "ja": "言語", "zh": "语言", "ko": "언어", "ru": "язык", "nl": "taal", "it": "lingua"})
item("Q4830453", "business", {"de": "Unternehmen", "fr": "entreprise", "es": "empresa", "ja": "企業", "zh": "企业", "ko": "기업", "ru": "предприятие", "nl": "bedrijf"})
item("Q43229", "organization", {"de": "Organisation", "fr": "organisation", "es": "organización", "ja": "組織", "zh": "组织", "ru": "организация", "nl": "organisatie"})
item("Q618779", "award", {"de": "Auszeichnung", "fr": "distinction", "es": "premio", "ja": "賞", "zh": "奖项", "ru": "награда", "nl": "prijs"})
for qid, en, tr in [
    ("Q46", "Europe", {"de": "Europa", "fr": "Europe", "es": "Europa", "ja": "ヨーロッパ", "zh": "欧洲", "ko": "유럽", "ru": "Европа", "vi": "châu Âu", "nl": "Europa", "it": "Europa", "ar": "أوروبا"}),
    ("Q48", "Asia", {"de": "Asien", "fr": "Asie", "es": "Asia", "ja": "アジア", "zh": "亚洲", "ko": "아시아", "ru": "Азия", "vi": "châu Á", "nl": "Azië", "it": "Asia", "ar": "آسيا"}),
    ("Q49", "North America", {"de": "Nordamerika", "fr": "Amérique du Nord", "es": "América del Norte", "ja": "北アメリカ", "zh": "北美洲", "ko": "북아메리카", "ru": "Северная Америка", "vi": "Bắc Mỹ", "nl": "Noord-Amerika"}),
    ("Q18", "South America", {"de": "Südamerika", "fr": "Amérique du Sud", "es": "América del Sur", "ja": "南アメリカ", "zh": "南美洲", "ru": "Южная Америка", "nl": "Zuid-Amerika"}),
    ("Q15", "Africa", {"de": "Afrika", "fr": "Afrique", "es": "África", "ja": "アフリカ", "zh": "非洲", "ko": "아프리카", "ru": "Африка", "vi": "châu Phi", "nl": "Afrika", "ar": "أفريقيا"}),
]:
    item(qid, en, tr)

# Languages
LANG_ITEMS = {}
for qid, en, tr in [
    ("Q1860", "English", {"de": "Englisch", "fr": "anglais", "es": "inglés", "ja": "英語", "zh": "英语", "ko": "영어", "ru": "английский язык", "vi": "tiếng Anh", "nl": "Engels"}),
    ("Q150", "French", {"de": "Französisch", "fr": "français", "es": "francés", "ja": "フランス語", "zh": "法语", "ko": "프랑스어", "ru": "французский язык", "vi": "tiếng Pháp", "nl": "Frans"}),
    ("Q188", "German", {"de": "Deutsch", "fr": "allemand", "es": "alemán", "ja": "ドイツ語", "zh": "德语", "ko": "독일어", "ru": "немецкий язык", "vi": "tiếng Đức", "nl": "Duits"}),
    ("Q1321", "Spanish", {"de": "Spanisch", "fr": "espagnol", "es": "español", "ja": "スペイン語", "zh": "西班牙语", "ko": "스페인어", "ru": "испанский язык", "nl": "Spaans"}),
    ("Q652", "Italian", {"de": "Italienisch", "fr": "italien", "es": "italiano", "ja": "イタリア語", "zh": "意大利语", "ru": "итальянский язык", "nl": "Italiaans"}),
    ("Q5287", "Japanese", {"de": "Japanisch", "fr": "japonais", "es": "japonés", "ja": "日本語", "zh": "日语", "ko": "일본어", "ru": "японский язык", "nl": "Japans"}),
    ("Q7850", "Chinese", {"de": "Chinesisch", "fr": "chinois", "es": "chino", "ja": "中国語", "zh": "汉语", "ko": "중국어", "ru": "китайский язык", "nl": "Chinees"}),
    ("Q9176", "Korean", {"de": "Koreanisch", "fr": "coréen", "es": "coreano", "ja": "朝鮮語", "zh": "朝鲜语", "ko": "한국어", "ru": "корейский язык"}),
    ("Q7737", "Russian", {"de": "Russisch", "fr": "russe", "es": "ruso", "ja": "ロシア語", "zh": "俄语", "ko": "러시아어", "ru": "русский язык", "nl": "Russisch"}),
    ("Q7979", "Dutch", {"de": "Niederländisch", "fr": "néerlandais", "es": "neerlandés", "ja": "オランダ語", "zh": "荷兰语", "ru": "нидерландский язык", "nl": "Nederlands"}),
    ("Q9199", "Vietnamese", {"de": "Vietnamesisch", "fr": "vietnamien", "es": "vietnamita", "ja": "ベトナム語", "zh": "越南语", "ru": "вьетнамский язык", "vi": "tiếng Việt"}),
    ("Q5146", "Portuguese", {"de": "Portugiesisch", "fr": "portugais", "es": "portugués", "ja": "ポルトガル語", "zh": "葡萄牙语", "ru": "португальский язык"}),
    ("Q13955", "Arabic", {"de": "Arabisch", "fr": "arabe", "es": "árabe", "ja": "アラビア語", "zh": "阿拉伯语", "ru": "арабский язык", "ar": "العربية"}),
]:
    item(qid, en, tr)
    claim(qid, "P31", "Q34749")

# Countries: id, en, translations, continent, capital (id, en, translations), language, population, area km2
COUNTRIES = [
    ("Q142", "France", {"de": "Frankreich", "fr": "France", "es": "Francia", "ja": "フランス", "zh": "法国", "ko": "프랑스", "ru": "Франция", "vi": "Pháp", "nl": "Frankrijk", "it": "Francia", "ar": "فرنسا"}, "Q46", ("Q90", "Paris", {"ja": "パリ", "zh": "巴黎", "ko": "파리", "ru": "Париж", "ar": "باريس", "it": "Parigi", "es": "París"}), "Q150", "68042591", "643801"),
    ("Q183", "Germany", {"de": "Deutschland", "fr": "Allemagne", "es": "Alemania", "ja": "ドイツ", "zh": "德国", "ko": "독일", "ru": "Германия", "vi": "Đức", "nl": "Duitsland", "it": "Germania", "ar": "ألمانيا"}, "Q46", ("Q64", "Berlin", {"ja": "ベルリン", "zh": "柏林", "ko": "베를린", "ru": "Берлин", "ar": "برلين", "it": "Berlino", "es": "Berlín", "fr": "Berlin"}), "Q188", "84358845", "357588"),
    ("Q29", "Spain", {"de": "Spanien", "fr": "Espagne", "es": "España", "ja": "スペイン", "zh": "西班牙", "ko": "스페인", "ru": "Испания", "vi": "Tây Ban Nha", "nl": "Spanje", "it": "Spagna"}, "Q46", ("Q2807", "Madrid", {"ja": "マドリード", "zh": "马德里", "ko": "마드리드", "ru": "Мадрид"}), "Q1321", "48797875", "505990"),
    ("Q38", "Italy", {"de": "Italien", "fr": "Italie", "es": "Italia", "ja": "イタリア", "zh": "意大利", "ko": "이탈리아", "ru": "Италия", "vi": "Ý", "nl": "Italië", "it": "Italia"}, "Q46", ("Q220", "Rome", {"de": "Rom", "fr": "Rome", "es": "Roma", "it": "Roma", "ja": "ローマ", "zh": "罗马", "ko": "로마", "ru": "Рим", "nl": "Rome"}), "Q652", "58850717", "301340"),
    ("Q55", "Netherlands", {"de": "Niederlande", "fr": "Pays-Bas", "es": "Países Bajos", "ja": "オランダ", "zh": "荷兰", "ko": "네덜란드", "ru": "Нидерланды", "vi": "Hà Lan", "nl": "Nederland", "it": "Paesi Bassi"}, "Q46", ("Q727", "Amsterdam", {"ja": "アムステルダム", "zh": "阿姆斯特丹", "ko": "암스테르담", "ru": "Амстердам"}), "Q7979", "17942942", "41850"),
    ("Q145", "United Kingdom", {"de": "Vereinigtes Königreich", "fr": "Royaume-Uni", "es": "Reino Unido", "ja": "イギリス", "zh": "英国", "ko": "영국", "ru": "Великобритания", "vi": "Vương quốc Liên hiệp Anh và Bắc Ireland", "nl": "Verenigd Koninkrijk", "it": "Regno Unito"}, "Q46", ("Q84", "London", {"de": "London", "fr": "Londres", "es": "Londres", "it": "Londra", "ja": "ロンドン", "zh": "伦敦", "ko": "런던", "ru": "Лондон", "nl": "Londen"}), "Q1860", "67026292", "242495"),
    ("Q159", "Russia", {"de": "Russland", "fr": "Russie", "es": "Rusia", "ja": "ロシア", "zh": "俄罗斯", "ko": "러시아", "ru": "Россия", "vi": "Nga", "nl": "Rusland", "it": "Russia"}, "Q46", ("Q649", "Moscow", {"de": "Moskau", "fr": "Moscou", "es": "Moscú", "it": "Mosca", "ja": "モスクワ", "zh": "莫斯科", "ko": "모스크바", "ru": "Москва", "nl": "Moskou"}), "Q7737", "146171015", "17125191"),
    ("Q17", "Japan", {"de": "Japan", "fr": "Japon", "es": "Japón", "ja": "日本", "zh": "日本", "ko": "일본", "ru": "Япония", "vi": "Nhật Bản", "nl": "Japan", "it": "Giappone"}, "Q48", ("Q1490", "Tokyo", {"de": "Tokio", "fr": "Tokyo", "es": "Tokio", "ja": "東京都", "zh": "东京都", "ko": "도쿄도", "ru": "Токио", "vi": "Tokyo"}), "Q5287", "125681593", "377975"),
    ("Q148", "China", {"de": "Volksrepublik China", "fr": "Chine", "es": "China", "ja": "中華人民共和国", "zh": "中华人民共和国", "ko": "중화인민공화국", "ru": "Китайская Народная Республика", "vi": "Trung Quốc", "nl": "China", "it": "Cina"}, "Q48", ("Q956", "Beijing", {"de": "Peking", "fr": "Pékin", "es": "Pekín", "it": "Pechino", "ja": "北京市", "zh": "北京市", "ko": "베이징시", "ru": "Пекин", "vi": "Bắc Kinh", "nl": "Peking"}), "Q7850", "1411778724", "9596961"),
    ("Q884", "South Korea", {"de": "Südkorea", "fr": "Corée du Sud", "es": "Corea del Sur", "ja": "大韓民国", "zh": "大韩民国", "ko": "대한민국", "ru": "Республика Корея", "vi": "Hàn Quốc", "nl": "Zuid-Korea", "it": "Corea del Sud"}, "Q48", ("Q8684", "Seoul", {"de": "Seoul", "fr": "Séoul", "es": "Seúl", "ja": "ソウル特別市", "zh": "首尔特别市", "ko": "서울특별시", "ru": "Сеул", "vi": "Seoul"}), "Q9176", "51744876", "100210"),
    ("Q881", "Vietnam", {"de": "Vietnam", "fr": "Viêt Nam", "es": "Vietnam", "ja": "ベトナム", "zh": "越南", "ko": "베트남", "ru": "Вьетнам", "vi": "Việt Nam", "nl": "Vietnam", "it": "Vietnam"}, "Q48", ("Q1858", "Hanoi", {"fr": "Hanoï", "ja": "ハノイ", "zh": "河内市", "ko": "하노이", "ru": "Ханой", "vi": "Hà Nội"}), "Q9199", "98506193", "331212"),
    ("Q30", "United States of America", {"de": "Vereinigte Staaten", "fr": "États-Unis", "es": "Estados Unidos", "ja": "アメリカ合衆国", "zh": "美国", "ko": "미국", "ru": "Соединённые Штаты Америки", "vi": "Hoa Kỳ", "nl": "Verenigde Staten", "it": "Stati Uniti d'America"}, "Q49", ("Q61", "Washington, D.C.", {"ja": "ワシントンD.C.", "zh": "华盛顿哥伦比亚特区", "ko": "워싱턴 D.C.", "ru": "Вашингтон"}), "Q1860", "331449281", "9833520"),
    ("Q155", "Brazil", {"de": "Brasilien", "fr": "Brésil", "es": "Brasil", "ja": "ブラジル", "zh": "巴西", "ko": "브라질", "ru": "Бразилия", "vi": "Brasil", "nl": "Brazilië", "it": "Brasile"}, "Q18", ("Q2844", "Brasília", {"ja": "ブラジリア", "zh": "巴西利亚", "ru": "Бразилиа"}), "Q5146", "203062512", "8515767"),
    ("Q79", "Egypt", {"de": "Ägypten", "fr": "Égypte", "es": "Egipto", "ja": "エジプト", "zh": "埃及", "ko": "이집트", "ru": "Египет", "vi": "Ai Cập", "nl": "Egypte", "ar": "مصر"}, "Q15", ("Q85", "Cairo", {"de": "Kairo", "fr": "Le Caire", "es": "El Cairo", "ja": "カイロ", "zh": "开罗", "ru": "Каир", "ar": "القاهرة"}), "Q13955", "104258327", "1010408"),
]
for qid, en, tr, cont, (cap, cap_en, cap_tr), lang, pop, area in COUNTRIES:
    item(qid, en, tr, desc=f"country in {ITEMS[cont]['en']}")
    item(cap, cap_en, cap_tr, desc=f"capital of {en}")
    claim(qid, "P31", "Q6256")
    claim(qid, "P30", cont)
    claim(qid, "P36", cap)
    claim(qid, "P37", lang)
    claim(qid, "P1082", ("quantity", pop, None))
    claim(qid, "P2046", ("quantity", area, "Q712226"))
    claim(cap, "P31", "Q515")
    claim(cap, "P17", qid)
    claim(cap, "P1376", qid)
    claim(cap, "P30", cont)
item("Q712226", "square kilometre", {"de": "Quadratkilometer", "fr": "kilomètre carré", "es": "kilómetro cuadrado", "ja": "平方キロメートル", "zh": "平方千米", "ru": "квадратный километр"}, ["km²", "km2"])
ITEMS["Q145"]["aliases"] = ["UK", "Britain", "Great Britain"]
ITEMS["Q30"]["aliases"] = ["USA", "US", "America", "United States"]
ITEMS["Q148"]["aliases"] = ["People's Republic of China", "PRC"]
ITEMS["Q884"]["aliases"] = ["Republic of Korea", "Korea"]
ITEMS["Q1490"]["aliases"] = ["Tokyo Metropolis"]
claim("Q142", "P1448", ("mono", "République française", "fr"))
claim("Q183", "P1448", ("mono", "Bundesrepublik Deutschland", "de"))
claim("Q90", "P625", ("coord", 48.856667, 2.352222))
claim("Q64", "P625", ("coord", 52.52, 13.405))
claim("Q1490", "P625", ("coord", 35.689722, 139.692222))
for a, b in [("Q142", "Q183"), ("Q142", "Q29"), ("Q142", "Q38"), ("Q183", "Q55"), ("Q148", "Q159"), ("Q148", "Q881")]:
    claim(a, "P47", b)
    claim(b, "P47", a)

# More cities: id, en, translations, country
CITIES = [
    ("Q1726", "Munich", {"de": "München", "fr": "Munich", "es": "Múnich", "it": "Monaco di Baviera", "ja": "ミュンヘン", "zh": "慕尼黑", "ru": "Мюнхен"}, "Q183"),
    ("Q1055", "Hamburg", {"ja": "ハンブルク", "zh": "汉堡", "ru": "Гамбург"}, "Q183"),
    ("Q3820", "Ulm", {"ja": "ウルム", "zh": "乌尔姆", "ru": "Ульм"}, "Q183"),
    ("Q456", "Lyon", {"ja": "リヨン", "zh": "里昂", "ru": "Лион"}, "Q142"),
    ("Q270", "Warsaw", {"de": "Warschau", "fr": "Varsovie", "es": "Varsovia", "ja": "ワルシャワ", "zh": "华沙", "ru": "Варшава", "nl": "Warschau"}, None),
    ("Q490", "Milan", {"de": "Mailand", "fr": "Milan", "es": "Milán", "it": "Milano", "ja": "ミラノ", "zh": "米兰", "ru": "Милан"}, "Q38"),
    ("Q2044", "Florence", {"de": "Florenz", "fr": "Florence", "es": "Florencia", "it": "Firenze", "ja": "フィレンツェ", "zh": "佛罗伦萨", "ru": "Флоренция"}, "Q38"),
    ("Q1492", "Barcelona", {"ja": "バルセロナ", "zh": "巴塞罗那", "ru": "Барселона"}, "Q29"),
    ("Q350", "Cambridge", {"ja": "ケンブリッジ", "zh": "剑桥", "ru": "Кембридж"}, "Q145"),
    ("Q34217", "Oxford", {"ja": "オックスフォード", "zh": "牛津", "ru": "Оксфорд"}, "Q145"),
    ("Q60", "New York City", {"de": "New York City", "fr": "New York", "es": "Nueva York", "ja": "ニューヨーク", "zh": "纽约", "ko": "뉴욕", "ru": "Нью-Йорк"}, "Q30"),
    ("Q49111", "Cambridge (Massachusetts)", {"ja": "ケンブリッジ (マサチューセッツ州)", "zh": "剑桥 (马萨诸塞州)"}, "Q30"),
    ("Q35525", "Osaka", {"ja": "大阪市", "zh": "大阪市", "ko": "오사카시", "ru": "Осака"}, "Q17"),
    ("Q8646", "Hong Kong", {"ja": "香港", "zh": "香港", "ko": "홍콩", "ru": "Гонконг"}, "Q148"),
    ("Q8686", "Shanghai", {"ja": "上海市", "zh": "上海市", "ko": "상하이시", "ru": "Шанхай"}, "Q148"),
    ("Q16739", "Busan", {"ja": "釜山広域市", "zh": "釜山广域市", "ko": "부산광역시", "ru": "Пусан"}, "Q884"),
    ("Q1854", "Ho Chi Minh City", {"fr": "Hô Chi Minh-Ville", "ja": "ホーチミン市", "zh": "胡志明市", "vi": "Thành phố Hồ Chí Minh"}, "Q881"),
    ("Q656", "Saint Petersburg", {"de": "Sankt Petersburg", "fr": "Saint-Pétersbourg", "es": "San Petersburgo", "ja": "サンクトペテルブルク", "zh": "圣彼得堡", "ru": "Санкт-Петербург"}, "Q159"),
    ("Q9920", "Delft", {"ja": "デルフト", "ru": "Делфт"}, "Q55"),
    ("Q1867", "Vienna", {"de": "Wien", "fr": "Vienne", "es": "Viena", "it": "Vienna", "ja": "ウィーン", "zh": "维也纳", "ru": "Вена", "nl": "Wenen"}, None),
]
item("Q36", "Poland", {"de": "Polen", "fr": "Pologne", "es": "Polonia", "ja": "ポーランド", "zh": "波兰", "ko": "폴란드", "ru": "Польша", "nl": "Polen", "it": "Polonia"})
item("Q40", "Austria", {"de": "Österreich", "fr": "Autriche", "es": "Austria", "ja": "オーストリア", "zh": "奥地利", "ko": "오스트리아", "ru": "Австрия", "nl": "Oostenrijk", "it": "Austria"})
for c in ("Q36", "Q40"):
    claim(c, "P31", "Q6256")
    claim(c, "P30", "Q46")
for qid, en, tr, country in CITIES:
    country = country or {"Q270": "Q36", "Q1867": "Q40"}[qid]
    item(qid, en, tr, desc=f"city in {ITEMS[country]['en']}")
    claim(qid, "P31", "Q515")
    claim(qid, "P17", country)
claim("Q36", "P36", "Q270")
claim("Q40", "P36", "Q1867")
claim("Q183", "P47", "Q40")
claim("Q40", "P47", "Q183")
claim("Q183", "P47", "Q36")
claim("Q36", "P47", "Q183")

# Universities and organisations: id, en, translations, city, class, inception
ORGS = [
    ("Q35794", "University of Cambridge", {"de": "University of Cambridge", "fr": "université de Cambridge", "ja": "ケンブリッジ大学", "zh": "剑桥大学", "ru": "Кембриджский университет"}, "Q350", "Q3918", "+1209-00-00T00:00:00Z", 9),
    ("Q34433", "University of Oxford", {"fr": "université d'Oxford", "ja": "オックスフォード大学", "zh": "牛津大学", "ru": "Оксфордский университет"}, "Q34217", "Q3918", "+1096-00-00T00:00:00Z", 9),
    ("Q209842", "University of Paris", {"fr": "université de Paris", "de": "Universität von Paris", "ja": "パリ大学", "zh": "巴黎大学"}, "Q90", "Q3918", "+1150-00-00T00:00:00Z", 9),
    ("Q11942", "ETH Zurich", {"de": "ETH Zürich", "fr": "École polytechnique fédérale de Zurich", "ja": "チューリッヒ工科大学", "zh": "苏黎世联邦理工学院"}, "Q72", "Q3918", "+1855-00-00T00:00:00Z", 9),
    ("Q152087", "Humboldt University of Berlin", {"de": "Humboldt-Universität zu Berlin", "ja": "ベルリン・フンボルト大学", "zh": "柏林洪堡大学"}, "Q64", "Q3918", "+1810-00-00T00:00:00Z", 9),
    ("Q7842", "University of Tokyo", {"ja": "東京大学", "zh": "东京大学", "ko": "도쿄 대학", "de": "Universität Tokio"}, "Q1490", "Q3918", "+1877-04-12T00:00:00Z", 11),
    ("Q16952", "Peking University", {"ja": "北京大学", "zh": "北京大学", "ko": "베이징 대학", "de": "Peking-Universität"}, "Q956", "Q3918", "+1898-00-00T00:00:00Z", 9),
    ("Q49108", "Massachusetts Institute of Technology", {"ja": "マサチューセッツ工科大学", "zh": "麻省理工学院", "de": "Massachusetts Institute of Technology"}, "Q49111", "Q3918", "+1861-04-10T00:00:00Z", 11),
    ("Q190080", "Leiden University", {"nl": "Universiteit Leiden", "de": "Universität Leiden", "ja": "ライデン大学"}, "Q43631", "Q3918", "+1575-02-08T00:00:00Z", 11),
    ("Q13371", "Harvard University", {"ja": "ハーバード大学", "zh": "哈佛大学", "ko": "하버드 대학교"}, "Q49111", "Q3918", "+1636-00-00T00:00:00Z", 9),
    ("Q95", "Google", {"ja": "Google", "zh": "谷歌", "ko": "구글", "ru": "Google"}, "Q486860", "Q4830453", "+1998-09-04T00:00:00Z", 11),
    ("Q312", "Apple", {"ja": "Apple", "zh": "苹果公司", "ko": "애플", "ru": "Apple"}, "Q47265", "Q4830453", "+1976-04-01T00:00:00Z", 11),
    ("Q20800404", "Samsung Electronics", {"ja": "サムスン電子", "zh": "三星电子", "ko": "삼성전자"}, "Q8684", "Q4830453", "+1969-01-13T00:00:00Z", 11),
    ("Q53268", "Toyota", {"ja": "トヨタ自動車", "zh": "丰田汽车", "ko": "도요타"}, "Q1490", "Q4830453", "+1937-08-28T00:00:00Z", 11),
    ("Q1065", "United Nations", {"de": "Vereinte Nationen", "fr": "Organisation des Nations unies", "es": "Organización de las Naciones Unidas", "ja": "国際連合", "zh": "联合国", "ko": "국제 연합", "ru": "Организация Объединённых Наций"}, "Q60", "Q43229", "+1945-10-24T00:00:00Z", 11),
    ("Q458", "European Union", {"de": "Europäische Union", "fr": "Union européenne", "es": "Unión Europea", "ja": "欧州連合", "zh": "欧洲联盟", "ru": "Европейский союз", "nl": "Europese Unie"}, "Q239", "Q43229", "+1993-11-01T00:00:00Z", 11),
]
for qid, en, tr, country in [("Q72", "Zurich", {"de": "Zürich", "fr": "Zurich", "ja": "チューリッヒ"}, "Q39"),
                             ("Q43631", "Leiden", {"ja": "ライデン"}, "Q55"),
                             ("Q486860", "Mountain View", {"ja": "マウンテンビュー"}, "Q30"),
                             ("Q47265", "Cupertino", {"ja": "クパチーノ"}, "Q30"),
                             ("Q239", "Brussels", {"de": "Brüssel", "fr": "Bruxelles", "nl": "Brussel", "ja": "ブリュッセル", "zh": "布鲁塞尔"}, "Q31")]:
    item(qid, en, tr)
    claim(qid, "P31", "Q515")
    claim(qid, "P17", country)
item("Q39", "Switzerland", {"de": "Schweiz", "fr": "Suisse", "es": "Suiza", "ja": "スイス", "zh": "瑞士", "ru": "Швейцария", "nl": "Zwitserland"})
item("Q31", "Belgium", {"de": "Belgien", "fr": "Belgique", "es": "Bélgica", "ja": "ベルギー", "zh": "比利时", "ru": "Бельгия", "nl": "België"})
for c, cap in (("Q39", None), ("Q31", "Q239")):
    claim(c, "P31", "Q6256")
    claim(c, "P30", "Q46")
    if cap:
        claim(c, "P36", cap)
for qid, en, tr, city, cls, inception, prec in ORGS:
    item(qid, en, tr)
    claim(qid, "P31", cls)
    claim(qid, "P159" if cls != "Q3918" else "P131", city)
    claim(qid, "P17", next(c[1] for c in ITEMS[city]["claims"] if c[0] in ("P17", "P1376")))
    claim(qid, "P571", ("time", inception, prec))
claim("Q95", "P856", ("string", "https://about.google/"))
for m in ("Q142", "Q183", "Q29", "Q38", "Q55", "Q40", "Q36", "Q31"):
    claim(m, "P463", "Q458")
for m in ("Q142", "Q183", "Q29", "Q38", "Q55", "Q145", "Q159", "Q17", "Q148", "Q884", "Q881", "Q30", "Q155", "Q79", "Q36", "Q40", "Q39", "Q31"):
    claim(m, "P463", "Q1065")

# Occupations and awards
for qid, en, tr in [
    ("Q169470", "physicist", {"de": "Physiker", "fr": "physicien", "es": "físico", "ja": "物理学者", "zh": "物理学家", "ko": "물리학자", "ru": "физик"}),
    ("Q593644", "chemist", {"de": "Chemiker", "fr": "chimiste", "es": "químico", "ja": "化学者", "zh": "化学家", "ru": "химик"}),
    ("Q170790", "mathematician", {"de": "Mathematiker", "fr": "mathématicien", "es": "matemático", "ja": "数学者", "zh": "数学家", "ko": "수학자", "ru": "математик"}),
    ("Q36180", "writer", {"de": "Schriftsteller", "fr": "écrivain", "es": "escritor", "ja": "著作家", "zh": "作家", "ko": "작가", "ru": "писатель"}),
    ("Q1028181", "painter", {"de": "Maler", "fr": "artiste peintre", "es": "pintor", "ja": "画家", "zh": "画家", "ru": "художник"}),
    ("Q36834", "composer", {"de": "Komponist", "fr": "compositeur", "es": "compositor", "ja": "作曲家", "zh": "作曲家", "ru": "композитор"}),
    ("Q82594", "computer scientist", {"de": "Informatiker", "fr": "informaticien", "es": "informático", "ja": "計算機科学者", "zh": "计算机科学家", "ru": "специалист в области информатики"}),
    ("Q82955", "politician", {"de": "Politiker", "fr": "personnalité politique", "es": "político", "ja": "政治家", "zh": "政治人物", "ko": "정치인", "ru": "политик"}),
    ("Q131524", "entrepreneur", {"de": "Unternehmer", "fr": "entrepreneur", "es": "emprendedor", "ja": "起業家", "zh": "企业家", "ru": "предприниматель"}),
    ("Q38126", "Nobel Prize in Physics", {"de": "Nobelpreis für Physik", "fr": "prix Nobel de physique", "es": "Premio Nobel de Física", "ja": "ノーベル物理学賞", "zh": "诺贝尔物理学奖", "ru": "Нобелевская премия по физике"}),
    ("Q44585", "Nobel Prize in Chemistry", {"de": "Nobelpreis für Chemie", "fr": "prix Nobel de chimie", "ja": "ノーベル化学賞", "zh": "诺贝尔化学奖", "ru": "Нобелевская премия по химии"}),
    ("Q37922", "Nobel Prize in Literature", {"de": "Nobelpreis für Literatur", "fr": "prix Nobel de littérature", "ja": "ノーベル文学賞", "zh": "诺贝尔文学奖", "ru": "Нобелевская премия по литературе"}),
    ("Q185667", "Turing Award", {"de": "Turing Award", "fr": "prix Turing", "ja": "チューリング賞", "zh": "图灵奖", "ru": "Премия Тьюринга"}),
]:
    item(qid, en, tr)
    if "Prize" in en or "Award" in en:
        claim(qid, "P31", "Q618779")

# People: id, en, translations, aliases, born (date, place), died (date, place) or None, citizenship,
# occupations, educated at, employer, awards, languages
PEOPLE = [
    ("Q937", "Albert Einstein", {"ja": "アルベルト・アインシュタイン", "zh": "阿尔伯特·爱因斯坦", "ko": "알베르트 아인슈타인", "ru": "Альберт Эйнштейн", "ar": "ألبرت أينشتاين"}, ["Einstein"], ("+1879-03-14T00:00:00Z", "Q3820"), ("+1955-04-18T00:00:00Z", None), ["Q183", "Q39", "Q30"], ["Q169470"], ["Q11942"], ["Q152087"], [("Q38126", "+1921-00-00T00:00:00Z")], ["Q188", "Q1860"]),
    ("Q7186", "Marie Curie", {"fr": "Marie Curie", "pl": "Maria Skłodowska-Curie", "ja": "マリ・キュリー", "zh": "玛丽·居里", "ko": "마리 퀴리", "ru": "Мария Склодовская-Кюри"}, ["Maria Skłodowska", "Madame Curie"], ("+1867-11-07T00:00:00Z", "Q270"), ("+1934-07-04T00:00:00Z", None), ["Q36", "Q142"], ["Q169470", "Q593644"], ["Q209842"], ["Q209842"], [("Q38126", "+1903-00-00T00:00:00Z"), ("Q44585", "+1911-00-00T00:00:00Z")], ["Q150"]),
    ("Q37463", "Pierre Curie", {"ja": "ピエール・キュリー", "zh": "皮埃尔·居里", "ru": "Пьер Кюри"}, [], ("+1859-05-15T00:00:00Z", "Q90"), ("+1906-04-19T00:00:00Z", "Q90"), ["Q142"], ["Q169470"], ["Q209842"], ["Q209842"], [("Q38126", "+1903-00-00T00:00:00Z")], ["Q150"]),
    ("Q935", "Isaac Newton", {"ja": "アイザック・ニュートン", "zh": "艾萨克·牛顿", "ko": "아이작 뉴턴", "ru": "Исаак Ньютон"}, ["Sir Isaac Newton"], ("+1643-01-04T00:00:00Z", None), ("+1727-03-31T00:00:00Z", "Q84"), ["Q145"], ["Q169470", "Q170790"], ["Q35794"], ["Q35794"], [], ["Q1860"]),
    ("Q7251", "Alan Turing", {"ja": "アラン・チューリング", "zh": "艾伦·图灵", "ko": "앨런 튜링", "ru": "Алан Тьюринг"}, ["Alan Mathison Turing"], ("+1912-06-23T00:00:00Z", "Q84"), ("+1954-06-07T00:00:00Z", None), ["Q145"], ["Q170790", "Q82594"], ["Q35794"], ["Q35794"], [], ["Q1860"]),
    ("Q8016", "Winston Churchill", {"ja": "ウィンストン・チャーチル", "zh": "温斯顿·丘吉尔", "ru": "Уинстон Черчилль"}, ["Churchill"], ("+1874-11-30T00:00:00Z", None), ("+1965-01-24T00:00:00Z", "Q84"), ["Q145"], ["Q82955", "Q36180"], [], [], [("Q37922", "+1953-00-00T00:00:00Z")], ["Q1860"]),
    ("Q5879", "Johann Wolfgang von Goethe", {"de": "Johann Wolfgang von Goethe", "ja": "ヨハン・ヴォルフガング・フォン・ゲーテ", "zh": "约翰·沃尔夫冈·冯·歌德", "ru": "Иоганн Вольфганг фон Гёте"}, ["Goethe"], ("+1749-08-28T00:00:00Z", None), ("+1832-03-22T00:00:00Z", None), ["Q183"], ["Q36180"], [], [], [], ["Q188"]),
    ("Q255", "Ludwig van Beethoven", {"ja": "ルートヴィヒ・ヴァン・ベートーヴェン", "zh": "路德维希·范·贝多芬", "ko": "루트비히 판 베토벤", "ru": "Людвиг ван Бетховен"}, ["Beethoven"], ("+1770-12-17T00:00:00Z", None), ("+1827-03-26T00:00:00Z", "Q1867"), ["Q183"], ["Q36834"], [], [], [], ["Q188"]),
    ("Q254", "Wolfgang Amadeus Mozart", {"ja": "ヴォルフガング・アマデウス・モーツァルト", "zh": "沃尔夫冈·阿马德乌斯·莫扎特", "ru": "Вольфганг Амадей Моцарт"}, ["Mozart"], ("+1756-01-27T00:00:00Z", None), ("+1791-12-05T00:00:00Z", "Q1867"), ["Q40"], ["Q36834"], [], [], [], ["Q188", "Q652"]),
    ("Q762", "Leonardo da Vinci", {"it": "Leonardo da Vinci", "ja": "レオナルド・ダ・ヴィンチ", "zh": "列奥纳多·达·芬奇", "ru": "Леонардо да Винчи"}, ["Leonardo"], ("+1452-04-15T00:00:00Z", None), ("+1519-05-02T00:00:00Z", None), ["Q38"], ["Q1028181"], [], [], [], ["Q652"]),
    ("Q307", "Galileo Galilei", {"ja": "ガリレオ・ガリレイ", "zh": "伽利略·伽利莱", "ru": "Галилео Галилей"}, ["Galileo"], ("+1564-02-15T00:00:00Z", None), ("+1642-01-08T00:00:00Z", "Q2044"), ["Q38"], ["Q169470", "Q170790"], [], [], [], ["Q652"]),
    ("Q5582", "Vincent van Gogh", {"nl": "Vincent van Gogh", "ja": "フィンセント・ファン・ゴッホ", "zh": "文森特·梵高", "ru": "Винсент Ван Гог"}, ["Van Gogh"], ("+1853-03-30T00:00:00Z", None), ("+1890-07-29T00:00:00Z", None), ["Q55"], ["Q1028181"], [], [], [], ["Q7979", "Q150"]),
    ("Q41421", "Michael Jordan", {}, [], ("+1963-02-17T00:00:00Z", "Q60"), None, ["Q30"], [], [], [], [], ["Q1860"]),
    ("Q23", "George Washington", {"ja": "ジョージ・ワシントン", "zh": "乔治·华盛顿", "ru": "Джордж Вашингтон"}, [], ("+1732-02-22T00:00:00Z", None), ("+1799-12-14T00:00:00Z", None), ["Q30"], ["Q82955"], [], [], [], ["Q1860"]),
    ("Q5383", "Haruki Murakami", {"ja": "村上春樹", "zh": "村上春树", "ko": "무라카미 하루키", "ru": "Харуки Мураками"}, ["Murakami Haruki"], ("+1949-01-12T00:00:00Z", "Q35525"), None, ["Q17"], ["Q36180"], [], [], [], ["Q5287", "Q1860"]),
    ("Q19829", "Natsume Sōseki", {"ja": "夏目漱石", "zh": "夏目漱石", "ko": "나쓰메 소세키"}, ["Soseki"], ("+1867-02-09T00:00:00Z", "Q1490"), ("+1916-12-09T00:00:00Z", "Q1490"), ["Q17"], ["Q36180"], ["Q7842"], ["Q7842"], [], ["Q5287", "Q1860"]),
    ("Q4604", "Confucius", {"ja": "孔子", "zh": "孔子", "ko": "공자", "ru": "Конфуций", "vi": "Khổng Tử"}, ["Kong Qiu"], ("-0551-00-00T00:00:00Z", None), ("-0479-00-00T00:00:00Z", None), [], [], [], [], [], ["Q7850"]),
    ("Q23530", "Lu Xun", {"ja": "魯迅", "zh": "鲁迅", "ko": "루쉰", "ru": "Лу Синь"}, ["Zhou Shuren"], ("+1881-09-25T00:00:00Z", None), ("+1936-10-19T00:00:00Z", "Q8686"), ["Q148"], ["Q36180"], [], ["Q16952"], [], ["Q7850", "Q5287"]),
    ("Q36014", "Ho Chi Minh", {"vi": "Hồ Chí Minh", "ja": "ホー・チ・ミン", "zh": "胡志明", "ru": "Хо Ши Мин"}, ["Uncle Ho"], ("+1890-05-19T00:00:00Z", None), ("+1969-09-02T00:00:00Z", "Q1858"), ["Q881"], ["Q82955"], [], [], [], ["Q9199", "Q150", "Q7850", "Q7737"]),
    ("Q8750", "Sejong the Great", {"ko": "세종", "ja": "世宗", "zh": "朝鲜世宗"}, ["King Sejong"], ("+1397-05-15T00:00:00Z", None), ("+1450-05-18T00:00:00Z", None), [], ["Q82955"], [], [], [], ["Q9176"]),
    ("Q7243", "Leo Tolstoy", {"ru": "Лев Николаевич Толстой", "ja": "レフ・トルストイ", "zh": "列夫·托尔斯泰", "de": "Lew Tolstoi"}, ["Tolstoy"], ("+1828-09-09T00:00:00Z", None), ("+1910-11-20T00:00:00Z", None), ["Q159"], ["Q36180"], [], [], [], ["Q7737", "Q150"]),
    ("Q7200", "Alexander Pushkin", {"ru": "Александр Сергеевич Пушкин", "ja": "アレクサンドル・プーシキン", "zh": "亚历山大·普希金", "de": "Alexander Puschkin"}, ["Pushkin"], ("+1799-06-06T00:00:00Z", "Q649"), ("+1837-02-10T00:00:00Z", "Q656"), ["Q159"], ["Q36180"], [], [], [], ["Q7737", "Q150"]),
    ("Q5593", "Pablo Picasso", {"ja": "パブロ・ピカソ", "zh": "巴勃罗·毕加索", "ru": "Пабло Пикассо"}, ["Picasso"], ("+1881-10-25T00:00:00Z", None), ("+1973-04-08T00:00:00Z", None), ["Q29"], ["Q1028181"], [], [], [], ["Q1321", "Q150"]),
    ("Q5682", "Miguel de Cervantes", {"ja": "ミゲル・デ・セルバンテス", "zh": "米格尔·德·塞万提斯", "ru": "Мигель де Сервантес"}, ["Cervantes"], ("+1547-09-29T00:00:00Z", None), ("+1616-04-22T00:00:00Z", "Q2807"), ["Q29"], ["Q36180"], [], [], [], ["Q1321"]),
    ("Q92743", "Tim Berners-Lee", {"ja": "ティム・バーナーズ＝リー", "zh": "蒂姆·伯纳斯-李", "ru": "Тим Бернерс-Ли"}, ["TimBL"], ("+1955-06-08T00:00:00Z", "Q84"), None, ["Q145"], ["Q82594"], ["Q34433"], ["Q49108"], [("Q185667", "+2016-00-00T00:00:00Z")], ["Q1860"]),
    ("Q92638", "Geoffrey Hinton", {"ja": "ジェフリー・ヒントン", "zh": "杰弗里·辛顿"}, [], ("+1947-12-06T00:00:00Z", "Q84"), None, ["Q145"], ["Q82594"], ["Q35794"], ["Q95"], [("Q185667", "+2018-00-00T00:00:00Z")], ["Q1860"]),
    ("Q19837", "Steve Jobs", {"ja": "スティーブ・ジョブズ", "zh": "史蒂夫·乔布斯", "ko": "스티브 잡스", "ru": "Стив Джобс"}, ["Steven Paul Jobs"], ("+1955-02-24T00:00:00Z", None), ("+2011-10-05T00:00:00Z", None), ["Q30"], ["Q131524"], [], ["Q312"], [], ["Q1860"]),
    ("Q92764", "Sundar Pichai", {"ja": "スンダー・ピチャイ", "zh": "桑达尔·皮查伊"}, [], ("+1972-06-10T00:00:00Z", None), None, ["Q30"], ["Q131524"], [], ["Q95"], [], ["Q1860"]),
    ("Q57244", "Angela Merkel", {"ja": "アンゲラ・メルケル", "zh": "安格拉·默克尔", "ko": "앙겔라 메르켈", "ru": "Ангела Меркель"}, ["Merkel"], ("+1954-07-17T00:00:00Z", "Q1055"), None, ["Q183"], ["Q82955", "Q169470"], [], [], [], ["Q188", "Q7737", "Q1860"]),
    ("Q517", "Napoleon", {"fr": "Napoléon Ier", "de": "Napoleon Bonaparte", "ja": "ナポレオン・ボナパルト", "zh": "拿破仑·波拿巴", "ru": "Наполеон I"}, ["Napoleon Bonaparte"], ("+1769-08-15T00:00:00Z", None), ("+1821-05-05T00:00:00Z", None), ["Q142"], ["Q82955"], [], [], [], ["Q150", "Q652"]),
    ("Q9068", "Voltaire", {"ja": "ヴォルテール", "zh": "伏尔泰", "ru": "Вольтер"}, ["François-Marie Arouet"], ("+1694-11-21T00:00:00Z", "Q90"), ("+1778-05-30T00:00:00Z", "Q90"), ["Q142"], ["Q36180"], ["Q209842"], [], [], ["Q150", "Q1860"]),
    ("Q1339", "Johann Sebastian Bach", {"ja": "ヨハン・ゼバスティアン・バッハ", "zh": "约翰·塞巴斯蒂安·巴赫", "ru": "Иоганн Себастьян Бах"}, ["Bach"], ("+1685-03-31T00:00:00Z", None), ("+1750-07-28T00:00:00Z", None), ["Q183"], ["Q36834"], [], [], [], ["Q188"]),
    ("Q47737", "Niels Bohr", {"ja": "ニールス・ボーア", "zh": "尼尔斯·玻尔", "ru": "Нильс Бор"}, ["Bohr"], ("+1885-10-07T00:00:00Z", None), ("+1962-11-18T00:00:00Z", None), [], ["Q169470"], ["Q35794"], [], [("Q38126", "+1922-00-00T00:00:00Z")], ["Q1860", "Q188"]),
    ("Q9047", "Gottfried Wilhelm Leibniz", {"ja": "ゴットフリート・ライプニッツ", "zh": "戈特弗里德·莱布尼茨", "ru": "Готфрид Вильгельм Лейбниц"}, ["Leibniz"], ("+1646-07-01T00:00:00Z", None), ("+1716-11-14T00:00:00Z", None), ["Q183"], ["Q170790"], [], [], [], ["Q188", "Q150"]),
    ("Q6882", "Hideki Yukawa", {"ja": "湯川秀樹", "zh": "汤川秀树", "ko": "유카와 히데키"}, [], ("+1907-01-23T00:00:00Z", "Q1490"), ("+1981-09-08T00:00:00Z", None), ["Q17"], ["Q169470"], [], ["Q7842"], [("Q38126", "+1949-00-00T00:00:00Z")], ["Q5287"]),
    ("Q16997", "Tu Youyou", {"zh": "屠呦呦", "ja": "屠呦呦", "ko": "투유유"}, [], ("+1930-12-30T00:00:00Z", None), None, ["Q148"], ["Q593644"], ["Q16952"], [], [], ["Q7850"]),
    ("Q35332", "Ban Ki-moon", {"ko": "반기문", "ja": "潘基文", "zh": "潘基文", "ru": "Пан Ги Мун"}, [], ("+1944-06-13T00:00:00Z", None), None, ["Q884"], ["Q82955"], [], ["Q1065"], [], ["Q9176", "Q1860", "Q150"]),
    ("Q9696", "John F. Kennedy", {"ja": "ジョン・F・ケネディ", "zh": "约翰·肯尼迪", "ru": "Джон Кеннеди"}, ["JFK"], ("+1917-05-29T00:00:00Z", None), ("+1963-11-22T00:00:00Z", None), ["Q30"], ["Q82955"], ["Q13371"], [], [], ["Q1860"]),
    ("Q1001", "Mahatma Gandhi", {"ja": "マハトマ・ガンディー", "zh": "圣雄甘地", "ru": "Махатма Ганди"}, ["Gandhi"], ("+1869-10-02T00:00:00Z", None), ("+1948-01-30T00:00:00Z", None), [], ["Q82955"], [], [], [], ["Q1860"]),
    ("Q1035", "Charles Darwin", {"ja": "チャールズ・ダーウィン", "zh": "查尔斯·达尔文", "ru": "Чарлз Дарвин"}, ["Darwin"], ("+1809-02-12T00:00:00Z", None), ("+1882-04-19T00:00:00Z", None), ["Q145"], [], ["Q35794"], [], [], ["Q1860"]),
]
for pid, en, tr, aliases, born, died, cit, occ, edu, emp, awards, langs in PEOPLE:
    item(pid, en, tr, aliases, desc="person")
    claim(pid, "P31", "Q5")
    claim(pid, "P569", ("time", born[0], 11 if "-00-00" not in born[0] else 9))
    if born[1]:
        claim(pid, "P19", born[1])
    if died:
        claim(pid, "P570", ("time", died[0], 11 if "-00-00" not in died[0] else 9))
        if died[1]:
            claim(pid, "P20", died[1])
    for i, c in enumerate(cit):
        claim(pid, "P27", c, "preferred" if i == 0 and len(cit) > 1 else "normal")
    for o in occ:
        claim(pid, "P106", o)
    for e in edu:
        claim(pid, "P69", e)
    for e in emp:
        claim(pid, "P108", e)
    for a, when in awards:
        claim(pid, "P166", a, qualifiers=[("P580", ("time", when, 9))])
    for l in langs:
        claim(pid, "P1412", l)
claim("Q7186", "P26", "Q37463", qualifiers=[("P580", ("time", "+1895-07-26T00:00:00Z", 11)), ("P582", ("time", "+1906-04-19T00:00:00Z", 11))])
claim("Q37463", "P26", "Q7186", qualifiers=[("P580", ("time", "+1895-07-26T00:00:00Z", 11))])
claim("Q937", "P214", ("external", "75121530"))
claim("Q937", "P27", "Q40", rank="deprecated")  # a deliberately deprecated statement
claim("Q7251", "P20", ("novalue",))  # a novalue statement, counted and skipped


def datavalue(value):
    kind = value[0]
    if kind == "quantity":
        v = {"amount": "+" + value[1], "unit": "1" if value[2] is None else "http://www.wikidata.org/entity/" + value[2]}
        return {"value": v, "type": "quantity"}
    if kind == "time":
        return {"value": {"time": value[1], "timezone": 0, "before": 0, "after": 0, "precision": value[2],
                          "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}, "type": "time"}
    if kind == "mono":
        return {"value": {"text": value[1], "language": value[2]}, "type": "monolingualtext"}
    if kind == "coord":
        return {"value": {"latitude": value[1], "longitude": value[2], "altitude": None, "precision": 1e-06,
                          "globe": "http://www.wikidata.org/entity/Q2"}, "type": "globecoordinate"}
    if kind in ("string", "external"):
        return {"value": value[1], "type": "string"}
    raise ValueError(value)


def snak(prop, value):
    if isinstance(value, tuple) and value[0] == "novalue":
        return {"snaktype": "novalue", "property": prop, "datatype": DATATYPE.get(prop, "wikibase-item")}
    if isinstance(value, str):
        dv = {"value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value}, "type": "wikibase-entityid"}
        return {"snaktype": "value", "property": prop, "datavalue": dv, "datatype": "wikibase-item"}
    return {"snaktype": "value", "property": prop, "datavalue": datavalue(value), "datatype": DATATYPE.get(prop, "string")}


def terms(en, tr):
    out = {"en": {"language": "en", "value": en}}
    for lang, text in tr.items():
        out[lang] = {"language": lang, "value": text}
    return out


def entity_json(qid, e):
    claims = {}
    for n, (p, o, rank, quals) in enumerate(e["claims"]):
        st = {"mainsnak": snak(p, o), "type": "statement", "id": f"{qid}${n:08d}-0000-0000-0000-000000000000", "rank": rank}
        if quals:
            st["qualifiers"] = {}
            for qp, qv in quals:
                st["qualifiers"].setdefault(qp, []).append(snak(qp, qv))
            st["qualifiers-order"] = list(st["qualifiers"])
        claims.setdefault(p, []).append(st)
    out = {"type": "item", "id": qid, "labels": terms(e["en"], e["labels"]),
           "descriptions": {"en": {"language": "en", "value": e["desc"]}} if e["desc"] else {},
           "aliases": {"en": [{"language": "en", "value": a} for a in e["aliases"]]} if e["aliases"] else {},
           "claims": claims,
           "sitelinks": {"enwiki": {"site": "enwiki", "title": e["en"], "badges": []}} if e["enwiki"] else {}}
    return out


def property_json(pid, en, tr, aliases):
    return {"type": "property", "datatype": DATATYPE.get(pid, "wikibase-item"), "id": pid, "labels": terms(en, tr),
            "descriptions": {}, "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
            "claims": {}}


lines = [json.dumps(property_json(pid, *spec), ensure_ascii=False, separators=(",", ":")) for pid, spec in P.items()]
lines += [json.dumps(entity_json(q, e), ensure_ascii=False, separators=(",", ":")) for q, e in ITEMS.items()]
sys.stdout.write("[\n" + ",\n".join(lines) + "\n]\n")
