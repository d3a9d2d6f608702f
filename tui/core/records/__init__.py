"""What is kept and written: the transcript, reports, the history store and its views, verdicts,
exports, the fix journal and the fix history."""
