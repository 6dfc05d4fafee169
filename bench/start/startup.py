#!/usr/bin/python3
"""Time from starting `rewardd serve` to its first GET /readyz 200.

    bench/start/startup.py ROUNDS CONFIG BINARY [BINARY ...]

Each round starts each binary in turn (ABAB…) with CONFIG on loopback ports
and polls /readyz every 20 ms until it answers 200, then stops the server
(SIGTERM) and waits for it. It prints each start's time and the last line
/readyz gave (the languages being probed, if any), then per binary the
median, min and max. bench/README.md, "A server's start", has the figures.
"""
import os
import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, config):
    http_port, grpc_port = free_port(), free_port()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [binary, "serve", "--config", config, "--grpc-addr", f"127.0.0.1:{grpc_port}", "--http-addr", f"127.0.0.1:{http_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/readyz", timeout=2) as r:
                    if r.status == 200:
                        return time.monotonic() - t0, r.read().decode()
            except OSError:
                pass  # not listening yet, or 503
            if proc.poll() is not None:
                sys.exit(f"{binary} exited with {proc.returncode} before it was ready")
            time.sleep(0.02)
    finally:
        proc.terminate()
        proc.wait()


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, config, binaries = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    times = {b: [] for b in binaries}
    for r in range(rounds):
        for b in binaries:
            t, body = start(b, config)
            times[b].append(t)
            print(f"round {r + 1} {b}: {t:.2f} s  {body.strip().splitlines()[-1][:100]}", flush=True)
    for b in binaries:
        ts = sorted(times[b])
        print(f"{b}: median {ts[len(ts) // 2]:.2f} s, min {ts[0]:.2f}, max {ts[-1]:.2f}")


main()
