# Registry models that arrive as GGUF files (a path, or a file inside an installed package): each is
# converted once into a Hugging Face directory, which every job that uses the model reads as input.


rule gguf_convert:
    input:
        unpack(lambda w: gguf_inputs(w.model)),
    output:
        directory(CONVERTED),
    params:
        source=lambda w: EXPERIMENT["models"][w.model]["gguf"],
        dtype=lambda w: EXPERIMENT["models"][w.model]["dtype"],
    resources:
        **model_job_resources("gguf_convert", lambda w: w.model),
    log:
        log_path("gguf_convert", "{model}"),
    conda:
        ENV
    run:
        script_job("gguf_convert.py", locals(), benchmark_path("gguf_convert", "{model}"))
