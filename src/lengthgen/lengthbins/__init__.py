"""Length-bin evaluation and tables for any trained model (the from-scratch and fine-tuned stages)."""
