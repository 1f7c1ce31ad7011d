"""Models: the registry of pretrained ones, the builders of the ones this workflow initialises,
their tokenizers, and how models are stored and identified."""
