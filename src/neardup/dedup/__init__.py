"""Dedup: decisions for documents (unique / duplicate / exact_duplicate / empty) and clusters."""

from __future__ import annotations

from neardup.dedup.candidates import CandidateIndex, HammingCandidates
from neardup.dedup.clusters import cluster_sizes, connected_components, largest_clusters
from neardup.dedup.decisions import STATUS_NAMES, Decision, Decisions, PreparedBatch
from neardup.dedup.dedup_state import DedupState
from neardup.dedup.exact import exact_keys
from neardup.dedup.greedy import Ledger, decide_in_order
from neardup.dedup.pipeline import (
    KEEP_POLICIES,
    Deduplicator,
    KeepPolicy,
    Verifier,
    dedup_batch,
    from_state_columns,
    trace,
)

__all__ = [
    "KEEP_POLICIES",
    "STATUS_NAMES",
    "CandidateIndex",
    "Decision",
    "Decisions",
    "DedupState",
    "Deduplicator",
    "HammingCandidates",
    "KeepPolicy",
    "Ledger",
    "PreparedBatch",
    "Verifier",
    "cluster_sizes",
    "connected_components",
    "decide_in_order",
    "dedup_batch",
    "exact_keys",
    "from_state_columns",
    "largest_clusters",
    "trace",
]
