"""wordorder: a Snakemake pipeline for research on word order in neural machine translation."""

__version__ = "0.1.0"
