"""clawplane.runtimes.proxy.eras: one client request's path through the proxy, per protocol era.

A handshake-era session (``legacy``, its HTTP and SSE plumbing in ``sse``), a self-contained
2026-07-28 request (``modern``), and the bridging between the two: a modern-only server seen by
a handshake-era client (``bridging``) and client input for a handshake-era server asked by a
2026-07-28 client (``inputs``).
"""
