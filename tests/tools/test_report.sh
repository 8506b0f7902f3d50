#!/bin/bash
# tools/plot/tori-report (issue 17): a host 2x2x2 crash run's report (and
# a simulator run's), rendered by headless Chromium: the page loads without a script error,
# shows the fault table (the rows of faults.jsonl), the timeline picture
# (loaded from a data: URI: nothing from the network), every node's
# counters from its closing `stats`, and the agreement checks; text from
# the records is escaped, never markup; bad input is one line, exit 2.
# usage: test_report.sh TORI_REPORT TORI_EMU TORI_SIM OUT
source "$(dirname "$0")/../shell_lib.sh"
REPORT=$1
EMU=$2
SIM=$3
OUT=$4
rm -rf "$OUT" && mkdir -p "$OUT"
CHROMIUM=$(command -v chromium) || fail "chromium is not installed (./tori test installs it: the report group)"
command -v gnuplot >/dev/null || fail "gnuplot is not installed (./tori test installs gnuplot-nox)"

"$EMU" --dims 2x2x2 --board host --inject 'kill 3 at 500ms; restart 3 at 1500ms' \
    --out "$OUT/run" > "$OUT/emu.out" 2>&1
check_status 0 $? "tori-emu crash run (see $OUT/emu.out)"
python3 "$REPORT" "$OUT/run" --command "tori-emu --inject 'kill 3 at 500ms' <2x2x2> & more" \
    > "$OUT/report.out" 2>&1
check_status 0 $? "tori-report"
check_contains "$OUT/report.out" "tori-report: $OUT/run/report.html (2 fault(s))"
# Self-contained: no address to fetch, the picture inline.
grep -Eq '(src|href)="(https?:|//|file:)' "$OUT/run/report.html" && fail "the report fetches from elsewhere"
check_contains "$OUT/run/report.html" 'src="data:image/svg+xml;base64,'

# render FILE DOM: the page as Chromium leaves it once loaded.
render() {
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$OUT/profile" --dump-dom "file://$1" > "$2" 2> "$2.err"
    check_status 0 $? "chromium --dump-dom $1 (see $2.err)"
}
render "$OUT/run/report.html" "$OUT/dom.html"
python3 - "$OUT/dom.html" "$OUT/run/faults.jsonl" <<'PY' || fail "the rendered report"
import json, re, sys
from html.parser import HTMLParser

class Page(HTMLParser):
    """Body attributes, and the cells of every row by table id and row class."""
    def __init__(self):
        super().__init__()
        self.body, self.rows, self.table, self.row, self.cell = {}, {}, None, None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "table":
            self.table = a.get("id")
        elif tag == "tr" and self.table and a.get("class"):
            self.row = []
            self.rows.setdefault((self.table, a["class"]), []).append(self.row)
        elif tag == "td" and self.row is not None:
            self.cell = ""
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr":
            self.row = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

page = Page()
page.feed(open(sys.argv[1]).read())
assert "data-script-error" not in page.body, page.body
assert page.body.get("data-report") == "ok", f"the page's script did not run: {page.body}"
assert page.body.get("data-images") == "1/1", f"the timeline did not load: {page.body}"
faults = [r for r in map(json.loads, open(sys.argv[2])) if r["record"] == "fault"]
rows = page.rows.get(("faults", "fault"), [])
assert [r[1] for r in rows] == [f["text"] for f in faults], (rows, faults)
assert [r[9] for r in rows] == ["pass", "pass"], rows
checks = page.rows.get(("agreement", "check"), [])
assert [c[1] for c in checks] == ["pass", "pass"], checks
nodes = page.rows.get(("counters", "node"), [])
assert [n[0] for n in nodes] == [str(i) for i in range(8)], nodes
# every node was up at the end: its sent, delivered and retransmitted counts
assert all(re.fullmatch(r"\d+", n[2]) and re.fullmatch(r"\d+", n[5]) for n in nodes), nodes
# the crash was noticed: some node suspected node 3, a true suspicion (a
# loaded machine may add false ones, never more than all)
suspicions, false = sum(int(n[6]) for n in nodes), sum(int(n[7]) for n in nodes)
assert suspicions - false >= 1 and false >= 0, nodes
PY
check_contains "$OUT/run/report.html" "tori-emu --inject &#x27;kill 3 at 500ms&#x27; &lt;2x2x2&gt; &amp; more"
check_contains "$OUT/dom.html" "tori-emu --inject 'kill 3 at 500ms' &lt;2x2x2&gt; &amp; more"

# Text from the records is text: a fault named like markup stays words.
cp -r "$OUT/run" "$OUT/hostile"
python3 - "$OUT/hostile/faults.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
lines[0]["text"] = "kill 3 <img src=x onerror=\"document.body.setAttribute('data-pwned',1)\"> & <b>"
open(sys.argv[1], "w").write("".join(json.dumps(l) + "\n" for l in lines))
PY
python3 "$REPORT" "$OUT/hostile" > /dev/null 2>&1
check_status 0 $? "tori-report on hostile text"
render "$OUT/hostile/report.html" "$OUT/hostile-dom.html"
grep -q '<body[^>]*data-pwned' "$OUT/hostile-dom.html" && fail "markup from the records ran"
grep -q '<img src="x"' "$OUT/hostile-dom.html" && fail "markup from the records became an element"
check_contains "$OUT/hostile-dom.html" "kill 3 &lt;img src=x"
check_contains "$OUT/hostile-dom.html" 'data-report="ok"'

# A simulator run's report (tori-sim --out): its faults, suspicions and
# the invariants' verdict, rendered the same way.
"$SIM" --dims 4x4x4 --inject 'kill 5 at 1ms; restart 5 at 5ms' --out "$OUT/sim" > "$OUT/sim.out" 2>&1
check_status 0 $? "tori-sim --out"
python3 "$REPORT" "$OUT/sim" > "$OUT/sim-report.out" 2>&1
check_status 0 $? "tori-report on a simulator run"
render "$OUT/sim/report.html" "$OUT/sim-dom.html"
python3 - "$OUT/sim-dom.html" <<'PY' || fail "the rendered simulator report"
import re, sys
dom = open(sys.argv[1]).read()
body = re.search(r'<body[^>]*>', dom).group(0)
assert 'data-report="ok"' in body and 'data-script-error' not in body, body
assert 'data-images="1/1"' in body, f"the timeline did not load: {body}"
rows = re.findall(r'<tr class="fault"><td>(\d+)</td><td>([^<]*)</td>', dom)
assert rows == [("1", "kill 5"), ("2", "restart 5")], rows
assert '<td>every step</td><td><span class="pass">pass</span>' in dom
assert len(re.findall(r'<tr class="node">', dom)) >= 1
PY

# A job under a recovering mode: its records are JSON to the last line
# (the recovery line too), and so is what --json prints.
"$SIM" --dims 2x2x2 --app allreduce --iterations 60 --comm-mode shrink \
    --inject 'kill 3 at iteration 20' --out "$OUT/sim-job" > "$OUT/sim-job.out" 2>&1
check_status 0 $? "tori-sim --app --comm-mode shrink --out"
"$SIM" --dims 2x2x2 --app allreduce --iterations 60 --comm-mode shrink \
    --inject 'kill 3 at iteration 20' --json > "$OUT/sim-job.json" 2>&1
for records in "$OUT/sim-job/sim.jsonl" "$OUT/sim-job.json"; do
    python3 -c '
import json, sys
events = [json.loads(line)["event"] for line in open(sys.argv[1])]
assert "recovery" in events and events[-1] == "app", events
' "$records" || fail "$records: not JSON lines to the end"
done
python3 "$REPORT" "$OUT/sim-job" > "$OUT/sim-job-report.out" 2>&1
check_status 0 $? "tori-report on a simulator job (see $OUT/sim-job-report.out)"

# Bad input: one line, exit 2, no report.
mkdir -p "$OUT/empty"
python3 "$REPORT" "$OUT/empty" > "$OUT/bad.out" 2> "$OUT/bad.err"
check_status 2 $? "tori-report on a directory without events"
[[ $(wc -l < "$OUT/bad.err") == 1 ]] || fail "not one line on stderr"
check_contains "$OUT/bad.err" "tori-report: '$OUT/empty' holds no events.jsonl nor sim.jsonl"
[[ ! -e "$OUT/empty/report.html" ]] || fail "a report written anyway"
echo "tools.report: all checks passed"
