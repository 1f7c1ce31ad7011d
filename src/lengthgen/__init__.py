"""lengthgen: do transformers' length-generalisation limits survive pretraining? (Jobanputra, Veitsman, et al.,
NeurIPS 2025)"""

__version__ = "0.1.0"
