"""Special token ids, fixed project-wide.

The joint sentencepiece vocabulary is trained with these ids, and the models, batching and
decoding rely on them (padding masks, the decoder's first input, the end of a hypothesis).
"""

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3
