"""Reading a Wikidata JSON dump (one entity per line, inside "[" ... "]", gzip) for the test checkers."""
import gzip
import json


def items(path):
    """The dump's items (entities of type "item"), as dicts, in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            e = json.loads(line)
            if e.get("type") == "item":
                yield e
