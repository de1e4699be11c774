"""Synthetic texts with partial copies (no corpora): for the overlap service and Spark tests."""

from __future__ import annotations

import random

BOILERPLATE = "subscribe to our newsletter for more stories like this one every day"


def synthetic(seed: int = 7, n: int = 14, boilerplate: str = BOILERPLATE) -> list[tuple[str, str]]:
    """``(id, text)``: random English-like and Chinese texts; later ones copy passages of
    earlier ones (verbatim, with word edits, or twice), and every text ends with ``boilerplate``.

    >>> docs = synthetic(n=3)
    >>> [i for i, _ in docs], all(t.endswith(BOILERPLATE) for _, t in docs)
    (['doc-0', 'doc-1', 'doc-2'], True)
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstu") for _ in range(rng.randint(2, 8)))
             for _ in range(800)]  # fmt: skip
    han = [chr(0x4E00 + rng.randrange(3000)) for _ in range(400)]
    docs: list[tuple[str, str]] = []
    for i in range(n):
        if i % 4 == 3:
            chars = [rng.choice(han) for _ in range(120)]
            text = "".join(chars[:60]) + "。" + "".join(chars[60:]) + "！"
        else:
            text = " ".join(rng.choice(vocab) for _ in range(rng.randint(60, 140)))
        if i >= 2 and i % 2 == 0:
            _, src = docs[rng.randrange(len(docs))]
            a = rng.randrange(max(1, len(src) // 2))
            piece = src[a : a + rng.randint(80, 300)]
            if i % 3 == 0:  # a light rewrite: a few words replaced
                piece = " ".join(rng.choice(vocab) if rng.random() < 0.05 else w
                                 for w in piece.split(" "))  # fmt: skip
            if i % 5 == 0:  # the same passage twice: a gram with two places in this text
                piece = piece + " and again " + piece
            cut = rng.randrange(len(text))
            text = text[:cut] + " " + piece + " " + text[cut:]
        docs.append((f"doc-{i}", text + "\n" + boilerplate))
    return docs


VIRAL = range(20, 70)  # the texts holding the viral story (templated)
PLANTED = (90, 110)  # (source, copy) of a passage copied once (templated)


def templated(seed: int = 3, n: int = 120) -> list[tuple[str, str]]:
    """``(id, text)``: news-like texts with the templates of a real collection (a dateline
    and byline with the city, date and reporter changed; a reporter's signature line), a viral
    story of 60 words in every text of :data:`VIRAL`, and one passage of text ``PLANTED[0]``
    copied into ``PLANTED[1]``; nothing else is shared.

    >>> docs = templated(n=3)
    >>> [i for i, _ in docs], "(Reuters) - staff writer" in docs[0][1]
    (['t-0', 't-1', 't-2'], True)
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstuvwy") for _ in range(rng.randint(4, 9)))
             for _ in range(6000)]  # fmt: skip
    cities, names = ["Boston", "Paris", "Lagos", "Lima"], ["Ann Lee", "Bo Chan", "Cy Ruiz"]
    viral = " ".join(rng.choice(vocab) for _ in range(60)) + "."
    docs: list[tuple[str, str]] = []
    for i in range(n):
        name = rng.choice(names)
        byline = (f"{rng.choice(cities)} {rng.randint(1, 12)} {rng.randint(1, 28)} (Reuters) - "
                  f"staff writer {name} reports that")  # fmt: skip
        body = [" ".join(rng.choice(vocab) for _ in range(rng.randint(12, 20))) + "."
                for _ in range(6)]  # fmt: skip
        if i in VIRAL:
            body.insert(rng.randrange(1, len(body)), viral)
        if i == PLANTED[1]:
            body.insert(3, docs[PLANTED[0]][1].split("\n")[2])
        signature = (
            f"{name} writes for the city desk and can be reached at extension "
            f"{rng.randint(100, 999)} of the newsroom in {rng.choice(cities)}."
        )
        docs.append((f"t-{i}", "\n".join([byline + " " + body[0], *body[1:], signature])))
    return docs


def copy_chain(seed: int = 5, copies: int = 4) -> list[tuple[str, str]]:
    """``(id, text)``: an article (``orig``), a rewrite of it with one word in six
    replaced (``rewrite``), then ``copies`` texts each copying the rewrite verbatim among text
    of their own (``copy-0``, ...): the rewrite is closer to every copy than the article is.

    >>> [i for i, _ in copy_chain(copies=2)]
    ['orig', 'rewrite', 'copy-0', 'copy-1']
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstuvwy") for _ in range(rng.randint(4, 9)))
             for _ in range(3000)]  # fmt: skip
    words = [rng.choice(vocab) for _ in range(120)]
    rewrite = [rng.choice(vocab) if k % 6 == 2 else w for k, w in enumerate(words)]
    docs = [("orig", " ".join(words)), ("rewrite", " ".join(rewrite))]
    for c in range(copies):
        own = " ".join(rng.choice(vocab) for _ in range(40))
        docs.append((f"copy-{c}", own + " " + " ".join(rewrite) + " " + own[::-1]))
    return docs


def article_last(seed: int = 7) -> list[tuple[str, str]]:
    """``(id, text)`` in input order, the original last (no time field): ``heavy`` rewrites
    the first half of ``orig`` (one word in six replaced), ``sentence`` holds one of its
    sentences verbatim, ``whole`` copies all of it with one word in thirty replaced (a near
    copy); each among text of its own.

    >>> [i for i, _ in article_last()]
    ['heavy', 'sentence', 'whole', 'orig']
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstuvwy") for _ in range(rng.randint(4, 9)))
             for _ in range(3000)]  # fmt: skip
    words = [rng.choice(vocab) for _ in range(160)]

    def own(n: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(n))

    heavy = [rng.choice(vocab) if k % 6 == 2 else w for k, w in enumerate(words[:80])]
    whole = [rng.choice(vocab) if k % 30 == 7 else w for k, w in enumerate(words)]
    return [
        ("heavy", f"{own(30)} {' '.join(heavy)} {own(30)}"),
        ("sentence", f"{own(40)} {' '.join(words[100:118])} {own(40)}"),
        ("whole", f"{own(20)} {' '.join(whole)} {own(20)}"),
        ("orig", " ".join(words)),
    ]


def edited_copies(seed: int = 36, copies: int = 6, edits: bool = True) -> list[tuple[str, str]]:
    """``(id, text)`` in input order, the original last (no time field): ``copy-k`` holds all
    of ``orig`` (150 words) after text of its own, with edits of its own (one word in 40, 20,
    13, 10 ... replaced); with ``edits=False`` every copy holds it as it is (a re-issue).

    >>> [i for i, _ in edited_copies(copies=2)]
    ['copy-0', 'copy-1', 'orig']
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstuvwy") for _ in range(rng.randint(4, 9)))
             for _ in range(3000)]  # fmt: skip
    words = [rng.choice(vocab) for _ in range(150)]
    docs = []
    for c in range(copies):
        step = 40 // (c + 1) if edits else 0  # every step-th word replaced (0: none)
        text = [rng.choice(vocab) if step and k % step == step // 2 else w
                for k, w in enumerate(words)]  # fmt: skip
        own = " ".join(rng.choice(vocab) for _ in range(30))
        docs.append((f"copy-{c}", f"{own} {' '.join(text)}"))
    return [*docs, ("orig", " ".join(words))]


DATELINE_STORY = (30, 35)  # (source, copy) of the one story copied (datelines)


def datelines(seed: int = 36, n: int = 40) -> list[tuple[int, str]]:
    """``(id, text)``: People's Daily-like texts of random Han characters, each with a Xinhua
    dateline whose slots are names and numbers (one of four cities, one of four reporters, the
    day), and one story of text ``DATELINE_STORY[0]`` copied into ``DATELINE_STORY[1]``: the
    frame recurs, the city or reporter differs, so only the frame rule (aligner 11) sets the
    datelines aside.

    >>> docs = datelines(n=2)
    >>> [i for i, _ in docs], "１月1日电（记者" in docs[0][1]
    ([0, 1], True)
    """
    rng = random.Random(seed)

    def han(k: int) -> str:
        return "".join(chr(rng.randrange(0x4E00, 0x9FA0)) for _ in range(k))

    cities, names = [han(4) for _ in range(4)], [han(3) for _ in range(4)]
    story = han(80)
    docs: list[tuple[int, str]] = []
    for k in range(n):
        line = f"据新华社{cities[k % 4]}１月{k % 28 + 1}日电（记者{names[k // 10 % 4]}）"
        body = story if k in DATELINE_STORY else han(120)
        docs.append((k, han(20) + "\n" + line + body))
    return docs


REPORT_COPIES = [(8, 2), (10, 2)]  # (copy, source) of the report copied as it was, corrected
REPORT_NEXT = (6, 2)  # (text, earlier text) of the next report of the series (reports)


def reports(seed: int = 12, n: int = 12) -> list[tuple[int, str]]:
    """``(id, text)``: random texts, four of them holding one weekly report (Reuters' loans
    wire): text 2 with the week's figures, text 6 the next week's (other figures: a template,
    aligner 12, though the frame recurs in no more than two texts), text 8 a copy of text 2's,
    text 10 that copy with one figure corrected (copies, ``REPORT_COPIES``).

    >>> docs = reports()
    >>> [i for i, t in docs if "industrial loans" in t]
    [2, 6, 8, 10]
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstu") for _ in range(6)) for _ in range(3000)]

    def words(k: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(k))

    def figure() -> str:
        return f"{rng.randint(100, 999)}.{rng.randint(10, 99)}"

    def report(f: list[str]) -> str:
        return (
            f"Commercial and industrial loans on the books of the major banks fell {f[0]} mln "
            f"dlrs to {f[1]} billion in the week ended on the date given, the bank said. "
            f"Including acceptances, loans fell {f[2]} mln dlrs to {f[3]} billion. Commercial "
            f"paper outstanding nationally dropped {f[4]} mln dlrs to {f[5]} billion"
        )

    week1, week2 = [figure() for _ in range(6)], [figure() for _ in range(6)]
    texts = [f"{words(40)}. {words(40)}." for _ in range(n)]
    texts[2] = f"{words(20)}. {report(week1)}. {words(30)}."
    texts[6] = f"{words(25)}. {report(week2)}. {words(20)}."
    texts[8] = f"{words(10)}. {report(week1)}. {words(35)}."
    texts[10] = f"{words(30)}. {report([*week1[:5], figure()])}. {words(15)}."
    return list(enumerate(texts))


PHRASE = (30, 36)  # (source, copy) of a phrase made of two recurring pieces (phrases)
COPIED = (20, 27, 33)  # the texts holding one copied sentence of 12 words (phrases)


def phrases(seed: int = 17, n: int = 40) -> list[tuple[int, str]]:
    """``(id, text)``: random texts; a name of 6 words and a clause of 8 recur apart in an
    eighth of the texts each (``Secretary of State George Shultz``, ``told a group of farm
    leaders``: fewer than ``template_min_docs``), joined in texts ``PHRASE`` only (a common
    phrase: aligner 14 sets it aside), and a sentence of 12 words copied from text 20 into 27
    and 33 (``COPIED``: a copy).

    >>> docs = phrases()
    >>> len(docs), docs[30][1].count(" ") > 40
    (40, True)
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstu") for _ in range(6)) for _ in range(3000)]

    def words(k: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(k))

    name, clause, sentence = words(6), words(8), words(12)
    docs: list[tuple[int, str]] = []
    for k in range(n):
        middle = name if k % 8 == 0 else clause if k % 8 == 1 else words(3)
        middle = f"{name} {clause}" if k in PHRASE else middle
        if k in COPIED:
            middle = f"{middle}. {sentence}"
        docs.append((k, f"{words(25)}. {middle}. {words(25)}."))
    return docs
