# The HTML report of this benchmark's runs, read from the published records (the files the
# track job logged into MLflow: the same numbers, without querying the store), with its settings
# (title, description, rope, paper tables) from the published config; the page names the MLflow
# experiment of the track job.


rule report:
    input:
        tracking=f"results/{BENCH}/tracking.json",
        manifest=f"reports/{BENCH}/records/manifest.json",
    output:
        index=report(
            f"reports/{BENCH}/index.html", caption="../report/index.rst", category="Report"
        ),
        figures=report(
            directory(f"reports/{BENCH}/figures"),
            patterns=["{name}.png"],
            caption="../report/figure.rst",
            category="Figures",
        ),
        tables=report(
            directory(f"reports/{BENCH}/tables"),
            patterns=["{name}.csv"],
            caption="../report/table.rst",
            category="Tables",
        ),
    params:
        out=lambda wildcards, output: str(Path(output.index).parent),
        records=lambda wildcards, input: str(Path(input.manifest).parent),
    log:
        f"logs/{BENCH}/report.log",
    # the processes drawing the figures (dmlbench.report.render): at most 4, never more than
    # the cores Snakemake was given (it scales threads down to --cores)
    threads: 4
    conda:
        "../envs/dmlbench.yaml"
    shell:
        "python -m dmlbench.cli report --records {params.records:q} --tracking {input.tracking:q} "
        "--out {params.out:q} --workers {threads} 2> {log:q}"


localrules:
    track,
    report,
