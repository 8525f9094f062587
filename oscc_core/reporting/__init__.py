"""Book plumbing: paper claims, notebook parameters, results files, comparison tables and the runner."""
