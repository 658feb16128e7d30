"""Source syntax: parser backends, CoNLL-U, syntax-distance masks, subword
projection, binary trees."""
