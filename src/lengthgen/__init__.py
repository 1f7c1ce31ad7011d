"""lengthgen: do transformers' length-generalisation limits survive pretraining? (arXiv 2505.21785)"""

__version__ = "0.1.0"
