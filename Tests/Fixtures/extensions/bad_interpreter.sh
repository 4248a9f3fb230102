#!/nonexistent/interpreter/for/reindex/tests
# Its interpreter does not exist, so exec fails: the host cannot start it.
exit 0
