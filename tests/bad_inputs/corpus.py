"""The bad-input corpus: inputs a user can get wrong, and what must be said.

Each :class:`Case` runs one command against a fresh workspace (a small ``lineitem`` table,
an imported workload, admin ``root``, approver ``alice`` and one proposed plan, see
``tests/e2e/test_bad_inputs.py``) and must end with exit code 2, no traceback, exactly one
error line matching ``expect``, and nothing on disk changed (table files, snapshots, the
control store; a case with ``audits=True`` may append audit entries and sessions, as a
failed sign-in must).

Placeholders in ``argv`` (``str.format``; write ``{{`` for a brace): ``{home}`` the workspace, ``{tmp}`` a scratch directory holding
``files``; ``{secret}`` a file with the right secret. ``config`` is written to the
workspace's ``layout-advisor.toml``; ``env`` is set for the command; ``damage`` (a name in
:data:`DAMAGES`) changes the workspace before the command (the "before" state is taken
after the damage).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    expect: str  # regular expression searched in the one error line
    files: dict[str, bytes] = field(default_factory=dict)
    config: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)
    damage: str | None = None
    stdin: str | None = None
    audits: bool = False


def _jsonl(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


_Q = '"sql": "SELECT * FROM lineitem WHERE l_shipdate < DATE \'1995-01-01\'"'
IMPORT = ("workload", "import", "lineitem", "{tmp}/log.jsonl", "--strict")
IMPORT_SQL = ("workload", "import", "lineitem", "{tmp}/log.sql", "--strict")
LIST = ("table", "list")
CREATE = ("plan", "create", "lineitem")


def _config(name: str, text: str, expect: str) -> Case:
    return Case(f"config-{name}", LIST, expect, config=text.encode())


def _env(name: str, var: str, value: str, expect: str) -> Case:
    return Case(f"env-{name}", LIST, expect, env={var: value})


def _arg(name: str, argv: tuple[str, ...], expect: str) -> Case:
    return Case(f"arg-{name}", argv, expect)


def _log(name: str, body: bytes, expect: str, sql: bool = False) -> Case:
    return Case(f"log-{name}", IMPORT_SQL if sql else IMPORT, expect,
                files={"log.sql" if sql else "log.jsonl": body})


CASES: tuple[Case, ...] = (
    # -- layout-advisor.toml -----------------------------------------------------------
    _config("zero-scan-rate", "scan_bytes_per_s = 0\n", r"'scan_bytes_per_s'.*greater than 0"),
    _config("negative-scan-rate", "scan_bytes_per_s = -1.0\n", r"'scan_bytes_per_s'.*greater than 0"),
    _config("nan-sort-rate", "sort_bytes_per_s = nan\n", r"'sort_bytes_per_s'.*finite"),
    _config("inf-memory", "memory_budget_bytes = inf\n", r"'memory_budget_bytes'.*finite"),
    _config("negative-memory", "memory_budget_bytes = -5\n", r"'memory_budget_bytes'.*greater than 0"),
    _config("negative-price", "price_per_cpu_hour = -0.1\n", r"'price_per_cpu_hour'.*at least 0"),
    _config("port-zero", "ui_port = 0\n", r"'ui_port'.*at least 1"),
    _config("port-high", "ui_port = 99999\n", r"'ui_port'.*at most 65535"),
    _config("zero-shuffle", "spark_shuffle_partitions = 0\n", r"'spark_shuffle_partitions'"),
    _config("penalty-below-one", "external_sort_penalty = 0.5\n", r"'external_sort_penalty'.*at least 1"),
    _config("word-for-int", "target_rows = \"many\"\n", r"'target_rows'.*cannot use 'many'"),
    _config("bool-for-int", "target_rows = true\n", r"'target_rows'.*true/false"),
    _config("fraction-for-int", "ep_file_partitions = 2.5\n", r"'ep_file_partitions'.*whole"),
    _config("zero-idle", "session_idle_s = 0\n", r"'session_idle_s'.*greater than 0"),
    _config("bad-bool", "separation_of_duties = \"maybe\"\n", r"'separation_of_duties'.*true or false"),
    _config("unknown-key", "no_such_setting = 1\n", r"unknown setting 'no_such_setting'"),
    _config("bad-toml", "target_rows = \n", r"layout-advisor\.toml"),
    _config("both-sizes-zero", "target_rows = 0\ntarget_mb = 0\n", r"target_rows or target_mb must be positive"),
    Case("config-not-utf8", LIST, r"layout-advisor\.toml: not UTF-8", config=b"spark_master = \"\xff\xfe\"\n"),
    _config("negative-target-mb", "target_mb = -1.0\n", r"'target_mb'.*at least 0"),
    _config("negative-dual-bytes", "dual_approval_bytes = -1\n", r"'dual_approval_bytes'.*at least 0"),
    _config("nan-auth-delay", "auth_delay_s = nan\n", r"'auth_delay_s'.*finite"),
    _config("inf-price", "price_per_cpu_hour = inf\n", r"'price_per_cpu_hour'.*finite"),
    _config("string-for-float", "scan_bytes_per_s = \"fast\"\n", r"'scan_bytes_per_s'.*cannot use 'fast'"),
    _config("list-for-int", "ui_port = [1, 2]\n", r"'ui_port'"),
    _config("approvers-section", "[approvers]\nalice = true\n", r"unknown setting 'approvers_alice'"),
    # -- environment -------------------------------------------------------------------
    _env("approvers", "LAYOUT_ADVISOR_APPROVERS", "mallory", r"LAYOUT_ADVISOR_APPROVERS: approvers are no longer"),
    _env("word-rate", "LAYOUT_ADVISOR_SCAN_BYTES_PER_S", "fast", r"environment: setting 'scan_bytes_per_s'"),
    _env("huge-int", "LAYOUT_ADVISOR_TARGET_ROWS", "1e400", r"'target_rows'.*finite"),
    _env("nan-rate", "LAYOUT_ADVISOR_SORT_BYTES_PER_S", "nan", r"'sort_bytes_per_s'.*finite"),
    _env("negative-rate", "LAYOUT_ADVISOR_SCAN_BYTES_PER_S", "-3", r"'scan_bytes_per_s'.*greater than 0"),
    _env("unknown", "LAYOUT_ADVISOR_NO_SUCH", "1", r"environment: unknown setting 'NO_SUCH'"),
    _env("hex-port", "LAYOUT_ADVISOR_UI_PORT", "0x10", r"'ui_port'.*cannot use '0x10'"),
    _env("bad-bool", "LAYOUT_ADVISOR_SEPARATION_OF_DUTIES", "perhaps", r"'separation_of_duties'.*true or false"),
    _env("inf-memory", "LAYOUT_ADVISOR_MEMORY_BUDGET_BYTES", "inf", r"'memory_budget_bytes'.*finite"),
    # -- command-line numbers ----------------------------------------------------------
    _arg("alpha-inf", (*CREATE, "--alpha", "inf"), r"--alpha: 'inf' is not a finite number"),
    _arg("alpha-nan", (*CREATE, "--alpha", "nan"), r"--alpha: 'nan' is not a finite number"),
    _arg("alpha-negative", (*CREATE, "--alpha", "-1"), r"alpha must be > 0"),
    _arg("beta-word", (*CREATE, "--beta", "lots"), r"--beta: 'lots' is not a number"),
    _arg("window-zero", (*CREATE, "--window", "0"), r"--window: 0 must be at least 1"),
    _arg("window-fraction", (*CREATE, "--window", "1.5"), r"--window: '1.5' is not an integer"),
    _arg("eps-zero", (*CREATE, "--eps", "0"), r"WAIR parameter eps must be"),
    _arg("cost-limit-nan", (*CREATE, "--cost-limit", "nan"), r"--cost-limit: 'nan' is not a finite"),
    _arg("k-max-negative", (*CREATE, "--k-max", "-3"), r"--k-max: -3 must be at least 1"),
    _arg("cost-limit-minus-inf", (*CREATE, "--cost-limit=-inf"), r"--cost-limit: '-inf' is not a finite number"),
    _arg("min-samples-zero", (*CREATE, "--min-samples", "0"), r"--min-samples: 0 must be at least 1"),
    _arg("beta-inf", (*CREATE, "--beta", "inf"), r"--beta: 'inf' is not a finite number"),
    _arg("simulate-periods-zero", ("simulate", "--periods", "0"), r"--periods: 0 must be at least 1"),
    _arg("simulate-selectivity-zero", ("simulate", "--selectivity", "0"), r"--selectivity: 0 must be greater than 0"),
    _arg("simulate-target-rows-negative", ("simulate", "--target-rows", "-5"), r"--target-rows: -5 must be at least 1"),
    _arg("simulate-param-nan", ("simulate", "--distribution-param", "nan"), r"--distribution-param: 'nan' is not a finite"),
    _arg("simulate-recluster-negative", ("simulate", "--recluster-start", "-1"), r"--recluster-start: -1 must be at least 0"),
    _arg("simulate-preset", ("simulate", "--preset", "nope"), r"invalid choice: 'nope'"),
    _arg("show-snapshot-word", ("table", "show", "lineitem", "--snapshot", "abc"), r"has no snapshot 'abc'"),
    _arg("show-snapshot-missing", ("table", "show", "lineitem", "--snapshot", "42"), r"has no snapshot '42'"),
    _arg("snapshots-unknown", ("table", "snapshots", "nope"), r"no table named 'nope'"),
    _arg("plan-create-unknown-table", ("plan", "create", "nope"), r"no table named 'nope'"),
    _arg("audit-verify-extra", ("audit", "verify", "now"), r"unrecognized arguments: now"),
    _arg("workload-show-unknown", ("workload", "show", "nope"), r"no table named 'nope'"),
    _arg("gc-unknown-table", ("table", "gc", "nope"), r"no table named 'nope'"),
    _arg("rollback-snapshot-word", ("table", "rollback", "lineitem", "--to", "abc", "--as", "root"), r"has no snapshot 'abc'"),
    _arg("approve-id-word", ("plan", "approve", "one", "--as", "alice"), r"invalid int value: 'one'"),
    _arg("no-command", (), r"required: COMMAND|the following arguments are required"),
    _arg("demo-scale-negative", ("demo", "--scale", "-1", "--no-ui"), r"--scale: -1 must be greater than 0"),
    _arg("demo-scale-nan", ("demo", "--scale", "nan", "--no-ui"), r"--scale: 'nan' is not a finite"),
    _arg("simulate-overrides-json", ("simulate", "--overrides", "{{bad"), r"--overrides: not a JSON object"),
    _arg("simulate-overrides-list", ("simulate", "--overrides", "[1, 2]"), r"--overrides: not a JSON object"),
    _arg("simulate-rows-zero", ("simulate", "--rows", "0"), r"--rows: 0 must be at least 1"),
    _arg("simulate-rate-inf", ("simulate", "--shifting-rate", "inf"), r"--shifting-rate: 'inf' is not a finite"),
    _arg("gc-duration-word", ("table", "gc", "lineitem", "--older-than", "seven"), r"invalid duration 'seven'"),
    _arg("gc-duration-huge", ("table", "gc", "lineitem", "--older-than", "99999999999999d"), r"duration '99999999999999d' is too long"),
    _arg("plan-id-word", ("plan", "show", "abc"), r"invalid int value: 'abc'"),
    _arg("plan-id-missing", ("plan", "show", "999"), r"no plan with id 999"),
    _arg("unknown-table", ("table", "show", "nope"), r"no table named 'nope'"),
    _arg("unknown-policy", (*CREATE, "--policy", "nope"), r"invalid choice: 'nope'"),
    _arg("rollback-unknown-snapshot", ("table", "rollback", "lineitem", "--to", "9", "--as", "root"), r"has no snapshot '9'"),
    # -- a workspace that is not one ---------------------------------------------------
    Case("home-is-a-file", ("--home", "{tmp}/afile", "table", "list"), r"afile is a file, not a workspace directory",
         files={"afile": b"x"}),
    Case("home-missing", ("--home", "{tmp}/nowhere", "plan", "list"), r"no workspace at .*nowhere"),
    Case("home-missing-table-show", ("--home", "{tmp}/nowhere", "table", "show", "t"), r"no workspace at .*nowhere"),
    Case("control-db-garbage", ("plan", "list"), r"control store .*control\.db cannot be used \(file is not a database\)",
         damage="control-garbage"),
    Case("control-db-directory", ("plan", "list"), r"control store .*control\.db cannot be used",
         damage="control-directory"),
    Case("control-db-missing-after-recluster", ("plan", "list"), r"control\.db is missing, but table\(s\) lineitem",
         damage="control-missing-after-recluster"),
    Case("pointer-garbage", ("table", "show", "lineitem"), r"metadata/current: the current-snapshot pointer is damaged", damage="pointer-garbage"),
    Case("pointer-to-nothing", ("table", "show", "lineitem"), r"table 'lineitem' has no snapshot '77'", damage="pointer-dangling"),
    Case("header-garbage", ("table", "show", "lineitem"), r"snap-00000001\.json: the header of snapshot 1 is damaged.*roll back", damage="header-garbage"),
    Case("manifest-truncated", ("table", "show", "lineitem"), r"snap-00000001\.manifest\.parquet: the snapshot is damaged",
         damage="manifest-truncated"),
    Case("table-json-garbage", ("table", "show", "lineitem"), r"table\.json: the table description is damaged", damage="table-json-garbage"),
    # -- query logs (strict import) ----------------------------------------------------
    _log("ts-1e20", _jsonl('{"ts": 1e20, %s}' % _Q), r"log\.jsonl:1.*invalid ts 1e\+20: epoch timestamp out of range"),
    _log("ts-word", _jsonl('{"ts": "yesterday", %s}' % _Q), r"log\.jsonl:1.*invalid ts 'yesterday'"),
    _log("bytes-infinity", _jsonl('{"ts": 1700000000, "bytes_scanned": Infinity, %s}' % _Q), r"log\.jsonl:1.*bytes_scanned"),
    _log("bytes-negative", _jsonl('{"ts": 1700000000, "bytes_scanned": -5, %s}' % _Q), r"log\.jsonl:1.*bytes_scanned"),
    _log("duration-nan", _jsonl('{"ts": 1700000000, "duration_ms": NaN, %s}' % _Q), r"log\.jsonl:1.*duration_ms"),
    _log("not-an-object", _jsonl('[1, 2]'), r"log\.jsonl:1"),
    _log("sql-not-text", _jsonl('{"ts": 1700000000, "sql": 5}'), r"log\.jsonl:1.*sql"),
    _log("bad-json", _jsonl('{"ts": 1700000000, "sql": '), r"log\.jsonl:1"),
    _log("ts-true", _jsonl('{"ts": true, %s}' % _Q), r"log\.jsonl:1.*invalid ts True"),
    _log("ts-minus-1e300", _jsonl('{"ts": -1e300, %s}' % _Q), r"log\.jsonl:1.*epoch timestamp out of range"),
    _log("bytes-text", _jsonl('{"ts": 1700000000, "bytes_scanned": "12", %s}' % _Q), r"log\.jsonl:1.*bytes_scanned '12'"),
    _log("duration-negative", _jsonl('{"ts": 1700000000, "duration_ms": -1, %s}' % _Q), r"log\.jsonl:1.*duration_ms -1"),
    _log("sql-empty", _jsonl('{"ts": 1700000000, "sql": "  "}'), r"log\.jsonl:1.*missing or empty 'sql'"),
    _log("second-line-bad", _jsonl('{"ts": 1700000000, %s}' % _Q, '{"ts": 1e20, %s}' % _Q), r"log\.jsonl:2.*out of range"),
    _log("date-month-13", b"SELECT * FROM lineitem WHERE l_shipdate < DATE '2024-13-45';\n", r"log\.sql:1.*'2024-13-45' is not a valid date", sql=True),
    _log("sql-garbage", b"this is not sql;\n", r"log\.sql:1.*cannot parse SQL", sql=True),
    _log("sql-empty-file", b"   \n", r"no SQL statements found", sql=True),
    _log("literal-1e400", b"SELECT * FROM lineitem WHERE l_quantity < 1e400;\n", r"log\.sql:1.*numeric literal 1E\+400 is out of the range of a double", sql=True),
    _log("literal-minus-1e400", b"SELECT * FROM lineitem WHERE l_quantity > -1e400;\n", r"log\.sql:1.*numeric literal -1E\+400 is out of the range", sql=True),
    _log("date-out-of-range", b"SELECT * FROM lineitem WHERE l_shipdate < DATE '99999-01-01';\n", r"log\.sql:1.*date literal '99999-01-01' is not a valid date", sql=True),
    _log("unknown-column", b"SELECT * FROM lineitem WHERE nope < 3;\n", r"log\.sql:1.*nope", sql=True),
    _log("not-utf8", b"SELECT * FROM lineitem WHERE l_comment = '\xff\xfe';\n", r"log\.sql.*UTF-8", sql=True),
    Case("log-imported-twice", ("workload", "import", "lineitem", "{tmp}/seed.jsonl"),
         r"seed\.jsonl: 1 of its queries are already imported into lineitem.*--append",
         files={"seed.jsonl": ('{"ts": 1700000000, "sql": "SELECT * FROM lineitem WHERE l_shipdate < '
                               "DATE '1995-01-01'\"}\n").encode()}),
    Case("log-missing", ("workload", "import", "lineitem", "{tmp}/nothing.sql"), r"nothing\.sql"),
    Case("log-is-directory", ("workload", "import", "lineitem", "{tmp}"), r"is a directory"),
    Case("log-gz-not-gzip", ("workload", "import", "lineitem", "{tmp}/log.jsonl.gz"), r"log\.jsonl\.gz",
         files={"log.jsonl.gz": b"plain text, not gzip"}),
    # -- identities --------------------------------------------------------------------
    Case("auth-wrong-secret", ("plan", "approve", "1", "--as", "alice", "--secret-file", "{tmp}/wrong"),
         r"wrong name or secret for 'alice'", files={"wrong": b"not the secret\n"}, audits=True),
    Case("auth-unknown-name", ("plan", "approve", "1", "--as", "mallory", "--secret-file", "{secret}"),
         r"wrong name or secret for 'mallory'", audits=True),
    Case("auth-secret-file-missing", ("plan", "approve", "1", "--as", "alice", "--secret-file", "{tmp}/none"),
         r"--secret-file .*none: cannot read it"),
    Case("auth-secret-file-empty", ("plan", "approve", "1", "--as", "alice", "--secret-file", "{tmp}/empty"),
         r"--secret-file .*empty: the first line is empty", files={"empty": b"\n"}),
    Case("auth-secret-env-missing", ("plan", "reject", "1", "--as", "alice"), r"LAYOUT_ADVISOR_SECRET_FILE .*: cannot read it",
         env={"LAYOUT_ADVISOR_SECRET_FILE": "/nonexistent/secret"}),
    Case("auth-no-secret", ("plan", "approve", "1", "--as", "alice"), r"no secret for 'alice'", stdin=""),
    Case("auth-empty-name", ("plan", "approve", "1", "--as", " ", "--secret-file", "{secret}"), r"approver name ' ' must be"),
    Case("auth-secret-as-argument", ("plan", "approve", "1", "--as", "alice", "--secret", "hunter22"),
         r"unrecognized arguments"),
    Case("auth-approver-cannot-rollback", ("table", "rollback", "lineitem", "--to", "1", "--as", "alice",
                                           "--secret-file", "{secret}"),
         r"'alice' is an approver; rollback needs an admin", audits=True),
    Case("auth-approver-cannot-add", ("approvers", "add", "bob", "--as", "alice", "--secret-file", "{secret}"),
         r"'alice' is an approver; approvers needs an admin", stdin="a long new secret\n", audits=True),
    Case("auth-second-first-admin", ("approvers", "add", "eve", "--admin"), r"an admin exists already",
         stdin="a long new secret\n"),
    Case("auth-short-new-secret", ("approvers", "add", "bob", "--as", "root", "--secret-file", "{secret}"),
         r"at least 8 characters", stdin="short\n", audits=True),
    Case("auth-remove-unknown", ("approvers", "remove", "nobody", "--as", "root", "--secret-file", "{secret}"),
         r"no approver named 'nobody'", audits=True),
    Case("auth-remove-last-admin", ("approvers", "remove", "root", "--as", "root", "--secret-file", "{secret}"),
         r"'root' is the last admin", audits=True),
    Case("auth-run-unapproved", ("plan", "run", "1", "--as", "alice", "--secret-file", "{secret}"),
         r"plan 1 is not approved", audits=True),
    Case("auth-proposer-approves", ("plan", "approve", "1", "--as", "tester", "--secret-file", "{secret}"),
         r"'tester' proposed plan 1 and cannot approve it", audits=True),
    Case("gc-short-retention", ("table", "gc", "lineitem", "--older-than", "0s"),
         r"below the minimum retention of 7 days; add --force-retention"),
    Case("gc-yes-without-admin", ("table", "gc", "lineitem", "--yes", "--force-retention", "--older-than", "0s"),
         r"--yes deletes files: add --as ADMIN"),
    Case("gc-yes-as-approver", ("table", "gc", "lineitem", "--yes", "--force-retention", "--older-than", "0s",
                                "--as", "alice", "--secret-file", "{secret}"),
         r"'alice' is an approver; gc needs an admin", audits=True),
    Case("drop-as-approver", ("table", "drop", "lineitem", "--as", "alice", "--secret-file", "{secret}"),
         r"'alice' is an approver; drop needs an admin", audits=True),
    Case("drop-unknown-table", ("table", "drop", "nope", "--as", "root", "--secret-file", "{secret}"),
         r"no table named 'nope'"),
    Case("workload-clear-without-as", ("workload", "clear", "lineitem"), r"required: --as"),
    Case("workload-clear-as-approver", ("workload", "clear", "lineitem", "--as", "alice", "--secret-file", "{secret}"),
         r"'alice' is an approver; workload-clear needs an admin", audits=True),
    Case("auth-passwd-someone-else", ("approvers", "passwd", "alice", "--as", "tester", "--secret-file", "{secret}"),
         r"'tester' may change only their own secret", stdin="a long new secret\n", audits=True),
    Case("auth-add-existing", ("approvers", "add", "alice", "--as", "root", "--secret-file", "{secret}"),
         r"approver 'alice' exists already", stdin="a long new secret\n", audits=True),
    Case("auth-reject-unknown-plan", ("plan", "reject", "999", "--as", "alice", "--secret-file", "{secret}"),
         r"no plan with id 999", audits=True),
    Case("auth-secret-file-directory", ("plan", "approve", "1", "--as", "alice", "--secret-file", "{tmp}"),
         r"--secret-file .*: not a regular file"),
    Case("auth-secret-file-device", ("plan", "approve", "1", "--as", "alice", "--secret-file", "/dev/zero"),
         r"--secret-file /dev/zero: not a regular file"),
    Case("auth-secret-file-long-line", ("plan", "approve", "1", "--as", "alice", "--secret-file", "{tmp}/long"),
         r"--secret-file .*long: the first line is longer than 4096 bytes", files={"long": b"x" * 10000}),
    Case("calibrate-queries-on-unknown-table", ("calibrate", "--queries-on", "nosuch"), r"no table named 'nosuch'"),
    Case("plan-list-unknown-table", ("plan", "list", "--table", "nosuch"), r"no table named 'nosuch'"),
    Case("gc-bad-duration", ("table", "gc", "lineitem", "--older-than", "5x"), r"--older-than: invalid duration"),
    Case("auth-secret-file-not-utf8", ("plan", "approve", "1", "--as", "alice", "--secret-file", "{tmp}/bin"),
         r"--secret-file .*bin: not UTF-8 text", files={"bin": b"\xff\xfe\xfd\n"}),
    Case("auth-remove-without-as", ("approvers", "remove", "alice"), r"required: --as"),
    Case("auth-add-without-name", ("approvers", "add"), r"required: name"),
    Case("auth-reason-without-value", ("plan", "approve", "1", "--as", "alice", "--reason"), r"--reason: expected one argument"),
    Case("auth-root-runs-unapproved", ("plan", "run", "1", "--as", "root", "--secret-file", "{secret}"),
         r"plan 1 is not approved", audits=True),
    Case("import-append-and-replace", ("workload", "import", "lineitem", "{tmp}/x.sql", "--append", "--replace"),
         r"not allowed with argument"),
    Case("gc-negative-duration", ("table", "gc", "lineitem", "--older-than", "-1d"), r"expected one argument|invalid duration"),
    Case("workload-file-garbage", ("workload", "show", "lineitem"), r"lineitem\.jsonl.*corrupt workload file",
         damage="workload-garbage"),
    Case("control-db-truncated", ("plan", "list"), r"control store .*control\.db cannot be used", damage="control-truncated"),
    Case("auth-bad-name", ("approvers", "add", "a\tb", "--admin"), r"approver name 'a\\tb' must be",
         stdin="a long new secret\n"),
    # -- a named proposer signs in; a file deleted under the table; a copied workspace
    Case("create-as-without-secret", (*CREATE, "--as", "alice"), r"no secret for 'alice'"),
    Case("create-as-wrong-secret", (*CREATE, "--as", "alice", "--secret-file", "{tmp}/wrong"),
         r"wrong name or secret for 'alice'", files={"wrong": b"not the secret\n"}, audits=True),
    Case("create-as-unknown-name", (*CREATE, "--as", "mallory", "--secret-file", "{secret}"),
         r"wrong name or secret for 'mallory'", audits=True),
    Case("rollback-to-deleted-file", ("table", "rollback", "lineitem", "--to", "1", "--as", "root",
                                      "--secret-file", "{secret}"),
         r"snapshot 1 of 'lineitem' cannot be restored: 1 of its files were removed",
         damage="data-file-deleted", audits=True),
    Case("home-not-a-workspace", ("--home", "{tmp}", "plan", "list"),
         r"scratch is not a Layout Advisor workspace"),
    Case("copied-workspace-show", ("--home", "{tmp}/copy", "table", "show", "lineitem"),
         r"belongs to the workspace at .*copied or moved", damage="workspace-copied"),
    Case("copied-workspace-gc", ("--home", "{tmp}/copy", "table", "gc", "lineitem", "--older-than",
                                 "0s", "--force-retention", "--yes", "--as", "root",
                                 "--secret-file", "{secret}"),
         r"belongs to the workspace at", damage="workspace-copied"),
)

#: damages a case may ask for (applied by the test, see tests/e2e/test_bad_inputs.py)
DAMAGES = ("control-garbage", "control-directory", "control-missing-after-recluster",
           "pointer-garbage", "pointer-dangling", "header-garbage", "manifest-truncated",
           "table-json-garbage", "workload-garbage", "control-truncated", "data-file-deleted",
           "workspace-copied")
