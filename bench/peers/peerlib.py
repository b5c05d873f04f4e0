"""What the peer scripts share: how they say that an engine cannot do a job."""
import sys

REFUSED = 3  # the exit status of an engine that cannot do the job (the caller's table says why)


def refuse(why):
    """Exits with REFUSED, why on the last line of standard error."""
    print(why, file=sys.stderr)
    sys.exit(REFUSED)
