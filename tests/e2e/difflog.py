"""The end of a differential tool's run: its summary, its first differences, its report."""
import json


def finish(summary, diffs, show, report, head):
    """Prints `summary` and the first `show` differences (each headed by `head(d)`), writes
    the report file if asked, and returns the exit status: 1 on any difference."""
    print(json.dumps(summary))
    for d in diffs[:show]:
        print(f"--- {head(d)}\n    postgres: {json.dumps(d['postgres'])[:700]}\n"
              f"    rocklake: {json.dumps(d['rocklake'])[:700]}")
    if report:
        with open(report, "w") as f:
            json.dump({"summary": summary, "differences": diffs}, f, indent=1)
    print("RESULT", json.dumps(summary))
    return 1 if diffs else 0
