"""Section 2 of the benchmarks (the backend): handler latency, DynamoDB requests per call, cold
start and load. Run ``python -m bench.backend_perf``; these modules are its parts."""
