"""Adapter: the figures of one stage, drawn from its tables (PNG and PDF)."""
from lengthgen.records.files import read_frame
from lengthgen.results import figures
from lengthgen.runtime import start_job

start_job(snakemake)

rule, inputs, outputs = snakemake.rule, snakemake.input, snakemake.output


def stem(path):
    return str(path)[: -len(".png")]


if rule == "figure_scratch":
    figures.save(figures.accuracy_by_bin(read_frame(inputs.table), "From scratch"), stem(outputs.bins))
    figures.save(figures.accuracy_by_length(read_frame(inputs.by_length), "From scratch"), stem(outputs.by_length))
elif rule == "figure_icl":
    table = read_frame(inputs.table)
    figures.save(figures.mirror_bars(table, "accuracy"), stem(outputs.mirror))
    figures.save(figures.mirror_bars(table, "tf_symbol_accuracy"), stem(outputs.teacher))
elif rule == "figure_finetune":
    figures.save(figures.accuracy_by_bin(read_frame(inputs.table), "Fine-tuned"), stem(outputs.bins))
elif rule == "figure_finetune_curves":
    from lengthgen.finetune.curves import read_learning_curves

    figures.save(figures.learning_curves(read_learning_curves(inputs.histories)), stem(outputs.curves))
elif rule == "figure_comparison":
    figures.save(figures.comparison(read_frame(inputs.table)), stem(outputs.comparison))
elif rule == "figure_mechanism":
    figures.save(figures.head_maps(read_frame(inputs.heads)), stem(outputs.heads))
    figures.save(figures.patching_bars(read_frame(inputs.patching)), stem(outputs.patching))
elif rule == "figure_corpora":
    from lengthgen.records.tables import read_provenance

    summaries = iter(inputs)  # each corpus's summaries in turn, one per pretraining seed
    histories = {corpus: [read_provenance(next(summaries))["history"] for _ in range(count)]
                 for corpus, count in snakemake.params.corpora.items()}
    figures.save(figures.pretraining_history(histories), stem(outputs.history))
elif rule == "figure_realistic":
    figures.save(figures.realistic_bars(read_frame(inputs.table)), stem(outputs.realistic))
else:
    raise ValueError(f"no figures for rule {rule}")
