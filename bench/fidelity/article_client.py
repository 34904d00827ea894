"""A hand-written asyncio + httpx benchmark loop of the usual kind, as the fidelity baseline.

One httpx.AsyncClient shared by every task; `concurrency` tasks each send streamed chat requests
back to back until the duration is up; TTFT is the time from sending to the first `data:` line
seen by `aiter_lines()`, and every `data:` line counts as a token. The one change: the connection
pool is sized to the concurrency (httpx defaults to 100 connections, which would queue requests at
256 and 1024 streams and make the comparison unfair by construction).

Usage: python3 article_client.py URL CONCURRENCY DURATION_S  ->  prints JSON {ttft_ms: [...], tokens, requests}
"""
import asyncio
import json
import sys
import time

import httpx


async def one_request(client, url, ttfts, counters):
    body = {"model": "truth", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 64, "stream": True}
    start = time.perf_counter()
    first = None
    async with client.stream("POST", url, json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            if line.strip() == "data: [DONE]":
                break
            if first is None:
                first = time.perf_counter()
                ttfts.append((first - start) * 1000)
            counters["tokens"] += 1
    counters["requests"] += 1


async def worker(client, url, deadline, ttfts, counters):
    while time.perf_counter() < deadline:
        await one_request(client, url, ttfts, counters)


async def main():
    url, concurrency, duration = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    ttfts, counters = [], {"tokens": 0, "requests": 0}
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        deadline = time.perf_counter() + duration
        started = time.perf_counter()
        await asyncio.gather(*(worker(client, url, deadline, ttfts, counters) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    print(json.dumps({"ttft_ms": ttfts, "tokens": counters["tokens"], "requests": counters["requests"], "elapsed_s": elapsed}))


asyncio.run(main())
