# lengthgen: the experiments of "Born a Transformer -- Always a Transformer?" (arXiv 2505.21785)
# as one workflow. Grid axes are path wildcards; each rule sees only its own config subsection.
import os

from snakemake.utils import min_version

min_version("9.0")


# config.yaml is the default preset; `--configfile X` replaces it (it is not merged), so a preset
# means the same in any directory. Keys a preset leaves out take the schema defaults.
if not workflow.overwrite_configfiles:

    configfile: os.path.join(workflow.basedir, "config.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/scratch.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/icl.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        rules.theory_table.output,
        rules.data_summary.output,
        scratch_outputs(),
        pretrain_outputs(),
        icl_outputs(),
        finetune_outputs(),
        report_outputs(),
    default_target: True
