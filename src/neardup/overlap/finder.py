"""``OverlapFinder``: passages shared between documents (partial copies, 洗稿), with spans.

Seed and extend, as in PAN text alignment: every text is tokenised (words; single Han
characters) with offsets into the text as read; grams of ``ngram`` words (a Han character
counts two thirds of a word) are hashed; winnowing keeps a few of them per window in an
inverted index. A query looks up its own winnowed grams (a window of grams it shares with an
indexed text has its smallest hash kept on both sides), groups the hits by document, merges
nearby seeds into passages (:mod:`neardup.overlap.align`) and reports each passage pair with its
spans and score.

>>> f = OverlapFinder(min_length=6)
>>> src = "The city council approved the new budget for schools, roads and hospitals on Monday."
>>> f.add("Weather today. " + src, id="a")
[]
>>> [p] = f.add("In other news, " + src[:70] + " More later.", id="b")
>>> p.id, p.source_id, p.span, p.source_span, p.score  # "hospit" is not "hospitals"
('b', 'a', (15, 78), (15, 78), 1.0)
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from neardup import _backend
from neardup._backend import overlap_kernels
from neardup._params import FrozenParams
from neardup.overlap.forms import (
    Form,
    as_packed,
    as_prepared,
    gram_count,
    look_up,
    post,
    prepare_form,
    prepare_many,
    reference_form,
)
from neardup.overlap.index import Budget, GramIndex, Look, SeedBudgetError
from neardup.overlap.pairs import (
    SOURCE_MODES,
    PairParams,
    Prepared,
    kernel_params,
    pair_passages,
    source_rows,
    token_arrays,
)
from neardup.overlap.persist import ReferenceMixin
from neardup.overlap.templates import TemplateBatch, TemplateCounts, template_flags

__all__ = ["OverlapFinder", "Passage"]

# 2: frozen class table, per-character fold (C kernel); 3: grams sized in gram units (a Han
# character 2/3 of a word: 6-character grams)
TOKENIZER_VERSION = 3
# 3: diagonal chains, short-gram groups, diagonal bands, reach 3 gaps; 4: a passage needs
# half its tokens covered by shared fine grams (pairs.MIN_COVER), bands of an eighth of the
# strong seeds, the cross-source rule (pairs.cross_source_keep), min_length in gram units;
# 5: a query looks up only the grams winnowing with query_window keeps (1.5x fewer probes);
# 6: max_df counts the documents posting a gram, not its postings (a text repeating a
# sentence 60 times was all boilerplate to its own copy)
# 7: the template rule (overlap.templates) flags, and by default sets aside, templates
# 8: a passage names its earliest source, the closest beside it (pairs.source_rows)
# 9: a passage's ends come from seeds matching one place on each side (align._ends): a
# repeated phrase no longer stretches one side's span to a far repeat
# 10: a longer near copy is a passage of its own, not a holder of a shorter one inside it;
# "all" names the edited copies of a part of a passage too (pairs.holders)
# 11: the template rule sees frames with name and clause slots (templates.OWN_SHARE)
# 12: a passage whose sides hold other figures is a report of a series (templates.REFILLED)
# 13: "original" names the holders of a long passage that each edited it (pairs.edited_copies)
# 14: short passages scoring under templates.LOOSE or made of recurring pieces are common phrases
ALIGNER_VERSION = 14
TEMPLATE_MODES = ("drop", "keep")
BUDGET_MODES = ("trim", "refuse")
EXAMPLES = 5  # templates set aside kept as examples for the summary
# the default look-up window: 2 keeps 2/3 of the grams and the recall of looking up every gram
# on the PAN sets (zh heavy rewrites 0.870-0.908, seeds 1-4), 4 keeps 2/5 but loses 0.01-0.03
# there (0.854-0.890); benchmarks/README.md "Overlap", Cost
QUERY_WINDOW = 2
_CACHE = 16384  # packed source documents kept for the next queries (~10 KB each)
# a query may take max_seeds_per_gram seeds for each of its grams, and for at least this many
# grams: 16 * 65536 ~ 10^6 seeds (the per-pair step's time and memory grow with its seeds,
# 1-3 us and ~370 bytes each). Ordinary texts take at most 1.5 a gram, 246 in all (PAN sets en
# and zh, 1,000 hosts + 4,000 background texts, seed 1); 2 * 10^5 characters of five words
# repeated at random take 19 a gram (831,000), one word repeated 4,000 times 4,000
SEED_FLOOR = 1 << 16
_T = TypeVar("_T")
_Meta = tuple[Any, int, list[int]]  # a streamed text's id, position and candidate sources
# the template keys of a run of texts and their counts in the documents before each
_Templates = tuple[TemplateBatch, npt.NDArray[np.int64]]
# a streamed batch's metas, its per-pair step's rows to come (None: no job) and its template
# keys with their counts
_Back = tuple[list[_Meta], Future[list[Any]] | None, _Templates]
_Row = tuple[tuple[int, int], int, tuple[int, int], float]  # a passage for picked_sources


@dataclass(frozen=True)
class Passage:
    """A passage of document ``id`` (``span``) that is also in ``source_id`` (``source_span``).

    Spans are ``[start, end)`` in code points of the texts as given. ``score`` is the share of
    the passage's word grams also found in the source passage (1.0: copied verbatim).
    ``position``/``source_position`` are the documents' places in the finder. ``template``:
    the passage is a template of the collection (:mod:`neardup.overlap.templates`); such
    passages are only reported with ``templates="keep"``. ``closest_*``: when the source
    reported is not the closest one (``sources="original"`` or ``"all"``), the closest
    source's id, its passage (``closest_span``, in that document), score and place.
    """

    id: Any
    span: tuple[int, int]
    source_id: Any
    source_span: tuple[int, int]
    score: float
    position: int
    source_position: int
    template: bool = False
    closest_id: Any = None
    closest_span: tuple[int, int] | None = None
    closest_score: float | None = None
    closest_position: int | None = None

    def row(self, template: bool = False) -> dict[str, Any]:
        """The passage as the surfaces write it (``neardup overlap``'s output row, a table's
        cell): ``closest_*`` name the closest source when it is not ``source_id`` (null
        otherwise: every row has the columns, for CSV and Parquet); ``template`` (asked for with
        ``--templates keep``) whether it is a template of the collection.

        >>> Passage("q", (0, 5), "s", (2, 7), 1.0, 1, 0).row()["chars"]
        5
        """
        out = {
            "id": self.id,
            "span": list(self.span),
            "source_id": self.source_id,
            "source_span": list(self.source_span),
            "score": self.score,
            "chars": self.span[1] - self.span[0],
            "closest_id": self.closest_id,
            "closest_span": None if self.closest_span is None else list(self.closest_span),
            "closest_score": self.closest_score,
        }
        if template:
            out["template"] = self.template
        return out

    def to_dict(self) -> dict[str, Any]:
        """The passage as a JSON-ready dict (spans as lists)."""
        d = asdict(self)
        d["span"], d["source_span"] = list(self.span), list(self.source_span)
        if self.closest_span is not None:
            d["closest_span"] = list(self.closest_span)
        return d


@dataclass(kw_only=True, eq=False, repr=False)  # the parameters, written once
class OverlapFinder(ReferenceMixin, FrozenParams):
    """Find passages a text shares with the texts added before it.

    Parameters (keyword-only, frozen; they make up :attr:`config_id`):
    ``ngram`` words per hashed gram (4; a Han character counts 2/3 of a word, so 6 of them);
    ``window`` winnowing window, in grams (4: any shared run of ``ngram + window - 1`` words
    leaves a seed); ``min_length`` shortest passage reported, in words on both sides (10;
    15 Han characters); ``gap`` largest distance in words between seeds of one passage (30);
    ``max_df`` grams indexed for more documents than this are skipped as boilerplate (50; a
    document counts once however often it repeats the gram);
    ``min_score`` passages whose score is below this are dropped (0.0); ``query_window`` the
    winnowing window of a query's look-ups, at most ``window`` (``None``: 2, or ``window`` when
    smaller; 1 looks up every gram, as before aligner 5: 1.5x the probes of 2, and a cost per
    document that grows more with the index; 4 looks up 0.6x the grams of 2 and misses more
    of the heavy rewrites; docs/OVERLAP.md "Cost"). Resolved: ``query_window_``.
    ``templates`` ``"drop"`` (default): passages that are templates of the indexed collection
    (bylines, datelines, quote headers, signatures, rows of figures, short common phrases:
    :mod:`neardup.overlap.templates`) are set aside, counted in :attr:`templates_set_aside`;
    ``"keep"``: reported, with ``template=True``. ``template_min_docs`` the earlier documents
    that must hold most of a passage's masked grams for it to be a template (10, half as many
    for the frame of a passage whose sides differ; higher sets fewer aside). ``sources``
    which sources a copied passage names
    (:func:`~neardup.overlap.pairs.source_rows`): ``"original"`` (default) its earliest source
    (input order, or ``find``'s timestamps), with the closest one beside it
    (:attr:`Passage.closest_id`) when that is another document; ``"best"`` the closest only;
    ``"all"`` every earlier document holding it, one row each, at most ``max_sources`` (16)
    per passage (the earliest and the closest kept; those left out counted in
    :attr:`sources_cut`).
    ``max_seeds_per_gram`` a text whose look-ups find more postings than this many per gram
    (and per gram of at least ``SEED_FLOOR`` grams: ~10^6 seeds) is over its seed budget: its
    per-pair step's work grows with them (16; a text of a few words repeated, or a part of a
    uuencoded file after the part before it, finds a number that grows with the square of its
    length). ``budget`` what then: ``"trim"`` (default) the text is looked up again without
    its grams that find more than ``max_seeds_per_gram`` postings (as ``max_df`` leaves out
    common grams; the work is bounded, the rest of the text still compared), counted in
    :attr:`over_budget_texts`; ``"refuse"`` :class:`~neardup.overlap.index.SeedBudgetError`
    (the service's 413). Neither is in :attr:`config_id` but ``max_seeds_per_gram`` when it
    decides what trimming leaves out (``budget="trim"``, other than 16: the ids of earlier
    references stay).

    The defaults of ``ngram``, ``min_length`` and ``gap`` were chosen on PAN-style sets (seed 1
    of ``benchmarks/bench_overlap.py``, checked on seed 2; docs/OVERLAP.md): 4/10 against 5/12
    raised heavy rewrites from 0.68 to 0.90 plagdet (English) at 0.02 less on light ones; gap
    30 against 20 raised heavy rewrites (English 0.85 -> 0.91, Chinese 0.45 -> 0.55, seed 1).
    """

    ngram: int = 4
    window: int = 4
    min_length: int = 10
    gap: int = 30
    max_df: int = 50
    min_score: float = 0.0
    query_window: int | None = None
    templates: str = "drop"
    template_min_docs: int = 10
    max_seeds_per_gram: int = 16
    sources: str = "original"
    max_sources: int = 16
    budget: str = "trim"

    def __post_init__(self) -> None:
        _check_sizes(self)
        _check_rules(self)
        _check_mode("budget", self.budget, BUDGET_MODES)
        self.min_score = float(self.min_score)
        given = self.query_window
        self.query_window_ = min(QUERY_WINDOW, self.window) if given is None else given
        self._start_state()
        self._freeze()

    def _start_state(self) -> None:
        """The state of an empty finder: the index, the texts and ids, recent documents
        prepared, the template counts and what was set aside."""
        self._sources_cut = 0
        self._trimmed = 0  # texts over their seed budget (budget="trim")
        self._trimmed_ids: list[Any] = []  # the first few of them
        self._index = GramIndex()
        self._texts: list[str] = []
        self._ids: list[Any] = []
        # recent documents prepared (forms.Form: a Prepared, or packed for the C kernels)
        self._cache: OrderedDict[int, Form] = OrderedDict()
        self._template_counts = TemplateCounts()
        self._aside = 0
        self._aside_examples: list[tuple[Passage, str]] = []
        self._aside_spans: deque[list[tuple[int, int]]] | None = None

    def run_params(self) -> dict[str, Any]:
        """:meth:`get_params` with the values that run (``query_window=None`` is its 2): what
        the config id hashes and what a refusal shows.

        >>> OverlapFinder().run_params()["query_window"]
        2
        """
        return {**self.get_params(), "query_window": self.query_window_}

    @property
    def config_id(self) -> str:
        """Short stable id of what is computed; carried by a saved reference.

        >>> OverlapFinder().config_id == OverlapFinder().config_id != OverlapFinder(gap=3).config_id
        True
        """
        body = {"tokenizer": TOKENIZER_VERSION, "aligner": ALIGNER_VERSION, **self.run_params()}
        del body["budget"]  # refusing: the passages are the same, or refused
        if self.budget == "refuse" or self.max_seeds_per_gram == 16:
            del body["max_seeds_per_gram"]  # a limit, or the trim of earlier ids
        blob = json.dumps(body, sort_keys=True, separators=(",", ":"))
        return "ov1-" + hashlib.sha256(blob.encode()).hexdigest()[:16]

    def __len__(self) -> int:
        """Documents indexed."""
        return len(self._texts)

    @property
    def sources_cut(self) -> int:
        """Sources left out so far by ``max_sources`` (``sources="all"``)."""
        return self._sources_cut

    @property
    def over_budget_texts(self) -> tuple[int, list[Any]]:
        """Texts over their seed budget looked up without their grams that find more than
        ``max_seeds_per_gram`` postings so far (``budget="trim"``), and the first few ids."""
        return self._trimmed, list(self._trimmed_ids)

    @property
    def templates_set_aside(self) -> tuple[int, list[tuple[Passage, str]]]:
        """Passages set aside as templates so far (``templates="drop"``) and the first few
        of them with their query text."""
        return self._aside, list(self._aside_examples)

    def record_template_spans(self, on: bool = True) -> deque[list[tuple[int, int]]]:
        """From now on (``on=False``: no more), the query spans of the passages each text
        sets aside as templates (``templates="drop"``): one list per text, appended in the
        order the texts' passages are returned, for the caller to pop (``--strip`` cuts
        templates with the copies)."""
        spans: deque[list[tuple[int, int]]] = deque()
        self._aside_spans = spans if on else None
        return spans

    def _templates_of(self, texts: list[str], prepared: list[Form], add: bool) -> _Templates:
        """The template keys of a run of texts, with their counts in the documents indexed
        before each text; with ``add`` the texts' keys are then counted."""
        batch = TemplateBatch(texts, [token_arrays(p) for p in prepared], self.ngram)
        return batch, self._template_counts.count(batch, add=add)

    def _set_aside(self, found: list[list[Passage]], templates: _Templates) -> list[list[Passage]]:
        """The passages of a run of texts (``found[i]``: text ``i`` of ``templates``) with the
        template rule applied (:func:`apply_templates`); those set aside are counted, the
        first few kept as examples."""
        kept, aside = apply_templates(
            found,
            *templates,
            self._source_text,
            self.template_min_docs,
            self.min_length,
            self.templates,
        )
        self._aside += len(aside)
        if self._aside_spans is not None:
            spans: list[list[tuple[int, int]]] = [[] for _ in found]
            for i, p in aside:
                spans[i].append(p.span)
            self._aside_spans.extend(spans)
        for i, p in aside[: EXAMPLES - len(self._aside_examples)]:
            text = templates[0].texts[i][p.span[0] : p.span[1]]
            self._aside_examples.append((replace(p, template=True), text))
        return kept

    @property
    def _pair_params(self) -> PairParams:
        return PairParams(ngram=self.ngram, gap=self.gap, min_length=self.min_length)

    def _prepare_any(self, text: str) -> Form:
        """The packed arrays when the C kernels run (no views made), else a Prepared."""
        packed = self._index.packed and overlap_kernels() is not None
        return prepare_form(text, self._pair_params, packed)

    def _source(self, position: int) -> Prepared:
        return as_prepared(self._texts[position], self._cached(position))

    def _cached(self, position: int) -> Form:
        """The cached source ``position``, prepared again when it was evicted."""
        hit = self._cache.get(position)
        if hit is None:
            hit = self._prepare_any(self._texts[position])
            self._remember(position, hit)
        else:
            self._cache.move_to_end(position)
        return hit

    def _source_text(self, p: Passage) -> str:
        return self._texts[p.source_position][p.source_span[0] : p.source_span[1]]

    def text(self, position: int) -> str:
        """The text of the indexed document at ``position``."""
        return self._texts[position]

    def id_of(self, position: int) -> Any:
        """The id of the indexed document at ``position`` (its position when none was given)."""
        return self._ids[position]

    def query(self, text: str, id: Any = None) -> list[Passage]:
        """Passages of ``text`` found in the indexed documents (``text`` is not added).

        ``id`` names the text in the passages (default: the position it would get).
        """
        prepared = self._prepare_any(text)
        ident = len(self._texts) if id is None else id
        templates = self._templates_of([text], [prepared], False)
        return self._set_aside([self._query(prepared, ident, len(self._texts))], templates)[0]

    def add(self, text: str, id: Any = None) -> list[Passage]:
        """Query ``text`` against the documents before it, then index it; returns the passages.

        ``id`` defaults to the document's position (0, 1, ...).
        """
        prepared = self._prepare_any(text)
        position = len(self._texts)
        ident = position if id is None else id
        templates = self._templates_of([text], [prepared], True)
        found = self._query(prepared, ident, position)
        self._keep(position, prepared, text, ident)
        return self._set_aside([found], templates)[0]

    def _keep(self, position: int, prepared: Form, text: str, ident: Any) -> None:
        """Index document ``position`` (its winnowed grams) and keep its text and id."""
        post(self._index, position, prepared, self.window)
        self._texts.append(text)
        self._ids.append(ident)
        # a new document is the likeliest source of the next ones: keep its tokens
        self._remember(position, prepared)

    def _remember(self, position: int, prepared: Form) -> None:
        self._cache[position] = prepared
        if len(self._cache) > _CACHE:
            self._cache.popitem(last=False)

    def find(
        self,
        texts: Iterable[str],
        ids: Sequence[Any] | None = None,
        timestamps: Sequence[float] | None = None,
    ) -> list[Passage]:
        """Add every text (in ``timestamps`` order when given, ties in input order) and return
        all passages found; the source of a passage is always the earlier document.

        >>> texts = ["a b c d e f g h i j k l m n", "x a b c d e f g h i j k l m n"]
        >>> OverlapFinder().find(texts)[0].span
        (2, 29)
        """
        texts = list(texts)
        if ids is not None and len(ids) != len(texts):
            raise ValueError(f"got {len(ids)} ids for {len(texts)} texts")
        order: Iterable[int] = range(len(texts))
        if timestamps is not None:
            if len(timestamps) != len(texts):
                raise ValueError(f"got {len(timestamps)} timestamps for {len(texts)} texts")
            order = sorted(order, key=lambda i: (timestamps[i], i))
        out: list[Passage] = []
        for got in self.stream((texts[i], i if ids is None else ids[i]) for i in order):
            out += got
        return out

    def stream(
        self, items: Iterable[tuple[str, Any]], *, add: bool = True, batch: int = 512
    ) -> Iterator[list[Passage]]:
        """The passages of each ``(text, id)`` of ``items`` in turn, one list per text, as
        :meth:`add` (or :meth:`query`, with ``add=False``) returns them. With the C kernels
        ``batch`` texts at a time are tokenised, looked up and indexed on a front thread (two
        C calls without the GIL, :meth:`_front`) and their per-pair step runs on a back thread
        (one C call without the GIL), while this thread reads the next texts and makes the
        passages of the last ones: the same passages in less wall time on two cores (a C call
        a text would wait for the GIL after each). Texts are read (and added) up to two
        batches ahead of the lists returned.

        >>> f = OverlapFinder()
        >>> texts = ["a b c d e f g h i j k l m n", "x a b c d e f g h i j k l m n"]
        >>> [[p.span for p in got] for got in f.stream((t, None) for t in texts)]
        [[], [(2, 29)]]
        """
        if overlap_kernels() is None or not self._index.packed:
            for text, ident in items:
                yield self.add(text, ident) if add else self.query(text, ident)
            return
        back = ThreadPoolExecutor(1, thread_name_prefix="neardup-overlap-back")
        # the front thread stops first: its last batch still hands its step to the back one
        with back, ThreadPoolExecutor(1, thread_name_prefix="neardup-overlap-front") as front:
            pending: deque[Future[_Back]] = deque()
            texts: list[str] = []
            idents: list[Any] = []
            failed: list[bool] = []  # a batch failed (refused): the next ones add nothing
            for text, ident in items:
                if not isinstance(text, str):
                    raise TypeError(f"text must be a str, got {type(text).__name__}")
                texts.append(text)
                idents.append(ident)
                if len(texts) >= batch:
                    pending.append(front.submit(self._front, texts, idents, add, back, failed))
                    texts, idents = [], []
                    while len(pending) > 1 or (pending and pending[0].done()):
                        yield from self._stream_out(pending.popleft())
            if texts:
                pending.append(front.submit(self._front, texts, idents, add, back, failed))
            while pending:
                yield from self._stream_out(pending.popleft())

    def _front(
        self,
        texts: list[str],
        idents: list[Any],
        add: bool,
        back: ThreadPoolExecutor,
        failed: list[bool],
    ) -> _Back:
        """:meth:`add` (or :meth:`query`) of a batch of texts up to the per-pair step (the
        stream's front thread): the texts prepared, looked up and indexed in two C calls
        without the GIL (the main thread's Python runs meanwhile), their ids and sources kept,
        the per-pair step sent to the ``back`` thread (C, without the GIL), the template keys
        counted in stream order."""
        if failed:
            raise RuntimeError("an earlier batch of the stream failed")
        try:
            return self._front_batch(texts, idents, add, back)
        except BaseException:
            failed.append(True)  # the batches read after it add nothing
            raise

    def _front_batch(
        self, texts: list[str], idents: list[Any], add: bool, back: ThreadPoolExecutor
    ) -> _Back:
        """:meth:`_front` of one batch."""
        prepared = prepare_many(texts, self._pair_params)
        position = len(self._texts)
        budget = Budget(self.max_seeds_per_gram, SEED_FLOOR, self.budget == "trim")
        look = Look(self.max_df, 2, self.query_window_)
        window = self.window if add else None
        looked, stop, over = self._index.look_post_many(prepared, position, window, look, budget)
        metas: list[_Meta] = []
        for k, (d, _, _, trimmed) in enumerate(looked):
            at = position + k if add else position
            ident = at if idents[k] is None else idents[k]
            if trimmed:
                self._trim_noted(ident)
            if add:
                self._texts.append(texts[k])
                self._ids.append(ident)
                self._remember(at, prepared[k])
            metas.append((ident, at, memoryview(d).cast("q").tolist() if d else []))
        if stop < len(texts):
            at = position + stop if add else position
            ident = at if idents[stop] is None else idents[stop]
            grams = gram_count(prepared[stop])
            raise over_budget(ident, grams, over, self.max_seeds_per_gram)
        sources = self._sources_many([m[2] for m in metas])
        jobs = [
            (prepared[k], sources[k], seeds, bounds)
            for k, (_, bounds, seeds, _) in enumerate(looked)
            if metas[k][2]
        ]
        pairs = back.submit(_backend.OV.pairs_many, jobs, *self._kernel_params) if jobs else None
        return metas, pairs, self._templates_of(texts, list(prepared), add)

    def _stream_out(self, front: Future[_Back]) -> Iterator[list[Passage]]:
        metas, pairs, templates = front.result()
        rows = [] if pairs is None else pairs.result()
        found = iter(rows)
        got = [self._passages(next(found), d, i, p) if d else [] for i, p, d in metas]
        yield from self._set_aside(got, templates)

    def _query(self, prepared: Form, ident: Any, position: int) -> list[Passage]:
        # a source needs 2 seeds: one gram is shorter than any passage we report. Only the
        # query's winnowed grams are looked up: a window of grams it shares with a source has
        # its smallest hash kept (and indexed) on both sides
        look = (self.max_df, 2, self.query_window_)
        docs, bounds, seeds = self._budgeted(
            ident, prepared, lambda m, c: look_up(self._index, prepared, *look, m, c)
        )
        if not docs:
            return []
        if overlap_kernels() is None:
            reference = reference_form(prepared)
            return self._query_reference(reference, ident, position, seeds, docs, bounds)
        query = as_packed(prepared)
        found = _backend.OV.pairs(query, self._sources(docs), seeds, bounds, *self._kernel_params)
        return self._passages(found, docs, ident, position)

    def _budgeted(self, ident: Any, prepared: Form, look: Callable[[int, int], _T]) -> _T:
        """``look(max_seeds, cap)`` with this text's seed budget; over it (``budget``),
        ``look`` again leaving out the grams with more than ``max_seeds_per_gram`` postings,
        or a :class:`SeedBudgetError` naming the text, the numbers and the parameter."""
        grams = gram_count(prepared)
        per_gram = self.max_seeds_per_gram
        try:
            return look(seed_budget(per_gram, grams), 0)
        except SeedBudgetError as exc:
            if self.budget == "refuse":
                raise over_budget(ident, grams, exc.seeds, per_gram) from None
        self._trim_noted(ident)
        # at most per_gram seeds for each looked-up gram (no more than the text's grams): the
        # work stays within the budget, with no second refusal
        return look(0, per_gram)

    def _trim_noted(self, ident: Any) -> None:
        """Count text ``ident`` as looked up without its grams over ``max_seeds_per_gram``."""
        self._trimmed += 1
        if len(self._trimmed_ids) < EXAMPLES:
            self._trimmed_ids.append(ident)

    @property
    def _kernel_params(self) -> tuple[int, int, int, int, int]:
        return kernel_params(self._pair_params)

    def _sources(self, docs: list[int]) -> list[bytes]:
        """The packed source documents ``docs`` (C kernel). A hit is not moved to the end of
        the cache (first in, first out): an evicted source is prepared again (same bytes)."""
        get, cached = self._cache.get, self._cached
        found = [get(d) or cached(d) for d in docs]
        return [as_packed(x) for x in found]

    def _sources_many(self, docs: list[list[int]]) -> list[list[bytes]]:
        """:meth:`_sources` of each query's ``docs`` (a streamed batch): the evicted sources
        prepared again in one call without the GIL (same bytes), then cached."""
        get, cache = self._cache.get, self._cache
        missing = [d for ds in docs for d in ds if d not in cache]
        fresh = {}
        if missing:
            again = dict.fromkeys(missing)
            texts = [self._texts[d] for d in again]
            fresh = dict(zip(again, prepare_many(texts, self._pair_params), strict=True))
        out = [[as_packed(get(d) or fresh[d]) for d in ds] for ds in docs]
        for d, form in fresh.items():
            self._remember(d, form)
        return out

    def _passages(
        self, found: Sequence[tuple[int, ...]], docs: list[int], ident: Any, position: int
    ) -> list[Passage]:
        """The C kernel's rows ``found`` (source index into ``docs``, spans, score) as the
        passages of the query ``ident`` at ``position``, in their reported order."""
        rows: list[_Row] = []
        min_score = self.min_score
        for j, a, b, c, d, num, den in found:
            s = round(num / den, 4) if den else 0.0  # pairs.score, inlined
            if s >= min_score:
                rows.append(((a, b), docs[j], (c, d), s))
        # only the passages reported are made (Reuters: 15,766 of 58,163 rows in queries with
        # more than one), each naming its closest source as it is made
        picked, cut = picked_sources(rows, self.sources, self.max_sources)
        self._sources_cut += cut
        ids, out = self._ids, []
        for i, k in picked:
            span, doc, source_span, s = rows[i]
            if k is None:
                out.append(Passage(ident, span, ids[doc], source_span, s, position, doc))
                continue
            _, near, near_span, near_score = rows[k]  # the closest, as _with_closest names it
            p = (ident, span, ids[doc], source_span, s, position, doc, False)
            out.append(Passage(*p, ids[near], near_span, near_score, near))
        return out

    def _cross_sourced(self, found: list[Passage]) -> list[Passage]:
        kept, cut = cross_sourced(found, self.sources, self.max_sources)
        self._sources_cut += cut
        return kept

    def _query_reference(
        self,
        prepared: Prepared,
        ident: Any,
        position: int,
        seeds: npt.NDArray[np.int64],
        docs: list[int],
        bounds: npt.NDArray[np.int64],
    ) -> list[Passage]:
        """:meth:`_query` without the C kernel: :func:`pair_passages` per source."""
        out: list[Passage] = []
        for j, doc in enumerate(docs):
            rows = seeds[bounds[j] : bounds[j + 1]]
            for f in pair_passages(prepared, self._source(doc), rows, self._pair_params):
                if f.score >= self.min_score:
                    out.append(
                        Passage(
                            ident, f.span, self._ids[doc], f.source_span, f.score, position, doc
                        )
                    )
        return self._cross_sourced(out)


def _check_sizes(f: OverlapFinder) -> None:
    """:class:`OverlapFinder`'s integer parameters, or a ValueError naming the bad one."""
    for name in ("ngram", "window", "min_length"):
        value = getattr(f, name)
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if not isinstance(f.gap, int) or f.gap < 0:
        raise ValueError(f"gap must be an integer >= 0, got {f.gap!r}")
    if not isinstance(f.max_df, int) or f.max_df < 1:
        raise ValueError(f"max_df must be an integer >= 1, got {f.max_df!r}")
    seeds = f.max_seeds_per_gram
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"max_seeds_per_gram must be an integer >= 1, got {seeds!r}")


def _check_rules(f: OverlapFinder) -> None:
    """:class:`OverlapFinder`'s score floor, look-up window and rule choices, or a ValueError
    naming the bad one."""
    if not 0.0 <= float(f.min_score) <= 1.0:
        raise ValueError(f"min_score must be in [0, 1], got {f.min_score!r}")
    window, query_window = f.window, f.query_window
    if query_window is not None and (
        not isinstance(query_window, int) or not 1 <= query_window <= window
    ):
        raise ValueError(
            f"query_window must be an integer in [1, window={window}] (a shared window of "
            f"grams must hold a looked-up gram the source posted), got {query_window!r}"
        )
    _check_mode("templates", f.templates, TEMPLATE_MODES)
    why = "a passage held by one other document is a copy, not a template"
    _check_at_least_two("template_min_docs", f.template_min_docs, why)
    _check_mode("sources", f.sources, SOURCE_MODES)
    _check_at_least_two("max_sources", f.max_sources, "the earliest source and the closest")


def _check_mode(name: str, value: str, modes: tuple[str, ...]) -> None:
    """A ValueError naming ``name`` unless ``value`` is one of ``modes``."""
    if value not in modes:
        raise ValueError(f"{name} must be one of {modes}, got {value!r}")


def _check_at_least_two(name: str, value: int, why: str) -> None:
    """A ValueError naming ``name`` (and ``why`` 2 is its floor) unless ``value`` is an
    integer >= 2."""
    if not isinstance(value, int) or value < 2:
        raise ValueError(f"{name} must be an integer >= 2 ({why}), got {value!r}")


def seed_budget(per_gram: int, grams: int) -> int:
    """The most seeds a text of ``grams`` grams may take (``max_seeds_per_gram``: ``per_gram``).

    >>> seed_budget(16, 10), seed_budget(16, 10**5)
    (1048576, 1600000)
    """
    return per_gram * max(grams, SEED_FLOOR)


def over_budget(ident: Any, grams: int, seeds: int, per_gram: int) -> SeedBudgetError:
    """The refusal of text ``ident`` (``grams`` grams) whose look-ups found ``seeds``
    postings, over :func:`seed_budget` (the local and the Spark engine give the same)."""
    limit = seed_budget(per_gram, grams)
    return SeedBudgetError(
        seeds,
        limit,
        f"text {ident!r}: its {grams} grams find {seeds} postings in the indexed texts, more "
        f"than max_seeds_per_gram={per_gram} a gram allows ({limit}; a text of a few words "
        "repeated finds a number that grows with the square of its length, and so does the "
        "work): shorten the text, raise max_seeds_per_gram, or let budget='trim' look it up "
        "without its grams over the bound",
    )


def cross_sourced(
    found: list[Passage], sources: str = "original", max_sources: int = 16
) -> tuple[list[Passage], int]:
    """One query's passages with the sources ``sources`` names
    (:func:`~neardup.overlap.pairs.source_rows`), in span order (before the template rule),
    and the number of sources ``max_sources`` left out."""
    rows = [(p.span, p.source_position, p.source_span, p.score) for p in found]
    picked, cut = picked_sources(rows, sources, max_sources)
    return [found[i] if c is None else _with_closest(found[i], found[c]) for i, c in picked], cut


def picked_sources(
    rows: Sequence[_Row], sources: str = "original", max_sources: int = 16
) -> tuple[list[tuple[int, int | None]], int]:
    """:func:`cross_sourced` on one query's passages as rows (span, source position, source
    span, score): the rows reported, each with its closest source's row (None: it is the
    closest), in span order, and the number of sources left out.

    >>> picked_sources([((0, 9), 4, (0, 9), 1.0), ((0, 9), 1, (5, 14), 0.9)])
    ([(1, 0)], 0)
    """
    # the engines find them in other orders: ties alike
    order = sorted(range(len(rows)), key=lambda i: rows[i][:3])
    if len(rows) <= 1:
        return [(i, None) for i in order], 0
    found = [(rows[i][0][0], rows[i][0][1], rows[i][1], rows[i][3]) for i in order]
    picked, cut = source_rows(found, sources, max_sources)
    out = [(order[i], None if c is None else order[c]) for i, c in picked]
    out.sort(key=lambda ic: rows[ic[0]][:3])
    return out, cut


def _with_closest(p: Passage, closest: Passage) -> Passage:
    """``p`` naming ``closest``'s source as its closest one."""
    return replace(
        p,
        closest_id=closest.source_id,
        closest_span=closest.source_span,
        closest_score=closest.score,
        closest_position=closest.source_position,
    )


def apply_templates(
    found: list[list[Passage]],
    batch: TemplateBatch,
    df: npt.NDArray[np.int64],
    source_text: Callable[[Passage], str],
    min_docs: int,
    min_length: int,
    templates: str,
) -> tuple[list[list[Passage]], list[tuple[int, Passage]]]:
    """The template rule on the passages of a run of texts (``found[i]``: those of text
    ``i`` of ``batch``; ``df``: the counts of its keys; ``source_text``: a passage's source
    passage; ``min_docs``, ``min_length``: the finder's;
    :func:`~neardup.overlap.templates.template_flags`): the passages as reported
    (templates flagged with ``templates="keep"``, left out with ``"drop"``) and those set
    aside, with their text's index."""
    rows = [(i, *p.span, source_text(p), p.score) for i, got in enumerate(found) for p in got]
    flags = iter(template_flags(batch, df, rows, min_docs, min_length))
    kept: list[list[Passage]] = []
    aside: list[tuple[int, Passage]] = []
    for i, got in enumerate(found):
        out = []
        for p in got:
            if not next(flags):
                out.append(p)
            elif templates == "keep":
                out.append(replace(p, template=True))
            else:
                aside.append((i, p))
        kept.append(out)
    return kept, aside
