#!/usr/bin/env python3
"""Writes tests/data/tokenizer/heldout.jsonl: text nobody on the project wrote or looked at when
the tokenizer was built — seeded random slices of files found on a Debian 12 machine (Python's
CJK encoding test texts, its standard library and test sources, the license texts, X11 Compose
tables with their many scripts and symbols, man pages, and the translated messages of the
programs' gettext catalogs in /usr/share/locale: ~200 languages in their own scripts). One JSON string per line. The files
differ between machines, so the output is committed and this script records where it came from.

Run: python3 make_heldout.py OUT.jsonl [N]"""
import gettext
import glob
import gzip
import json
import random
import sys
import sysconfig

out_path = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
rng = random.Random(20261201)
stdlib = sysconfig.get_paths()["stdlib"]
patterns = [
    stdlib + "/test/cjkencodings/*-utf8.txt",
    stdlib + "/test/test_unicode*.py",
    stdlib + "/test/test_codecs.py",
    stdlib + "/test/test_re.py",
    stdlib + "/test/test_str*.py",
    stdlib + "/email/*.py",
    stdlib + "/json/*.py",
    "/usr/share/common-licenses/*",
    "/usr/share/X11/locale/*/Compose",
    "/usr/share/man/man1/*.1.gz",
    "/usr/include/stdio.h",
    "/usr/include/linux/*.h",
]
# Each pattern is a source; a slice picks a source, then a file of it (so that the thousands of
# man pages do not crowd out the few files in other scripts).
sources = []
for p in patterns:
    texts = []
    for f in sorted(glob.glob(p)):
        try:
            raw = gzip.open(f).read() if f.endswith(".gz") else open(f, "rb").read()
            texts.append(raw.decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    if texts:
        sources.append(texts)
# The gettext catalogs: one source holding one text per language (its messages joined), drawn
# as often as all the files together.
languages = []
for lang_dir in sorted(glob.glob("/usr/share/locale/*/LC_MESSAGES")):
    messages = []
    for mo in sorted(glob.glob(lang_dir + "/*.mo")):
        try:
            with open(mo, "rb") as f:
                catalog = gettext.GNUTranslations(f)
        except Exception:  # not a catalog this module reads: skip it
            continue
        messages += [m for m in catalog._catalog.values() if isinstance(m, str) and m]
    if messages:
        languages.append("\n".join(messages))
weights = [1] * len(sources) + [len(sources)]
sources.append(languages)
lines = []
while len(lines) < n:
    text = rng.choice(rng.choices(sources, weights)[0])
    # Mostly short and mid-size slices, some up to 6000 characters.
    length = rng.choice([rng.randint(1, 40), rng.randint(40, 400), rng.randint(400, 6000)])
    start = rng.randrange(max(1, len(text) - length))
    piece = text[start:start + length]
    if piece:
        lines.append(piece)
with open(out_path, "w", encoding="utf-8") as f:
    for line in lines:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")
print(f"{len(lines)} slices of {sum(map(len, sources))} files in {len(sources)} sources -> {out_path}", file=sys.stderr)
