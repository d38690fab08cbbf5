"""Profile the 50-group plan against the bare orderBy and the sort plan at 1M rows, from
Spark's event log (stages, tasks, skew, CPU) plus the executor's own laps."""
import glob, json, os, sys, shutil, tempfile, time, statistics
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.getcwd() + "/bench"); sys.path.insert(0, os.getcwd() + "/tests")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pathlib import Path
from pyspark.sql import SparkSession
import bench_executor as B
from engine.table.footers import read_partitions
from engine.spark import writing, verification

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
variants = (sys.argv[2] if len(sys.argv) > 2 else "spark-orderby,executor-sort,executor-50-groups").split(",")
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 2
evdir = tempfile.mkdtemp(prefix="ev-", dir="/tmp/groups9")
spark = (SparkSession.builder.master("local[2]").appName("prof")
         .config("spark.driver.memory", "2g").config("spark.sql.shuffle.partitions", "8")
         .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.execution.arrow.pyspark.enabled", "true")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.sql.parquet.compression.codec", "snappy")
         .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
         .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", evdir).config("spark.eventLog.compress", "false").config("spark.eventLog.rolling.enabled", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
work = Path(tempfile.mkdtemp(prefix="w-", dir="/tmp/groups9"))
paths = B.make_files(work / "input", rows, rows // 50)
schema, parts = read_partitions(paths)
fifty = [("sort", ["l_shipdate" if i % 2 else "l_commitdate"], [p]) for i, p in enumerate(parts)]
rpf = 100_000 if rows >= 1_000_000 else rows // 10
mode = os.environ.get("GW")
def fifty_run(out, name="executor-50-groups"):
    if mode:
        old = writing.GROUP_WRITE; writing.GROUP_WRITE = mode
    try:
        B.run_executor(spark, schema, fifty, out, rpf, name)
    finally:
        if mode: writing.GROUP_WRITE = old
fns = {"spark-orderby": lambda out: B.run_orderby(spark, paths, max(1, rows // rpf), out),
       "executor-sort": lambda out: B.run_executor(spark, schema, [("sort", ["l_shipdate"], parts)], out, rpf, "executor-sort"),
       "executor-50-groups": fifty_run}
for m in ("concurrent", "tasks", "partition_by"):
    def f(out, m=m):
        old = writing.GROUP_WRITE; writing.GROUP_WRITE = m
        try:
            B.run_executor(spark, schema, fifty, out, rpf, "50@" + m)
        finally:
            writing.GROUP_WRITE = old
    fns["50@" + m] = f
marks = []  # (variant, rep, t0_ms, t1_ms, nfiles, sizes)
for rep in range(-1, reps):
    for v in variants:
        out = str(work / f"{v}-{rep}")
        t0 = time.time() * 1000
        fns[v](out)
        t1 = time.time() * 1000
        files = [f for f in glob.glob(out + "/**/*.parquet", recursive=True)]
        sizes = sorted(os.path.getsize(f) for f in files)
        marks.append((v, rep, t0, t1, len(files), sizes))
        shutil.rmtree(out, ignore_errors=True)
        print(f"rep {rep} {v}: {(t1-t0)/1000:.2f} s, {len(files)} files", flush=True)
spark.stop()
log = sorted(glob.glob(evdir + "/*/events_*") or glob.glob(evdir + "/*"))
jobs, stages, tasks = {}, {}, {}
for line in (l for f in log for l in open(f)):
    e = json.loads(line)
    ev = e["Event"]
    if ev == "SparkListenerJobStart":
        jobs[e["Job ID"]] = {"t0": e["Submission Time"], "stages": e["Stage IDs"],
                              "desc": (e.get("Properties") or {}).get("spark.job.description", "")}
    elif ev == "SparkListenerJobEnd":
        jobs[e["Job ID"]]["t1"] = e["Completion Time"]
    elif ev == "SparkListenerStageCompleted":
        si = e["Stage Info"]
        if "Submission Time" in si:
            stages[si["Stage ID"]] = {"t0": si["Submission Time"], "t1": si["Completion Time"],
                                      "n": si["Number of Tasks"], "name": si["Stage Name"]}
    elif ev == "SparkListenerTaskEnd":
        ti, tm = e["Task Info"], e.get("Task Metrics") or {}
        tasks.setdefault(e["Stage ID"], []).append({
            "launch": ti["Launch Time"], "finish": ti["Finish Time"],
            "run": tm.get("Executor Run Time", 0), "cpu": tm.get("Executor CPU Time", 0) / 1e6,
            "deser": tm.get("Executor Deserialize Time", 0), "gc": tm.get("JVM GC Time", 0),
            "sw": (tm.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0),
            "swt": (tm.get("Shuffle Write Metrics") or {}).get("Shuffle Write Time", 0) / 1e6,
            "sr": (tm.get("Shuffle Read Metrics") or {}).get("Remote Bytes Read", 0) + (tm.get("Shuffle Read Metrics") or {}).get("Local Bytes Read", 0),
            "recw": (tm.get("Output Metrics") or {}).get("Records Written", 0),
            "bw": (tm.get("Output Metrics") or {}).get("Bytes Written", 0),
            "spill": tm.get("Disk Bytes Spilled", 0),
            "peak": tm.get("Peak Execution Memory", 0)})
for v, rep, t0, t1, nf, sizes in marks:
    if rep < 0:
        continue
    print(f"\n=== {v} rep {rep}: wall {(t1-t0)/1000:.2f} s, {nf} files, sizes kB min/med/max "
          f"{sizes[0]/1e3:.0f}/{statistics.median(sizes)/1e3:.0f}/{sizes[-1]/1e3:.0f}, total {sum(sizes)/1e6:.2f} MB")
    prev = t0
    for jid in sorted(j for j in jobs if t0 <= jobs[j]["t0"] <= t1):
        j = jobs[jid]
        print(f"  [driver gap {(j['t0']-prev)/1000:.2f} s] job {jid} {j['desc'][:40]!r}: {(j['t1']-j['t0'])/1000:.2f} s")
        prev = j["t1"]
        for sid in sorted(j["stages"]):
            if sid not in stages:
                continue
            s, ts = stages[sid], tasks.get(sid, [])
            durs = [t["finish"] - t["launch"] for t in ts]
            def S(k): return sum(t[k] for t in ts)
            print(f"     stage {sid} {s['name'][:38]:<38} {(s['t1']-s['t0'])/1000:5.2f} s, {s['n']:3d} tasks, "
                  f"task ms min/med/max {min(durs)}/{statistics.median(durs):.0f}/{max(durs)}, "
                  f"sum run {S('run')/1000:.2f} cpu {S('cpu')/1000:.2f} deser {S('deser')/1000:.2f} gc {S('gc')/1000:.2f} "
                  f"shufW {S('sw')/1e6:.1f}MB ({S('swt')/1000:.2f}s) shufR {S('sr')/1e6:.1f}MB "
                  f"out {S('recw')} rec {S('bw')/1e6:.1f}MB spill {S('spill')} peakmem {max(t['peak'] for t in ts)/1e6:.0f}MB")
    print(f"  [driver tail {(t1-prev)/1000:.2f} s]")
for v in variants:
    print(v, B.median_phases(B.PHASES.get(v) or B.PHASES.get(v), True) if v in B.PHASES else "")
shutil.rmtree(work, ignore_errors=True)
