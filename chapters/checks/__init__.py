"""Checks for the chapters' exercises: check_k(your_function)."""
