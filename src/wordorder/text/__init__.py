"""Text processing: normalisation, tokenizers per language, subword models."""
