"""Evaluation: sacreBLEU/chrF scores, results tables, training-curve plots.

Submodules (imported on demand; pandas and matplotlib are only loaded when needed):

* :mod:`wordorder.evaluate.scores` - ``score_translations``, ``write_scores``,
  ``BLEU_TOKENIZER_BY_LANG``.
* :mod:`wordorder.evaluate.tables` - ``collect_scores``, ``results_table``, ``write_table``.
* :mod:`wordorder.evaluate.plots` - ``plot_training_curves``.
"""
