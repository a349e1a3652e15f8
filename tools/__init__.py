"""Repository tools run by the Makefile (notebook runner, report, book, environment); importable by the tests."""
