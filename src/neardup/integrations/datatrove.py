"""datatrove pipeline steps: :class:`NeardupDedup` (drop near-duplicates, or tag them in the
metadata) and :class:`NeardupStrip` (remove the passages an earlier document already holds).
Needs ``pip install 'neardup[datatrove]'``.

Both decide each document against the documents before it *in the same task*: a datatrove
executor with ``tasks=N`` hands each task one shard, and a task cannot see another's documents,
so duplicates (or copies) across shards would be kept. Run these steps with ``tasks=1`` (one
task; the steps before them may still be sharded in an earlier pipeline), or pass
``per_task=True`` to dedup each shard on its own on purpose.

datatrove's readers leave out documents whose text is empty (``neardup dedup`` marks them
``empty``); an empty text never matches, so the other decisions are those of the CLI.

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from neardup.integrations.datatrove import NeardupDedup

    LocalPipelineExecutor(
        [JsonlReader("in/"), NeardupDedup(threshold=0.6), JsonlWriter("out/")], tasks=1
    ).run()
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from itertools import islice
from typing import Any

from neardup._extras import require
from neardup.integrations.tables import DEDUP_COLUMNS, DedupBatches
from neardup.overlap import OverlapFinder
from neardup.overlap.strip import (
    STRIP_TEMPLATES,
    cuts_templates,
    split_templates,
    strip_counted,
)

__all__ = ["NeardupDedup", "NeardupStrip"]

_base = require("datatrove.pipeline.base", "datatrove", "neardup's datatrove steps")
PipelineStep: Any = _base.PipelineStep
_BATCH = 1024  # documents decided at a time (the CLI's chunk)


def _one_task(step: Any, world_size: int, per_task: bool) -> None:
    if world_size > 1 and not per_task:
        raise ValueError(
            f"{type(step).__name__} decides each document against the ones before it in its "
            f"task; with {world_size} tasks each sees only its shard (copies across shards "
            "kept): run it with tasks=1, or pass per_task=True to work per shard on purpose"
        )


class NeardupDedup(PipelineStep):  # type: ignore[misc]
    """Near-duplicate documents dropped (``drop=True``, the default) or kept and tagged: the
    decision fields of ``neardup dedup`` (``status``, ``duplicate_of``, ``cluster_id``,
    ``distance``, ``similarity``) under ``metadata["neardup"]``. ``time``: a metadata field
    holding the timestamp (for ``window``); ``options`` are the
    :class:`~neardup.Deduplicator`'s. Documents keep their order; the decisions equal the
    CLI's on the same documents in the same order.
    """

    name = "neardup dedup"
    type = "🫂 - DEDUP"

    def __init__(
        self,
        *,
        drop: bool = True,
        time: str | None = None,
        per_task: bool = False,
        **options: Any,
    ) -> None:
        super().__init__()
        self.drop = drop
        self.time = time
        self.per_task = per_task
        self.options = options
        DedupBatches(time=time, **options)  # bad options fail when the pipeline is built

    def run(self, data: Any, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """The documents of ``data`` that are kept (all of them, tagged, with ``drop=False``)."""
        _one_task(self, world_size, self.per_task)
        batches = DedupBatches(time=self.time, **self.options)
        docs = iter(data or ())
        while chunk := list(islice(docs, _BATCH)):
            batch: dict[str, list[Any]] = {
                "text": [d.text for d in chunk],
                "id": [d.id for d in chunk],
            }
            if self.time is not None:
                batch[self.time] = [d.metadata.get(self.time) for d in chunk]
            fields = batches(batch)
            for i, doc in enumerate(chunk):
                status = fields["status"][i]
                self.stat_update(status)
                if self.drop and fields["duplicate_of"][i] is not None:
                    continue
                if not self.drop:
                    doc.metadata["neardup"] = {n: fields[n][i] for n in DEDUP_COLUMNS}
                yield doc


class NeardupStrip(PipelineStep):  # type: ignore[misc]
    """Each document with the passages an earlier document already holds removed (the spans
    ``neardup overlap`` reports on the later document, merged; stretches shorter than
    ``min_length`` characters stay), and ``metadata["stripped_chars"]``: how many characters
    went: what ``neardup overlap`` reports goes. With ``strip_templates`` (``--strip-templates``)
    the templates it sets aside go too, and so do those it reports (a ``reference`` saved with
    ``--templates keep``); their characters are then counted apart in
    ``metadata["stripped_template_chars"]``. ``reference``: a saved reference directory
    (``neardup overlap --save-reference``); the documents are then checked against it only
    (``--against``). ``options`` are the
    :class:`~neardup.overlap.OverlapFinder`'s (``templates="keep"`` among them: the finder's,
    as ``overlap_table``'s ``strip_templates`` beside its ``templates``). Equals ``neardup
    overlap --strip`` on the same documents in the same order.
    """

    name = "neardup strip"
    type = "🫂 - DEDUP"

    def __init__(
        self,
        *,
        min_length: int = 0,
        strip_templates: bool = STRIP_TEMPLATES,
        reference: str | None = None,
        per_task: bool = False,
        **options: Any,
    ) -> None:
        super().__init__()
        if not isinstance(min_length, int) or min_length < 0:
            raise ValueError(f"min_length must be an integer >= 0 characters, got {min_length!r}")
        self.min_length = min_length
        self.strip_templates = strip_templates
        self.reference = reference
        self.per_task = per_task
        self.options = options
        if isinstance(options.get("templates"), bool):  # this step's switch before session 17
            raise ValueError(
                "templates= is the finder's option ('drop' or 'keep'); to cut templates, "
                f"pass strip_templates={options['templates']}"
            )
        OverlapFinder(**options)  # bad options fail when the pipeline is built

    def run(self, data: Any, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """The documents of ``data``, their copied passages removed."""
        _one_task(self, world_size, self.per_task)
        finder = OverlapFinder(**self.options)
        if self.reference is not None:  # its saved options, or these when given (checked)
            finder = OverlapFinder.load(self.reference, finder if self.options else None)
        pending: deque[Any] = deque()  # documents read ahead by the finder's stream
        cut = cuts_templates(self.strip_templates, finder.templates)
        aside = finder.record_template_spans() if cut else None

        def items() -> Iterator[tuple[str, Any]]:
            for doc in data or ():
                pending.append(doc)
                yield doc.text, doc.id

        for got in finder.stream(items(), add=self.reference is None):
            doc = pending.popleft()
            copies, templates = split_templates(got, None if aside is None else aside.popleft())
            doc.text, removed, of_templates = strip_counted(
                doc.text, copies, templates, self.min_length
            )
            if of_templates is not None:
                doc.metadata["stripped_template_chars"] = of_templates
            doc.metadata["stripped_chars"] = removed
            self.stat_update("stripped_chars", value=removed)
            yield doc
