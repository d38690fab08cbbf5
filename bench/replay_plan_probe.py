"""Where WAIR's first K = 8 plan of the 10M replay spends its time (round 9, why9; issue 11).

Reproduces the plan's rewrite alone, without a commit, with Spark's task metrics per stage
(run time, CPU, GC, memory and disk spill, shuffle bytes, peak execution memory); results
are appended to ``OUT/runs.jsonl``. bench/README_real_replay.md, "Round 9 (why9)".

* ``WHY9_MODE=dump`` (default): the replay (``--queries none``: the policies decide the same
  way without DuckDB) until WAIR's first plan, which is pickled to ``OUT/plan.pkl`` and
  rewritten whole. Needs ``OUT/wd`` = a copy of the 10M replay's workdir (its staging table's
  ``table.json`` pointed at the copy).
* ``WHY9_MODE=groups WHY9_RUNS='g1:1;g01:0,1;full:0,1,2,3,4;one:-1'``: the pickled plan's
  groups rewritten in subsets in one session (``-1`` = all its files as ONE sort group);
  ``WHY9_DRIVER_MEMORY=1g`` runs them in a smaller driver (a sort that spills).

Run under the heavy lock: ``flock /work/tools/heavy.lock nice -n 5 python bench/replay_plan_probe.py``.
"""
import json, os, pickle, time
MODE = os.environ.get("WHY9_MODE", "dump")
OUT = os.environ.get("WHY9_OUT", "/tmp/why9")

def stage_rows(spark, after):
    sc = spark.sparkContext
    store = sc._jsc.sc().statusStore()
    rows = []
    sid = after + 1
    misses = 0
    while misses < 20:
        try:
            st = store.lastStageAttempt(sid)
        except Exception:
            misses += 1; sid += 1; continue
        misses = 0
        rows.append({"stage": sid, "name": str(st.name())[:60], "tasks": int(st.numTasks()),
                     "run_s": int(st.executorRunTime()) / 1e3, "cpu_s": int(st.executorCpuTime()) / 1e9,
                     "gc_s": int(st.jvmGcTime()) / 1e3, "mem_spill": int(st.memoryBytesSpilled()),
                     "disk_spill": int(st.diskBytesSpilled()), "in": int(st.inputBytes()),
                     "out": int(st.outputBytes()), "sh_r": int(st.shuffleReadBytes()),
                     "sh_w": int(st.shuffleWriteBytes()), "peak_mem": int(st.peakExecutionMemory()),
                     "deser_s": int(st.executorDeserializeTime()) / 1e3})
        sid += 1
    return rows

def last_stage(spark):
    store = spark.sparkContext._jsc.sc().statusStore()
    n = -1
    for sid in range(0, 100000):
        try:
            store.lastStageAttempt(sid); n = sid
        except Exception:
            if sid > n + 50: break
    return n

def run_rewrite(spark, d, idx, label):
    from engine.spark.rewrite import rewrite
    if idx == [-1]:  # the whole plan as ONE sort group
        import dataclasses
        g0 = d["pairs"][0][0]
        parts = [x for _, ps in d["pairs"] for x in ps]
        pairs = [(dataclasses.replace(g0, partitions=tuple(x.path for x in parts)), parts)]
    else:
        pairs = [d["pairs"][i] for i in idx]
    before = last_stage(spark)
    t0 = time.perf_counter(); c0 = os.times()
    res = rewrite(spark, d["schema"], pairs, f"{OUT}/out-{label}-{int(t0)}", d["target_rows"], d["target_bytes"])
    wall = time.perf_counter() - t0
    stages = stage_rows(spark, before)
    rows = sum(g.rows for g in res.groups)
    rec = {"label": label, "groups": list(idx), "rows": rows, "wall_s": round(wall, 2),
           "phases": res.phases, "measured": res.measured, "stages": stages,
           "layouts": [(pairs[i][0].layout, list(pairs[i][0].columns), len(pairs[i][1])) for i in range(len(pairs))]}
    print(json.dumps({k: v for k, v in rec.items() if k != "stages"}, default=str), flush=True)
    for s in stages:
        print("   ", s, flush=True)
    with open(f"{OUT}/runs.jsonl", "a") as fh:
        fh.write(json.dumps(rec, default=str) + "\n")
    import shutil; shutil.rmtree(f"{OUT}/out-{label}-{int(t0)}", ignore_errors=True)
    return rec

def main() -> None:
    if MODE == "dump":
        from bench.real_replay import replay as R
        from bench.real_replay.__main__ import main
        def hook(self, proposal, charged):
            proposal = R._dedupe(proposal)
            if not proposal.groups:
                return None
            snap, zm = self.snapshot()
            by_path = {p.path: p for p in snap.partitions}
            info = self.store.info(self.table)
            pairs = [(g, [by_path[p] for p in g.partitions]) for g in proposal.groups]
            d = {"schema": snap.schema, "pairs": pairs, "target_rows": info.target_rows,
                 "target_bytes": info.target_bytes, "batch": self.batch_index}
            with open(f"{OUT}/plan.pkl", "wb") as fh:
                pickle.dump(d, fh)
            from engine.policy.costmodel import groups_rewrite_cost
            print("PLAN batch", self.batch_index, "groups", len(pairs), "files", sum(len(p) for _, p in pairs),
                  "rows", sum(x.rows for _, p in pairs for x in p), "predicted",
                  groups_rewrite_cost(zm, proposal.groups, self.settings), flush=True)
            for g, p in pairs:
                print("  group", g.layout, g.columns, len(p), sum(x.rows for x in p), flush=True)
            print("settings", self.settings.spark_driver_memory, self.settings.spark_master,
                  self.settings.spark_shuffle_partitions, flush=True)
            run_rewrite(self.spark, d, list(range(len(pairs))), "full")
            os._exit(0)
        R.ReplayRun.execute = hook
        main(["--rows", "10000000", "--policies", "wair", "--query-repeat", "8", "--queries", "none",
              "--workdir", f"{OUT}/wd", "--out", f"{OUT}/replay_out"])
    else:
        from engine.core.config import load_settings
        from engine.spark.session import get_spark
        d = pickle.load(open(f"{OUT}/plan.pkl", "rb"))
        settings = load_settings({"home": f"{OUT}/wd/home", "spark_master": "local[2]",
                                  "spark_shuffle_partitions": 4, "target_rows": d["target_rows"],
                                  "spark_driver_memory": os.environ.get("WHY9_DRIVER_MEMORY", "2g")})
        spark = get_spark(settings)
        for spec in os.environ["WHY9_RUNS"].split(";"):
            label, idx = spec.split(":")
            run_rewrite(spark, d, [int(i) for i in idx.split(",")], label)


if __name__ == "__main__":
    main()
