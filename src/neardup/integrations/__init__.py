"""Surfaces that meet users where their data is: in-memory tables (:mod:`.tables`) and a
datatrove pipeline step (:mod:`.datatrove`). They call the products (dedup, overlap) and decide
nothing themselves; the products never import them."""
