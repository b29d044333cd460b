#!/usr/bin/env python3
"""Measures host-to-GPU copy bandwidth, the rate infersim's LoRA cost model loads a non-resident adapter at.

Copies buffers of adapter sizes (8 MB to 1 GB) from pinned and from pageable host memory to the GPU and prints the
median GB/s of several copies each, as CSV: memory,bytes,median_ms,gb_per_s. Needs PyTorch with CUDA.
"""
import argparse
import statistics
import sys

import torch


def copy_ms(src, dst, repeats):
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src, non_blocking=True)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("infersim_host_link: no CUDA device")
    print(f"# gpu: {torch.cuda.get_device_name(0)}")
    print("memory,bytes,median_ms,gb_per_s")
    for mb in (8, 32, 128, 512, 1024):
        n = mb * 1024 * 1024
        dst = torch.empty(n, dtype=torch.uint8, device="cuda")
        for memory in ("pinned", "pageable"):
            src = torch.ones(n, dtype=torch.uint8, pin_memory=(memory == "pinned"))
            copy_ms(src, dst, 2)  # warm up the path (and fault in pageable pages)
            ms = copy_ms(src, dst, args.repeats)
            print(f"{memory},{n},{ms:.4f},{n / ms / 1e6:.2f}")


if __name__ == "__main__":
    main()
