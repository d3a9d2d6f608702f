"""Exit codes of every headless command (CONTRACT.md)."""

OK = 0  # nothing critical
CRITICAL = 1  # at least one critical finding, or a failed fix / validation
UNREACHABLE = 2  # a host could not be reached or probed (others still reported)
USAGE = 3  # bad usage or bad inventory
BROKEN_PIPE = 141  # stdout closed by its reader (`… | head`), as for a program killed by SIGPIPE
