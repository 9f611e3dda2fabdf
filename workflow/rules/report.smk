# The HTML report of this benchmark's runs, read back from MLflow, with its settings (title,
# description, rope, paper tables) from the checked config the track job logged with them.


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
    log:
        f"logs/{BENCH}/report.log",
    conda:
        "../envs/dmlbench.yaml"
    shell:
        "python -m dmlbench.cli report --tracking {input.tracking:q} --out {params.out:q} "
        "--manifest {input.manifest:q} 2> {log:q}"


localrules:
    track,
    report,
