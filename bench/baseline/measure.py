"""What the baseline scripts measure of themselves."""

import resource


def peak_rss_bytes():
    """This process's peak resident set (VmHWM). Not getrusage's ru_maxrss:
    Linux carries that over exec, so a process the bench's Go server forked
    reported the server's peak as its own."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
