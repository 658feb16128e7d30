"""Evaluation: sacreBLEU/chrF scores, results tables, training-curve plots.

Submodules (imported on demand; pandas and matplotlib are only loaded when needed):

* :mod:`wordorder.evaluate.scores` - ``score_translations``, ``write_scores``,
  ``BLEU_TOKENIZER_BY_LANG``.
* :mod:`wordorder.evaluate.tables` - ``collect_scores``, ``results_table``.
* :mod:`wordorder.evaluate.table_render` - ``write_table`` (CSV, Markdown, LaTeX).
* :mod:`wordorder.evaluate.plots` - ``plot_training_curves``.
"""
