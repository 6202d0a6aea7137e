"""The matter's chronology: every date written on its evidence pages, in date order, with the words around it.

Modules: ``selectors`` (:func:`~matters.chronology.selectors.matter_chronology`, the chronology as data, for the
page and for the stages that offer it to a model), ``forms`` (the filter by exhibit and date span), ``views`` and
``urls`` (its page, below ``matters/<matter_id>/chronology/``).
"""
