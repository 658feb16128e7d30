"""Word alignment: eflomal in both directions, symmetrization, Pharaoh I/O, AER."""
