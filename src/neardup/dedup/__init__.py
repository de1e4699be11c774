"""Dedup: decisions for documents (unique / duplicate / exact_duplicate / empty) and clusters."""

from __future__ import annotations

from neardup.dedup.candidates import CandidateIndex, HammingCandidates
from neardup.dedup.clusters import cluster_sizes, connected_components, largest_clusters
from neardup.dedup.exact import exact_keys
from neardup.dedup.greedy import Ledger, decide_in_order
from neardup.dedup.pipeline import KEEP_POLICIES, Deduplicator, KeepPolicy, Verifier, dedup_batch
from neardup.dedup.state import STATUS_NAMES, Decision, Decisions

__all__ = [
    "KEEP_POLICIES",
    "STATUS_NAMES",
    "CandidateIndex",
    "Decision",
    "Decisions",
    "Deduplicator",
    "HammingCandidates",
    "KeepPolicy",
    "Ledger",
    "Verifier",
    "cluster_sizes",
    "connected_components",
    "decide_in_order",
    "dedup_batch",
    "exact_keys",
    "largest_clusters",
]
