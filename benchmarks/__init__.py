"""Speed and memory measurements of the engine, run by hand (never timed tests)."""
