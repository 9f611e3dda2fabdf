# The HTML report of this benchmark's runs, read back from MLflow.


rule report:
    input:
        f"results/{BENCH}/tracking.json",
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
        title=CFG.get("report", {}).get("title", f"dmlbench: {BENCH}"),
        description=CFG.get("description", ""),
    log:
        f"logs/{BENCH}/report.log",
    conda:
        "../../envs/dmlbench.yaml"
    shell:
        "{DMLBENCH} report --tracking {input} --out reports/{BENCH} "
        "--title {params.title:q} --description {params.description:q} 2> {log}"


localrules:
    track,
    report,
