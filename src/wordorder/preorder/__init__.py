"""Preordering: permutations of the source words into target-language order.

Gold orders from alignments, the top-down BTG preorderer (Nakagawa 2015), the recursive-NN
preorderer (Kawara et al. 2018), and their evaluation (Kendall's tau, fuzzy reordering score).
A permutation ``perm`` of an n-word sentence is an int array with ``reordered[k] = src[perm[k]]``.
"""
