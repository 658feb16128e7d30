"""What goes into and out of a model, shared by training, decoding and the analyses:
checkpoints (save, load, average), subword ids, source feature files and the padded
batches built from them. Below ``train`` and ``decode``, above ``models``."""
