"""What the corpus experiment reads of the in-context stage's prediction files.

Its data files depend on the task, length and seed, never on the model, and the corpus models share
one tokenizer and kind (so one set of prompt variants): (task, bin, seed, variant, example) names
the same prompt for each of them, and forward (UF) and backward (UB) copy share their inputs.
"""

COLUMNS = ["model", "task", "bin", "seed", "variant", "example", "tf_symbol_accuracy"]  # read of each prediction file
