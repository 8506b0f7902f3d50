"""One module per check; each has ID, TITLE, METHOD and run(ctx) -> CheckResult."""
