"""Mechanism (paper section 4.4): per-head attention scores and circuit patching on any model."""
