#!/usr/bin/env python3
"""Writes the tokenizer test corpora (tests/data/tokenizer/): corpus.jsonl, hand-written cases of
what tokenizers get wrong, and random.jsonl, seeded random strings nobody looked at. One JSON
string per line. Run: python3 make_corpus.py OUT_DIR"""
import json
import random
import sys

out = sys.argv[1]

cases = [
    "",
    " ",
    "Hello",
    "Hello world",
    " Hello world",
    "Hello world ",
    "The quick brown fox jumps over the lazy dog.",
    "  two leading spaces and    four inside",
    "tabs\tand\t\ttabs",
    "new\nlines\n\n\nand\n",
    "\n\n\n\n",
    "windows\r\nline\r\nendings\r\n",
    "\r\r\n\n\r",
    "trailing spaces      ",
    " " * 100,
    "\t" * 40 + "x",
    "\n" * 37,
    # Multilingual.
    "Le cœur a ses raisons que la raison ne connaît point.",
    "Ich möchte ein Stück Kuchen, bitte. Straße, Größe, Äpfel.",
    "¿Dónde está la biblioteca? ¡Qué bien!",
    "Съешь же ещё этих мягких французских булок да выпей чаю.",
    "Γαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο.",
    "日本語のテキストをトークン化します。東京は晴れです。",
    "我能吞下玻璃而不伤身体。你好，世界！",
    "나는 유리를 먹을 수 있어요. 그래도 아프지 않아요.",
    "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती.",
    "أنا قادر على أكل الزجاج و هذا لا يؤلمني.",
    "אני יכול לאכול זכוכית וזה לא מזיק לי.",
    "ฉันกินกระจกได้ แต่มันไม่ทำให้ฉันเจ็บ",
    "Tôi có thể ăn thủy tinh mà không hại gì.",
    "Mogę jeść szkło i mi nie szkodzi. Zażółć gęślą jaźń.",
    "ሰማይ አይታረስ ንጉሥ አይከሰስ።",
    "ᚠᛇᚻ᛫ᛒᛦᚦ᛫ᚠᚱᚩᚠᚢᚱ᛫ᚠᛁᚱᚪ᛫ᚷᛖᚻᚹᛦᛚᚳᚢᛗ",
    "Ελληνικά, русский, 中文, عربى, עברית — mixed in one line.",
    # Code.
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "#include <stdio.h>\nint main(void) {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
    "for (let i = 0; i < arr.length; ++i) { sum += arr[i] ** 2; } // JS",
    "SELECT id, name FROM users WHERE age >= 21 ORDER BY name DESC LIMIT 10;",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
    "<html><body><p class=\"x\">Hi &amp; bye</p></body></html>",
    "x = y<<2 | z>>3 & ~w ^ 0xFF; a != b && c == d || !e",
    "    indented with four spaces\n        and eight\n",
    "path/to/file.txt C:\\Windows\\System32 https://example.com/a?b=c&d=e#f",
    "3.14159 2.71828 1e-10 -42 +7 1,000,000 0x1F 0b1010 100%",
    "1234567890 12345678901234567890",
    # Emoji.
    "I ❤️ tokenizers 😀😃😄😁",
    "👨‍👩‍👧‍👦 family, 👩🏽‍💻 technologist, 🏳️‍🌈 flag, 🇯🇵🇺🇸 flags",
    "🧑🏿‍🦱🫠🫨🪿 new emoji",
    "✅❌⚠️☑️✔︎",
    # Combining marks, normal forms, unusual spaces.
    "e\u0301 vs \u00e9; n\u0303 vs \u00f1; a\u0308\u0304",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dalgo",
    "ﬁ ﬂ ① ㍿ Ａ ｶ ﾟ",
    "no\u00a0break\u00a0spaces and\u202fnarrow\u2009thin\u2003em\u3000ideographic",
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom",
    "\u2028line separator\u2029paragraph separator\u0085next line",
    "soft\u00adhyphen and left\u200eto\u200fright marks",
    # Control characters.
    "\x00null\x01\x02\x03 bell\x07 esc\x1b[31m red \x1b[0m del\x7f",
    "\x0b vertical tab \x0c form feed",
    "\ud7ff\ue000\uf8ff\U0010ffff private use and edge code points",
    "\U0001d49c\U0001d4b7 math letters 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    # Special-token strings written in the text (matched as added tokens).
    "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
    "<bos>text after bos<eos>",
    "<pad><unk><mask>",
    "not special: <start_of_turn <end_of_turn> <bos <eos>> <<bos>>",
    "<unused0><unused99><unused6241>",
    "<start_of_image>image<end_of_image>",
    "<|turn>user\nhi<turn|>",
    "a<bos>b<bos>c",
    " <eos> spaces around <eos> ",
    # Repetition and long words.
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "abababababababababababababababababababababababababababab",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "-" * 200,
    "=" * 33 + "\n" + "*" * 17,
    "...!!!???,,,;;;:::",
    "ﾟ｡+｡･ﾟ*｡ ♪♫♬ ☆彡",
]
# Long words: no spaces at all, so BPE sees one word (the whole text for Gemma).
random.seed(13)
letters = "abcdefghijklmnopqrstuvwxyz"
cases.append("".join(random.choice(letters) for _ in range(20000)))
cases.append("x" * 20000)
cases.append(("tokenization" * 1000))
cases.append("".join(random.choice("日本語中文한국어") for _ in range(5000)))
cases.append("😀" * 3000)
# A long English text (several paragraphs).
cases.append(("It was the best of times, it was the worst of times, it was the age of wisdom, "
              "it was the age of foolishness, it was the epoch of belief, it was the epoch of "
              "incredulity, it was the season of Light, it was the season of Darkness.\n\n") * 20)

with open(f"{out}/corpus.jsonl", "w", encoding="utf-8") as f:
    for c in cases:
        f.write(json.dumps(c, ensure_ascii=True) + "\n")

# Random strings from a mixture of scripts, spaces, controls, specials and emoji.
rng = random.Random(20260817)
pools = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    " " * 10 + "\t\n\r",
    ".,;:!?'\"()[]{}<>/\\|-_=+*&^%$#@~`",
    "éèêëàâäôöûüçñßøåæœ",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
    "αβγδεζηθικλμνξοπρστυφχψω",
    "日本語中文字漢字ひらがなカタカナ한국어",
    "\u0301\u0308\u0327\u200d\u200b\u00a0\u3000\ufe0f",
    "\x00\x01\x1b\x7f\x0b\x0c",
    "😀👍🏽❤️🇫🇷👩‍💻🤖",
]
specials = ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<pad>", "<unused7>", "<mask>"]
randoms = []
for _ in range(300):
    n = rng.randint(1, 120)
    s = []
    for _ in range(n):
        r = rng.random()
        if r < 0.03:
            s.append(rng.choice(specials))
        else:
            pool = rng.choice(pools)
            s.append(rng.choice(pool))
    randoms.append("".join(s))
with open(f"{out}/random.jsonl", "w", encoding="utf-8") as f:
    for c in randoms:
        f.write(json.dumps(c, ensure_ascii=True) + "\n")
