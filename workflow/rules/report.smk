# The HTML report of this benchmark's runs, read back from MLflow.


rule report:
    input:
        f"results/{BENCH}/tracking.json",
    output:
        f"reports/{BENCH}/index.html",
    params:
        title=CFG.get("report", {}).get("title", f"dmlbench: {BENCH}"),
        description=CFG.get("description", ""),
    log:
        f"logs/{BENCH}/report.log",
    conda:
        "../../envs/dmlbench.yaml"
    shell:
        "{DMLBENCH} report --tracking {input} --out reports/{BENCH} "
        "--title {params.title:q} --description={params.description:q} 2> {log}"


localrules:
    track,
    report,
