"""What a process tells its operator: log lines, their question context, and traces (metrics live in kbcore.metrics)."""
