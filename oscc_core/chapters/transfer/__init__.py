"""Chapter 06 (transfer): an operating point frozen on Leduc, applied unchanged to Kuhn."""
