"""Tables, plots, the expected-number check and the cross-paper REPORT.md."""
