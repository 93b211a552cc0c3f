"""Reference answers to the chapters' exercises (run by tests/test_chapters.py)."""
