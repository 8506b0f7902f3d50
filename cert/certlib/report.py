"""Check results, the human summary and the JSON evidence report."""
import json

SCHEMA = "tori-cert-report/1"


class CheckResult:
    def __init__(self, check_id, title, method):
        self.id = check_id
        self.title = title
        self.method = method
        self.verdict = "pass"
        self.summary = ""
        self.figures = {}
        self.findings = []
        self.notes = []

    def fail(self, finding):
        self.findings.append(finding)
        self.verdict = "fail"

    def error(self, message):
        """The check could not run: not a pass."""
        self.verdict = "error"
        self.notes.append(message)
        if not self.summary:
            self.summary = message.splitlines()[0]

    def as_dict(self):
        return {"id": self.id, "title": self.title, "method": self.method,
                "verdict": self.verdict, "summary": self.summary, "figures": self.figures,
                "findings": [f.as_dict() for f in self.findings], "notes": self.notes}


def print_result(result, out):
    mark = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skipped": "SKIP"}[result.verdict]
    print(f"{mark:5} {result.id:14} {result.summary}", file=out)
    for f in result.findings:
        where = f" ({f.location})" if f.location else ""
        print(f"      - {f.offender}: {f.message}{where}", file=out)
    if result.verdict == "error":
        for note in result.notes:
            for line in note.splitlines():
                print(f"      ! {line}", file=out)


def write_json(path, report):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2, sort_keys=False)
        f.write("\n")
