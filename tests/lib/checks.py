"""checks.py: the failed-check list every check script keeps. A check
records its failure and the script goes on, so one run reports every
broken property (acutest's check, not its assert); finish() gives ctest
the verdict as the exit code.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import sys


class Checks:
    """Collects failed checks. `check(cond, what)` prints "FAIL: what" and
    keeps it when cond is false, and returns cond (so a later step can
    depend on it); fail(what) keeps a failure the script found itself;
    `failures` lists them; finish() prints the verdict and exits (1 when
    any check failed, else 0)."""

    def __init__(self, name):
        self.name = name
        self.failures = []

    def __call__(self, cond, what):
        if not cond:
            self.failures.append(what)
            print(f"FAIL: {what}")
        return cond

    def fail(self, what):
        """Records a failure found by the script's own logic."""
        self(False, what)

    def finish(self):
        print(f"{len(self.failures)} failed" if self.failures
              else f"{self.name}: all checks passed")
        sys.exit(1 if self.failures else 0)
