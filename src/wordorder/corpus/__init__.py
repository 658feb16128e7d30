"""Corpus preparation: fetching sources, cleaning by length, and deterministic splits.

- :mod:`wordorder.corpus.sources`: :func:`~wordorder.corpus.sources.fetch_source` turns one
  source definition from the config into two line-aligned raw text files;
- :mod:`wordorder.corpus.clean`: length and ratio filtering on tokenized lines;
- :mod:`wordorder.corpus.split`: deterministic random dev/test holdouts;
- :mod:`wordorder.corpus.runner`: the ``split``/``select`` pipeline steps built on them.
"""
