"""One TCP stream, like iperf without iperf: `recv ADDR PORT` listens and prints the goodput
it received (Mbit/s, from its first byte to the end); `send ADDR PORT SECONDS` connects and
sends for that long. Used by `cluster.sh bw` to measure an emulated node's shaped link.
"""
import socket
import sys
import time

mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "recv":
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(1)
    srv.settimeout(30)
    conn, _ = srv.accept()
    received, first = 0, None
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        if first is None:
            first = time.monotonic()
        received += len(chunk)
    took = time.monotonic() - first
    print(f"{received * 8 / took / 1e6:.1f} Mbit/s ({received / 1e6:.0f} MB in {took:.2f} s)")
else:
    for _ in range(50):  # the receiver may not listen yet
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit(f"tcp_stream: cannot connect to {addr}:{port}")
    block, end = b"\0" * (1 << 20), time.monotonic() + float(sys.argv[4])
    while time.monotonic() < end:
        conn.sendall(block)
    conn.close()
