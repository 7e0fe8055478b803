"""One module per tab of the Space: each builds its layout and wires its own callbacks."""
