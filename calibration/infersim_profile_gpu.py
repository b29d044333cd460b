#!/usr/bin/env python3
"""Measures the step times of infersim's model profiles on the local GPU and writes the CSV `infersim calibrate` reads.

Each model is built from its configs/models/*.yaml shape with random weights (nothing is downloaded) and run as a
serving engine runs it: one forward pass over all tokens of a step through every layer (embedding, RMSNorm, QKV,
rotary, attention, output projection, SwiGLU MLP, residuals), then the LM head and a greedy sample for the sequences
that sample. Every step is captured as a CUDA graph and timed by replaying it (median of several replays), as vLLM runs
decode. With --kernels fused (the default where Triton runs) the layer runs the kernels vLLM V1 runs
(infersim_fused_layer.py): fused residual add and RMSNorm, rotary in place, the KV-cache write to a paged cache (block
size 16), SiLU-and-multiply in one pass, and decode attention over the paged cache with flash-decoding splits; prefill
attention is PyTorch's scaled_dot_product_attention (FlashAttention on Hopper). --kernels unfused keeps the earlier
path: PyTorch's own element-wise kernels and decode attention over a contiguous cache as two batched GEMMs and a softmax.

Models whose weights do not fit the GPU run their real layer count over a pool of distinct layers, each far larger
than the L2 cache, so every layer still streams its weights from HBM.

Also measured: the copy bandwidth and BF16/FP8 GEMM throughput of the GPU (written to the header), FP8-weight steps
(torch._scaled_mm) where the GPU has FP8 tensor cores, and, with --allreduce, an NCCL all-reduce of each model's
activations over every visible GPU.

Usage (on the GPU box, from the repository root):
    python3 calibration/infersim_profile_gpu.py --output h100.csv
    python3 calibration/infersim_profile_gpu.py --allreduce --output h100-allreduce.csv
    python3 calibration/infersim_profile_gpu.py --device cpu --dry-run --output /tmp/x.csv   # logic check, tiny shapes
"""
import argparse
import datetime
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

try:  # the fused Triton MoE layer beside this script; without Triton the kit falls back to torch._grouped_mm
    import infersim_fused_moe
except ImportError:
    infersim_fused_moe = None
try:  # the fused dense-layer kernels and paged decode attention beside this script
    import infersim_fused_layer
except ImportError:
    infersim_fused_layer = None

PREFILL_FULL = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
DECODE_BATCHES_FULL = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
CONTEXTS_FULL = [512, 2048, 8192, 32768]
PREFILL_HELDOUT = [128, 512, 2048, 8192]
DECODE_BATCHES_HELDOUT = [1, 8, 32, 128, 512]
CONTEXTS_HELDOUT = [512, 4096, 32768]
MIXED_BUDGET = 2048          # vLLM V1's default max_num_batched_tokens for online serving
MIXED_DECODES = [16, 64, 256]
MIXED_CONTEXTS = [2048, 8192]
FP8_PREFILL = [128, 512, 2048, 8192]
FP8_DECODE = [(1, 2048), (16, 2048), (64, 2048), (256, 2048)]
MOE_PREFILL = [128, 256, 512, 1024, 2048, 4096, 8192]
MOE_DECODE_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
# --grid serving: the range of a vLLM server at --max-num-seqs 128, --max-num-batched-tokens 2048, --max-model-len 4096
SERVING_PREFILL = [128, 256, 512, 1024, 2048]
SERVING_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128]
SERVING_CONTEXTS = [512, 1024, 2048, 4096]
SERVING_MIXED = [(16, 1024, MIXED_BUDGET), (64, 1024, MIXED_BUDGET)]
FIT_MODELS = ["llama-3.1-8b", "qwen2.5-1.5b"]
HELDOUT_MODELS = ["mistral-7b", "qwen2.5-7b", "llama-3.1-70b", "mixtral-8x7b"]
LAYER_POOL = 8
COLUMNS = "model,dtype,tp,phase,batch,context_tokens,new_tokens,measured_ms"


def read_model(path):
    """The flat `key: value` model YAML, without a YAML library."""
    m = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if ":" in line:
                k, v = (s.strip() for s in line.split(":", 1))
                m[k] = v
    ints = ["num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
            "intermediate_size", "vocab_size", "num_experts", "num_experts_per_tok"]
    shape = {k: int(m.get(k, 0) or 0) for k in ints}
    shape["name"] = m["name"]
    if not shape["head_dim"]:
        shape["head_dim"] = shape["hidden_size"] // shape["num_attention_heads"]
    return shape


class Model:
    """Random weights of one model's shapes, as one GPU of a tensor-parallel group holds them (tp=1: the whole model);
    forward() runs one engine step over a static batch layout."""

    def __init__(self, shape, device, fp8, memory_fraction, kv_cap, tp=1, shard=False, moe_kernel="grouped",
                 kernels="unfused", max_positions=65536):
        self.s = shape
        self.device = device
        self.fp8 = fp8
        self.kernels = kernels
        self.want_logits = False  # the layer check compares logits; timed steps end in a greedy sample
        self.tp = tp
        self.collectives = tp > 1 and not shard  # a shard alone holds one GPU's part and runs no all-reduce
        h = shape["hidden_size"]
        self.h, self.d = h, shape["head_dim"]
        self.nh = shape["num_attention_heads"] // tp
        self.nkv = max(1, shape["num_key_value_heads"] // tp)
        self.inter = shape["intermediate_size"] // tp
        self.experts, self.topk = shape["num_experts"], shape["num_experts_per_tok"]
        self.vocab = shape["vocab_size"] // tp
        self.layers = shape["num_hidden_layers"]
        nh, nkv, d, inter = self.nh, self.nkv, self.d, self.inter
        bf = torch.bfloat16
        mlp_params = 3 * h * inter * max(1, self.experts)
        layer_bytes = (h * (nh + 2 * nkv) * d + nh * d * h + mlp_params) * (1 if fp8 else 2)
        head_bytes = 2 * self.vocab * h * 2
        free = free_memory(device) * memory_fraction
        fits = self.layers * layer_bytes + head_bytes < 0.7 * free
        self.distinct = self.layers if fits else min(self.layers, LAYER_POOL)
        self.embed = torch.randn(self.vocab, h, device=device, dtype=bf) * 0.02
        self.lm_head = torch.randn(self.vocab, h, device=device, dtype=bf) * 0.02
        self.final_norm = torch.ones(h, device=device, dtype=bf)
        self.w = [self._layer() for _ in range(self.distinct)]
        self.fused = None
        if self.experts and moe_kernel == "fused":
            self.fused = infersim_fused_moe.FusedMoE(self.experts, self.topk, h, inter, device)
        rot = torch.arange(d // 2, device=device, dtype=torch.float32)
        self.inv_freq = 1.0 / (500000.0 ** (rot * 2 / d))
        used = self.distinct * layer_bytes + head_bytes
        kv_per_token = 2 * nkv * d * 2  # K and V, bf16, per layer
        self.kv_tokens = int(max(0, free - used) * 0.85 / (self.distinct * kv_per_token))
        self.kv_tokens = min(self.kv_tokens, kv_cap)
        if kernels == "fused":
            page = infersim_fused_layer.PAGE
            self.blocks = self.kv_tokens // page
            self.kv_tokens = self.blocks * page
            # vLLM's paged layout: K and V each [blocks, block_size, kv heads, head_dim]
            self.kv = [torch.empty(2, self.blocks, page, nkv, d, device=device, dtype=bf).normal_()
                       for _ in range(self.distinct)]
            self.cos_sin = infersim_fused_layer.rotary_cache(max_positions, d, device)
            self.decode = infersim_fused_layer.PagedDecode(nh, nkv, d, device)
        else:
            self.kv = [torch.empty(2, self.kv_tokens * nkv * d, device=device, dtype=bf).normal_()
                       for _ in range(self.distinct)]

    def fits(self, decode_batch, decode_context, prefill_tokens):
        """Whether the step's KV cache fits (paged: whole blocks per sequence)."""
        if self.kernels != "fused":
            return decode_batch * decode_context <= self.kv_tokens and prefill_tokens <= self.kv_tokens
        page = infersim_fused_layer.PAGE
        return decode_batch * -(-decode_context // page) + -(-prefill_tokens // page) <= self.blocks

    def _weight(self, n, k, experts=0):
        shape = (experts, n, k) if experts else (n, k)
        w = torch.randn(*shape, device=self.device, dtype=torch.bfloat16) * (1.0 / math.sqrt(k))
        if self.fp8 and not experts:
            return w.to(torch.float8_e4m3fn)  # [n, k] row-major: .t() is the column-major operand _scaled_mm wants
        return w

    def _layer(self):
        h, nh, nkv, d, inter = self.h, self.nh, self.nkv, self.d, self.inter
        w = {
            "in_norm": torch.ones(h, device=self.device, dtype=torch.bfloat16),
            "post_norm": torch.ones(h, device=self.device, dtype=torch.bfloat16),
            "qkv": self._weight((nh + 2 * nkv) * d, h),
            "o": self._weight(h, nh * d),
        }
        if self.experts:
            w["router"] = self._weight(self.experts, h)
            w["gate_up"] = self._weight(2 * inter, h, self.experts)
            w["down"] = self._weight(h, inter, self.experts)
        else:
            w["gate_up"] = self._weight(2 * inter, h)
            w["down"] = self._weight(h, inter)
        return w

    def linear(self, x, w):
        if self.fp8:
            one = torch.ones((), device=x.device, dtype=torch.float32)
            return torch._scaled_mm(x.to(torch.float8_e4m3fn), w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        return F.linear(x, w)

    def reduce(self, x):
        """The row-parallel layers' all-reduce over the tensor-parallel group."""
        if self.collectives:
            torch.distributed.all_reduce(x)
        return x

    def forward_fused(self, ids, positions, slots, table, lens, decode_batch, decode_context, prefill_tokens):
        """One step as vLLM V1 runs it (module doc of infersim_fused_layer): `decode_batch` sequences, each over
        `decode_context` keys in the paged cache (block table `table`, lengths `lens`), then one fresh prefill chunk of
        `prefill_tokens` tokens; every token's K and V are written to its cache slot (`slots`) first."""
        fl = infersim_fused_layer
        nh, nkv, d = self.nh, self.nkv, self.d
        b, chunk = decode_batch, prefill_tokens
        x = F.embedding(ids, self.embed)
        residual = x
        h = fl.rms_norm(x, self.w[0]["in_norm"])
        attn = torch.empty(ids.shape[0], nh * d, device=x.device, dtype=torch.bfloat16)
        for i in range(self.layers):
            w = self.w[i % self.distinct]
            cache = self.kv[i % self.distinct]
            if i:
                h = fl.rms_norm(x, w["in_norm"], residual=residual)
            qkv = self.linear(h, w["qkv"])
            fl.rotary_(qkv, positions, self.cos_sin, nh, nkv, d)
            fl.cache_write(qkv, slots, cache[0], cache[1], nh, nkv, d)
            if b:
                self.decode(qkv[:b, : nh * d].view(b, nh, d), cache[0], cache[1], table, lens, decode_context, attn[:b])
            if chunk:
                q = qkv[b:, : nh * d].view(chunk, nh, d).transpose(0, 1).unsqueeze(0)
                k = qkv[b:, nh * d: (nh + nkv) * d].view(chunk, nkv, d).transpose(0, 1).unsqueeze(0)
                v = qkv[b:, (nh + nkv) * d:].view(chunk, nkv, d).transpose(0, 1).unsqueeze(0)
                attn[b:].view(chunk, nh, d).copy_(causal_attention(q, k, v)[0].transpose(0, 1))
            x = self.reduce(self.linear(attn, w["o"]))
            h = fl.rms_norm(x, w["post_norm"], residual=residual)
            if self.fused is not None:
                x = self.fused.forward(h, w["router"], w["gate_up"], w["down"], seed=i)
            elif self.experts:
                x = self.moe(h, w)
            else:
                x = self.linear(fl.silu_and_mul(self.linear(h, w["gate_up"])), w["down"])
            x = self.reduce(x)
        h = fl.rms_norm(x, self.final_norm, residual=residual)
        sampled = h[:b] if chunk == 0 else torch.cat([h[:b], h[-1:]])
        logits = F.linear(sampled, self.lm_head)
        return logits if self.want_logits else torch.argmax(logits, dim=-1)

    def forward(self, ids, positions, decode_batch, decode_context, prefill_tokens):
        """One step with PyTorch's own kernels (--kernels unfused): `decode_batch` sequences each attending to
        `decode_context` cached keys in a contiguous cache, then one fresh prefill chunk of `prefill_tokens` tokens
        (causal). ids holds decode tokens first, then the chunk."""
        x = F.embedding(ids, self.embed)
        cos, sin = rotary(positions, self.inv_freq)
        for i in range(self.layers):
            w = self.w[i % self.distinct]
            kv = self.kv[i % self.distinct]
            x = x + self.reduce(self.attention(rms_norm(x, w["in_norm"]), w, kv, cos, sin, decode_batch, decode_context,
                                               prefill_tokens))
            x = x + self.reduce(self.mlp(rms_norm(x, w["post_norm"]), w, i))
        sampled = x[:decode_batch] if prefill_tokens == 0 else torch.cat([x[:decode_batch], x[-1:]])
        logits = F.linear(rms_norm(sampled, self.final_norm), self.lm_head)
        return logits if self.want_logits else torch.argmax(logits, dim=-1)

    def mlp(self, x, w, layer):
        if self.fused is not None:
            return self.fused.forward(x, w["router"], w["gate_up"], w["down"], seed=layer)
        if self.experts:
            return self.moe(x, w)
        g, u = self.linear(x, w["gate_up"]).chunk(2, dim=-1)
        return self.linear(F.silu(g) * u, w["down"])

    def moe(self, x, w):
        """Top-k routing, then one grouped GEMM per projection over the tokens sorted by expert."""
        t = x.shape[0]
        # Random weights route every token alike after a few layers; trained routers spread tokens over the experts.
        # Uniform noise far above the logits spreads them at random, which is what the cost model assumes.
        logits = F.linear(x, w["router"]).float()
        probs, idx = torch.topk(torch.softmax(logits + 1e3 * torch.rand_like(logits), dim=-1), self.topk)
        flat = idx.reshape(-1)
        order = torch.argsort(flat)
        counts = torch.zeros(self.experts, device=x.device, dtype=torch.long).scatter_add_(0, flat, torch.ones_like(flat))
        offs = torch.cumsum(counts, 0).to(torch.int32)
        token = order // self.topk
        xs = x[token]
        g, u = grouped_mm(xs, w["gate_up"], offs).chunk(2, dim=-1)
        ys = grouped_mm(F.silu(g) * u, w["down"], offs) * probs.reshape(-1)[order].unsqueeze(-1).to(x.dtype)
        return torch.zeros_like(x).index_add_(0, token, ys)

    def attention(self, x, w, kv, cos, sin, b, ctx, chunk):
        nh, nkv, d = self.nh, self.nkv, self.d
        t = x.shape[0]
        qkv = self.linear(x, w["qkv"])
        q, k, v = qkv.split([nh * d, nkv * d, nkv * d], dim=-1)
        q = apply_rotary(q.view(t, nh, d), cos, sin)
        k = apply_rotary(k.reshape(t, nkv, d), cos, sin)
        v = v.reshape(t, nkv, d)
        outs = []
        if b:
            # the cache of b sequences, each ctx keys long; the new token's K/V are written at its last slot
            kc = kv[0][: b * nkv * ctx * d].view(b, nkv, ctx, d)
            vc = kv[1][: b * nkv * ctx * d].view(b, nkv, ctx, d)
            kc[:, :, ctx - 1].copy_(k[:b])
            vc[:, :, ctx - 1].copy_(v[:b])
            qd = q[:b].view(b, nkv, nh // nkv, d)
            scores = torch.matmul(qd, kc.transpose(-1, -2)) * (1.0 / math.sqrt(d))
            p = torch.softmax(scores.float(), dim=-1).to(torch.bfloat16)
            outs.append(torch.matmul(p, vc).reshape(b, nh * d))
        if chunk:
            qp = q[b:].transpose(0, 1).unsqueeze(0)
            kp = k[b:].transpose(0, 1).unsqueeze(0)
            vp = v[b:].transpose(0, 1).unsqueeze(0)
            kv[0][: chunk * nkv * d].copy_(kp.reshape(-1))
            kv[1][: chunk * nkv * d].copy_(vp.reshape(-1))
            outs.append(causal_attention(qp, kp, vp).squeeze(0).transpose(0, 1).reshape(chunk, nh * d))
        o = outs[0] if len(outs) == 1 else torch.cat(outs)
        return self.linear(o, w["o"])


def grouped_mm(x, w, offs):
    """Rows of x grouped by expert (offs: cumulative row ends) times each expert's [n, k] weight."""
    if hasattr(torch, "_grouped_mm") and x.is_cuda:
        return torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
    out, start = [], 0
    for e, end in enumerate(offs.tolist()):  # reference path for a CPU logic check
        out.append(F.linear(x[start:end], w[e]))
        start = end
    return torch.cat(out)


def rms_norm(x, weight):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), weight, 1e-5)
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * weight


def rotary(positions, inv_freq):
    angles = positions.float().unsqueeze(-1) * inv_freq
    return angles.cos().to(torch.bfloat16).unsqueeze(1), angles.sin().to(torch.bfloat16).unsqueeze(1)


def apply_rotary(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


GQA_SDPA = None


def causal_attention(q, k, v):
    """FlashAttention through SDPA, with grouped-query heads natively where this PyTorch supports it."""
    global GQA_SDPA
    if not hasattr(F, "scaled_dot_product_attention"):
        rep = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        mask = torch.ones(s.shape[-2:], dtype=torch.bool, device=q.device).tril()
        return torch.matmul(torch.softmax(s.float().masked_fill(~mask, -1e30), -1).to(q.dtype), v)
    if GQA_SDPA is None:
        try:
            F.scaled_dot_product_attention(q[:, :, :16], k[:, :, :16], v[:, :, :16], is_causal=True, enable_gqa=True)
            GQA_SDPA = True
        except (TypeError, RuntimeError):
            GQA_SDPA = False
    if GQA_SDPA:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    rep = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), is_causal=True)


def free_memory(device):
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    return 2 * 1024 ** 3


class Timer:
    def __init__(self, device, fixed_reps=0):
        self.device = device
        self.fixed_reps = fixed_reps  # every rank of a tensor-parallel group must replay its graph equally often

    def time_ms(self, fn, min_reps=3, max_reps=20, target_s=0.25):
        """Median milliseconds of fn as a replayed CUDA graph (or plain calls on the CPU)."""
        if self.device.type != "cuda":
            fn()
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()  # warm-up outside the graph: cuBLAS handles, workspace, autotuned kernels
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        graph.replay()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        first = start.elapsed_time(end)
        reps = self.fixed_reps or max(min_reps, min(max_reps, int(target_s * 1e3 / max(first, 1e-3))))
        times = []
        for _ in range(reps):
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        del graph
        return statistics.median(times)


def check_layer(device, say=print):
    """One mixed step (decodes over a paged cache plus a prefill chunk) of a small model through the fused kernels
    against the same step through PyTorch's kernels over the same cache contents laid out contiguously; returns the
    relative error of the logits."""
    shape = dict(name="check", num_hidden_layers=3, hidden_size=512, num_attention_heads=8, num_key_value_heads=2,
                 head_dim=64, intermediate_size=1024, vocab_size=1000, num_experts=0, num_experts_per_tok=0)
    torch.manual_seed(1)
    model = Model(shape, device, False, 0.5, 8192, kernels="fused", max_positions=4096)
    model.want_logits = True
    for w in model.w:  # norms away from 1, so a weight applied in the wrong place shows
        w["in_norm"].uniform_(0.5, 1.5)
        w["post_norm"].uniform_(0.5, 1.5)
    b, ctx, chunk = 3, 333, 37
    nkv, d, page = model.nkv, model.d, infersim_fused_layer.PAGE
    per_seq = -(-ctx // page)
    blocks = torch.randperm(model.blocks, device=device)[: b * per_seq + -(-chunk // page)]
    table = blocks[: b * per_seq].view(b, per_seq).to(torch.int32)
    lens = torch.full((b,), ctx, device=device, dtype=torch.int32)
    seq_slots = (table.long()[:, :, None] * page + torch.arange(page, device=device)).view(b, -1)[:, :ctx]
    slots = torch.cat([seq_slots[:, -1], (blocks[b * per_seq:, None] * page + torch.arange(page, device=device))
                       .flatten()[:chunk]])
    ids = torch.randint(0, model.vocab, (b + chunk,), device=device)
    positions = torch.cat([torch.full((b,), ctx - 1, device=device, dtype=torch.long), torch.arange(chunk, device=device)])
    contiguous = []
    for cache in model.kv:  # [2, blocks, page, nkv, d] -> the unfused path's [2, b x nkv x ctx x d]
        flat = torch.empty(2, b * nkv * ctx * d + chunk * nkv * d, device=device, dtype=torch.bfloat16)
        for i in range(2):
            flat[i][: b * nkv * ctx * d].copy_(cache[i].view(-1, nkv, d)[seq_slots].permute(0, 2, 1, 3).reshape(-1))
        contiguous.append(flat)
    with torch.no_grad():
        fused = model.forward_fused(ids, positions, slots, table, lens, b, ctx, chunk).float()
        model.kv, model.kernels = contiguous, "unfused"
        ref = model.forward(ids, positions, b, ctx, chunk).float()
    err = (torch.linalg.norm(fused - ref) / torch.linalg.norm(ref)).item()

    say("  layer check: mixed step (%d decodes over %d keys, %d-token chunk), fused against unfused kernels, logits "
        "relative error %.2e" % (b, ctx, chunk, err), flush=True)
    return err if math.isfinite(err) else float("inf")


def step(model, timer, decode_batch, decode_context, prefill_tokens):
    t = decode_batch + prefill_tokens
    dev = model.device
    ids = torch.randint(0, model.vocab, (t,), device=dev)
    positions = torch.cat([torch.full((decode_batch,), decode_context - 1, device=dev, dtype=torch.long),
                           torch.arange(prefill_tokens, device=dev)])
    if model.kernels != "fused":
        with torch.no_grad():
            return timer.time_ms(lambda: model.forward(ids, positions, decode_batch, decode_context, prefill_tokens))
    # blocks handed out at random, as a cache that has served a while has them: each decode sequence's whole context,
    # then the chunk's; the new tokens' slots are each sequence's last position and the chunk's positions
    page = infersim_fused_layer.PAGE
    per_seq = -(-decode_context // page) if decode_batch else 0
    blocks = torch.randperm(model.blocks, device=dev)[: decode_batch * per_seq + -(-prefill_tokens // page)]
    table = blocks[: decode_batch * per_seq].view(decode_batch, per_seq).to(torch.int32)
    lens = torch.full((decode_batch,), decode_context, device=dev, dtype=torch.int32)
    decode_slots = table[:, (decode_context - 1) // page].long() * page + (decode_context - 1) % page if decode_batch \
        else torch.empty(0, device=dev, dtype=torch.long)
    chunk_slots = (blocks[decode_batch * per_seq:, None] * page + torch.arange(page, device=dev)).flatten()
    slots = torch.cat([decode_slots, chunk_slots[:prefill_tokens]])
    with torch.no_grad():
        return timer.time_ms(lambda: model.forward_fused(ids, positions, slots, table, lens, decode_batch,
                                                         decode_context, prefill_tokens))


def ceilings(device, dry_run):
    """Measured copy bandwidth (bytes read + written) and dense GEMM throughput, as the GPU's practical roofs."""
    if device.type != "cuda":
        return {}
    n = 1 << 30 if not dry_run else 1 << 20
    a = torch.empty(n, device=device, dtype=torch.bfloat16).normal_()
    b = torch.empty_like(a)
    timer = Timer(device)
    copy_ms = timer.time_ms(lambda: b.copy_(a), min_reps=10)
    out = {"copy_tb_s": 2 * a.numel() * 2 / copy_ms / 1e9}
    del a, b
    m = 8192
    x = torch.randn(m, m, device=device, dtype=torch.bfloat16)
    y = torch.randn(m, m, device=device, dtype=torch.bfloat16)
    out["bf16_gemm_tflops"] = 2 * m ** 3 / timer.time_ms(lambda: x @ y, min_reps=10) / 1e9
    if fp8_supported(device):
        x8, y8 = x.to(torch.float8_e4m3fn), y.to(torch.float8_e4m3fn)
        one = torch.ones((), device=device, dtype=torch.float32)
        out["fp8_gemm_tflops"] = 2 * m ** 3 / timer.time_ms(
            lambda: torch._scaled_mm(x8, y8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), min_reps=10) / 1e9
    return out


def fp8_supported(device):
    return device.type == "cuda" and hasattr(torch, "_scaled_mm") and torch.cuda.get_device_capability(device) >= (8, 9)


def environment(device):
    env = {"torch": torch.__version__, "python": platform.python_version(), "host": platform.node()}
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        env["gpu"] = p.name
        env["gpu_memory_gib"] = "%.1f" % (p.total_memory / 1024 ** 3)
        env["multiprocessors"] = p.multi_processor_count
        env["cuda"] = torch.version.cuda
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=30).stdout.split()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            env["driver"] = "unknown"
    else:
        env["gpu"] = "cpu"
    return env


def grid(name, dry_run, tp=1, moe=False, serving=False):
    if dry_run:
        return [32, 64], [1, 4], [64, 128, 1100], [(4, 128, 64)]
    if serving:
        return SERVING_PREFILL, SERVING_BATCHES, SERVING_CONTEXTS, SERVING_MIXED
    mixed = [(b, c, MIXED_BUDGET) for c in MIXED_CONTEXTS for b in MIXED_DECODES]
    if moe:  # the experts a step touches grow with its tokens: a finer grid of token counts
        return MOE_PREFILL, MOE_DECODE_BATCHES, CONTEXTS_HELDOUT, mixed[:3]
    if tp > 1:
        return PREFILL_HELDOUT, [1, 8, 32, 128], [512, 4096], mixed[:2]
    if name in FIT_MODELS:
        return PREFILL_FULL, DECODE_BATCHES_FULL, CONTEXTS_FULL, mixed
    if name == "llama-3.1-70b":
        return [128, 512, 2048, 4096], [1, 8, 32, 128], [512, 4096], mixed[:2]
    return PREFILL_HELDOUT, DECODE_BATCHES_HELDOUT, CONTEXTS_HELDOUT, mixed[:3]


def dry_run_shape(shape):
    s = dict(shape)
    s.update(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
             intermediate_size=128, vocab_size=1000)
    return s


def profile_model(shape, device, timer, fp8, args, emit, deadline, tp=1):
    """tp > 1: one rank of a tensor-parallel group; otherwise one GPU, holding a 1/--shard part of every layer."""
    name = shape["name"]
    dtype = "fp8" if fp8 else "bf16"
    layout = tp if tp > 1 else args.shard
    model = Model(dry_run_shape(shape) if args.dry_run else shape, device, fp8, args.memory_fraction,
                  16384 if args.dry_run else 512 * 32768, layout, shard=tp == 1, moe_kernel=args.moe_kernel,
                  kernels=args.kernels)
    if tp > 1:
        room = torch.tensor([model.kv_tokens], device=device)
        torch.distributed.all_reduce(room, op=torch.distributed.ReduceOp.MIN)
        model.kv_tokens = int(room.item())
    say = print if tp == 1 or torch.distributed.get_rank() == 0 else (lambda *a, **k: None)
    say("%s %s: %d layers (%d distinct), KV room for %d tokens" % (name, dtype, model.layers, model.distinct,
                                                                     model.kv_tokens), flush=True)
    prefills, batches, contexts, mixed = grid(name, args.dry_run, tp, moe=model.experts > 0 and tp == 1,
                                              serving=args.grid == "serving")
    if fp8:
        prefills = FP8_PREFILL if not args.dry_run else prefills
        points = [(0, 0, n) for n in prefills] + [(b, c, 0) for b, c in (FP8_DECODE if not args.dry_run else [(2, 64)])]
    else:
        points = [(0, 0, n) for n in prefills]
        points += [(b, c, 0) for c in contexts for b in batches]
        points += [(b, c, budget - b) for b, c, budget in mixed]
    for b, c, chunk in points:
        if not model.fits(b, c, chunk):
            continue
        if time.monotonic() > deadline:
            say("  time budget spent, skipping the rest of %s" % name, flush=True)
            break
        try:
            ms = step(model, timer, b, c, chunk)
        except torch.cuda.OutOfMemoryError:
            if tp > 1:
                raise  # the other ranks would wait for this one forever
            torch.cuda.empty_cache()
            say("  out of memory at batch %d context %d chunk %d, skipped" % (b, c, chunk), flush=True)
            continue
        if tp > 1:
            slowest = torch.tensor([ms], device=device)
            torch.distributed.all_reduce(slowest, op=torch.distributed.ReduceOp.MAX)
            ms = slowest.item()
        phase = "prefill" if b == 0 else ("decode" if chunk == 0 else "mixed")
        row = (name, dtype, layout, phase, max(b, 1) if phase != "mixed" else b, c, b + chunk, ms)
        emit(row)
        say("  %-7s batch %4d context %6d tokens %6d  %9.3f ms" % row[3:], flush=True)
    del model
    if device.type == "cuda":
        torch.cuda.empty_cache()


def join_group(rank, world):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    torch.cuda.set_device(rank)
    torch.distributed.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    return torch.device("cuda", rank)


def tp_worker(rank, world, args, shapes, path):
    """Tensor-parallel steps: each rank holds 1/world of every layer and all-reduces after the row-parallel GEMMs."""
    device = join_group(rank, world)
    rows = []
    timer = Timer(device, fixed_reps=5)
    for shape in shapes:
        profile_model(shape, device, timer, False, args, rows.append, float("inf"), tp=world)
    if rank == 0:
        with open(path, "a") as f:
            for r in rows:
                f.write(format_row(r) + "\n")
    torch.distributed.destroy_process_group()


def replay_ms(fn, captured):
    """Median ms of fn over 5 timed runs after 3 warm-ups; captured: as one replayed CUDA graph, as a serving engine
    runs the all-reduces of a decode step."""
    run = fn
    if captured:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        run = graph.replay
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        torch.distributed.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def allreduce_worker(rank, world, args, shapes, path):
    device = join_group(rank, world)
    rows = []
    seen = set()
    for shape in shapes:
        if shape["hidden_size"] in seen:
            continue
        seen.add(shape["hidden_size"])
        for tokens in [1, 8, 32, 128, 512, 2048, 8192, 16384]:
            x = torch.randn(tokens, shape["hidden_size"], device=device, dtype=torch.bfloat16)
            reps = 50
            times = []
            for captured in (False, True):
                ms = replay_ms(lambda: [torch.distributed.all_reduce(x) for _ in range(reps)], captured) / reps
                times.append(ms)
            t = torch.tensor(times, device=device)
            torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
            eager, graphed = t.tolist()
            rows.append((shape["name"], "bf16", world, "allreduce", 1, 0, tokens, graphed))
            if rank == 0:
                print("  allreduce x%d hidden %5d tokens %6d  graph %8.4f ms  eager %8.4f ms"
                      % (world, shape["hidden_size"], tokens, graphed, eager), flush=True)
    if rank == 0:
        with open(path, "a") as f:
            for r in rows:
                f.write(format_row(r) + "\n")
    torch.distributed.destroy_process_group()


def moe_bench(shape, device, shard):
    """One MoE layer alone, fused against grouped, as replayed CUDA graphs: ms and the weight bandwidth of the experts
    the tokens touch (E (1 - (1 - k/E)^T) of them)."""
    h, e, k = shape["hidden_size"], shape["num_experts"], shape["num_experts_per_tok"]
    inter = shape["intermediate_size"] // shard
    grouped = Model.__new__(Model)
    grouped.experts, grouped.topk = e, k
    fused = infersim_fused_moe.FusedMoE(e, k, h, inter, device)
    w = {"router": torch.randn(e, h, device=device, dtype=torch.bfloat16) * 0.02,
         "gate_up": torch.randn(e, 2 * inter, h, device=device, dtype=torch.bfloat16) / math.sqrt(h),
         "down": torch.randn(e, h, inter, device=device, dtype=torch.bfloat16) / math.sqrt(inter)}
    timer = Timer(device)
    print("moe layer %s (1/%d shard): tokens, fused ms, grouped ms, fused GB/s of touched experts" % (shape["name"], shard))
    for t in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 2048, 8192]:
        x = torch.randn(t, h, device=device, dtype=torch.bfloat16)
        with torch.no_grad():
            f_ms = timer.time_ms(lambda: fused.forward(x, w["router"], w["gate_up"], w["down"], seed=1))
            g_ms = timer.time_ms(lambda: grouped.moe(x, w))
        touched = e * (1 - (1 - k / e) ** t) * 3 * h * inter * 2
        print("  moe %6d  %8.4f  %8.4f  %7.0f" % (t, f_ms, g_ms, touched / f_ms / 1e6), flush=True)


def attention_bench(shape, device, shard, dry_run):
    """Decode attention of one layer alone, as replayed CUDA graphs: the paged flash-decoding kernel against the
    unfused bmm-softmax-bmm over a contiguous cache; ms and the KV bytes read per second."""
    fl = infersim_fused_layer
    nh, nkv = shape["num_attention_heads"] // shard, max(1, shape["num_key_value_heads"] // shard)
    d = shape["head_dim"]
    if dry_run:
        nh, nkv, d = 4, 2, 16
    timer = Timer(device)
    att = fl.PagedDecode(nh, nkv, d, device)
    bf = torch.bfloat16
    print("decode attention %s (1/%d shard, %d q / %d kv heads): batch, context, paged ms, bmm ms, paged TB/s, bmm TB/s"
          % (shape["name"], shard, nh, nkv), flush=True)
    shapes = [(2, 64), (4, 200)] if dry_run else [(1, 4096), (8, 1024), (16, 700), (32, 1024), (64, 1024), (128, 700),
                                                 (128, 2048), (16, 8192)]
    for b, ctx in shapes:
        pages = -(-ctx // fl.PAGE)
        kc = torch.randn(b * pages, fl.PAGE, nkv, d, device=device, dtype=bf)
        vc = torch.randn_like(kc)
        table = torch.randperm(b * pages, device=device).view(b, pages).to(torch.int32)
        lens = torch.full((b,), ctx, device=device, dtype=torch.int32)
        q = torch.randn(b, nh, d, device=device, dtype=bf)
        out = torch.empty(b, nh * d, device=device, dtype=bf)
        paged = timer.time_ms(lambda: att(q, kc, vc, table, lens, ctx, out))
        del kc, vc
        kd = torch.randn(b, nkv, ctx, d, device=device, dtype=bf)
        vd = torch.randn_like(kd)
        qd = q.view(b, nkv, nh // nkv, d)

        def bmm():
            p = torch.softmax((torch.matmul(qd, kd.transpose(-1, -2)) * (1.0 / math.sqrt(d))).float(), dim=-1)
            return torch.matmul(p.to(bf), vd)
        dense = timer.time_ms(bmm)
        del kd, vd
        kv_bytes = 2 * b * ctx * nkv * d * 2
        print("  attn %4d %6d  %8.4f  %8.4f  %5.2f  %5.2f  splits/tile %s" % (
            b, ctx, paged, dense, kv_bytes / paged / 1e9, kv_bytes / dense / 1e9, att.configs.get((b, ctx))), flush=True)


def format_row(r):
    return "%s,%s,%d,%s,%d,%d,%d,%.4f" % r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="configs/models", help="folder of model profile YAMLs (default configs/models)")
    ap.add_argument("--only", default="", help="comma-separated model names (default: the fit and held-out models)")
    ap.add_argument("--output", required=True, help="CSV to write")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu for a logic check")
    ap.add_argument("--dry-run", action="store_true", help="tiny shapes and grid: checks the script, measures nothing")
    ap.add_argument("--no-fp8", action="store_true", help="skip the FP8-weight steps")
    ap.add_argument("--allreduce", action="store_true", help="only time NCCL all-reduces over all visible GPUs")
    ap.add_argument("--tp", type=int, default=1, help="time tensor-parallel steps over this many GPUs (default 1)")
    ap.add_argument("--budget-s", type=float, default=420, help="stop starting new points after this many seconds")
    ap.add_argument("--memory-fraction", type=float, default=0.92, help="share of free GPU memory to use")
    ap.add_argument("--shard", type=int, default=1,
                    help="time on one GPU the 1/N of every layer that one GPU of a tensor-parallel group of N holds, "
                         "without the all-reduces (rows say tp N; the header says they are shards)")
    ap.add_argument("--moe-kernel", choices=["fused", "grouped"], default=None,
                    help="mixture of experts: fused (the Triton layer in infersim_fused_moe.py, the default where "
                         "Triton runs) or grouped (torch._grouped_mm with PyTorch routing)")
    ap.add_argument("--check-moe", action="store_true",
                    help="first compare the fused MoE layer with a float32 reference; exit 1 if it is wrong")
    ap.add_argument("--moe-bench", action="store_true",
                    help="first time one MoE layer of each MoE model alone, fused and grouped, and print the table")
    ap.add_argument("--kernels", choices=["fused", "unfused"], default=None,
                    help="dense layer kernels: fused (vLLM V1's: infersim_fused_layer.py, the default where Triton runs) "
                         "or unfused (PyTorch's element-wise kernels, decode attention as bmm-softmax-bmm)")
    ap.add_argument("--check-kernels", action="store_true",
                    help="first compare the fused layer kernels with float32 references; exit 1 if one is wrong")
    ap.add_argument("--attention-bench", action="store_true",
                    help="first time decode attention alone, paged kernel against bmm-softmax-bmm, for each model")
    ap.add_argument("--grid", choices=["default", "serving"], default="default",
                    help="serving: prefill to 2048 tokens, decode batch 1-128 x context 512-4096 for every model")
    args = ap.parse_args()
    if args.shard < 1 or args.shard & (args.shard - 1):
        sys.exit("--shard: must be a power of two, got %d" % args.shard)
    fused_ok = infersim_fused_moe is not None and args.device != "cpu"
    if args.moe_kernel == "fused" and not fused_ok:
        sys.exit("--moe-kernel fused: needs Triton and a CUDA device")
    args.moe_kernel = args.moe_kernel or ("fused" if fused_ok else "grouped")
    if (args.check_moe or args.moe_bench) and not fused_ok:
        sys.exit("--check-moe, --moe-bench: need Triton and a CUDA device")
    # the fused layer also runs on the CPU under Triton's interpreter (TRITON_INTERPRET=1), for a logic check
    layer_ok = infersim_fused_layer is not None and (args.device != "cpu" or os.environ.get("TRITON_INTERPRET") == "1")
    if args.kernels == "fused" and not layer_ok:
        sys.exit("--kernels fused: needs Triton and a CUDA device (or TRITON_INTERPRET=1 on the CPU)")
    args.kernels = args.kernels or ("fused" if layer_ok else "unfused")
    if (args.check_kernels or args.attention_bench) and not layer_ok:
        sys.exit("--check-kernels, --attention-bench: need Triton and a CUDA device (or TRITON_INTERPRET=1 on the CPU)")

    names = [n for n in args.only.split(",") if n] or FIT_MODELS + HELDOUT_MODELS
    shapes = []
    for n in names:
        path = os.path.join(args.models, n + ".yaml")
        if not os.path.isfile(path):
            sys.exit("--only: no model profile %s" % path)
        shapes.append(read_model(path))
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: no CUDA device visible (use --device cpu --dry-run to check the script)")
    started = time.monotonic()
    env = environment(device)
    header = ["# infersim GPU calibration, written by calibration/infersim_profile_gpu.py",
              "# date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")]
    header += ["# %s: %s" % (k, v) for k, v in env.items()]
    if any(s["num_experts"] for s in shapes):
        header.append("# moe kernel: %s" % ("fused Triton (route, align, gate/up with SiLU, down, sum: "
                                             "calibration/infersim_fused_moe.py)" if args.moe_kernel == "fused"
                                             else "torch._grouped_mm with PyTorch routing"))
    if args.shard > 1:
        header.append("# shard: 1 of %d (one GPU's part of every layer, no all-reduce)" % args.shard)
    header.append("# kernels: %s" % ("fused (vLLM V1's: fused add+RMSNorm, rotary in place, paged KV write, SiLU-and-mul, "
                                     "paged flash-decoding attention: calibration/infersim_fused_layer.py)"
                                     if args.kernels == "fused" else
                                     "unfused (PyTorch element-wise kernels, contiguous KV, decode bmm-softmax-bmm)"))
    if args.check_kernels:
        worst = infersim_fused_layer.check(device)
        layer = check_layer(device)
        print("fused kernels check: worst relative error %.2e; whole step %.2e" % (worst, layer), flush=True)
        # a step rounds bf16 through several layers of random weights (2-3e-2 between the two paths on the CPU); a
        # wrong head, position or slot gives errors near 1
        if not (worst < 2e-2 and layer < 0.1):
            sys.exit("fused kernels check failed: relative error %.2e (kernels), %.2e (step)" % (worst, layer))
    if args.attention_bench:
        for shape in shapes:
            attention_bench(shape, device, args.shard, args.dry_run)
    if args.check_moe:
        worst = infersim_fused_moe.check(device)
        print("fused moe check: worst relative error %.2e" % worst, flush=True)
        if not worst < 2e-2:
            sys.exit("fused moe check failed: relative error %.2e" % worst)
    if args.moe_bench:
        for shape in shapes:
            if shape["num_experts"]:
                moe_bench(shape, device, args.shard)

    if args.allreduce:
        world = torch.cuda.device_count()
        if world < 2:
            sys.exit("--allreduce: needs at least 2 GPUs, found %d" % world)
        header.append("# measured: NCCL all-reduce (sum, bf16) of tokens x hidden over %d GPUs, 50 in one replayed CUDA "
                      "graph, median of 5 (the log also prints eager launches)" % world)
        with open(args.output, "w") as f:
            f.write("\n".join(header) + "\n" + COLUMNS + "\n")
        torch.multiprocessing.spawn(allreduce_worker, args=(world, args, shapes, args.output), nprocs=world)
        return

    if args.tp > 1:
        if torch.cuda.device_count() < args.tp:
            sys.exit("--tp: needs %d GPUs, found %d" % (args.tp, torch.cuda.device_count()))
        header.append("# measured: tensor-parallel forward step over %d GPUs (NCCL all-reduce inside the CUDA graph), "
                      "slowest rank's median of 5 replays" % args.tp)
        with open(args.output, "w") as f:
            f.write("\n".join(header) + "\n" + COLUMNS + "\n")
        torch.multiprocessing.spawn(tp_worker, args=(args.tp, args, shapes, args.output), nprocs=args.tp)
        return

    roofs = ceilings(device, args.dry_run)
    header += ["# ceiling %s: %.1f" % (k, v) for k, v in roofs.items()]
    header.append("# measured: forward step (all layers, LM head, greedy sample) as a replayed CUDA graph, median ms; "
                  "prefill attention: SDPA causal (gqa native: see log), decode attention: %s"
                  % ("paged flash-decoding (Triton)" if args.kernels == "fused" else "bmm-softmax-bmm"))
    rows = []
    deadline = started + args.budget_s
    timer = Timer(device)
    runs = [(shape, False) for shape in shapes]
    if not args.no_fp8 and fp8_supported(device):
        runs += [(shape, True) for shape in shapes if shape["name"] in FIT_MODELS]
    for shape, fp8 in runs:
        try:
            profile_model(shape, device, timer, fp8, args, rows.append, deadline)
        except Exception:  # one model's failure must not lose the others' measurements
            traceback.print_exc()
            print("%s %s failed, continuing" % (shape["name"], "fp8" if fp8 else "bf16"), flush=True)
            if device.type == "cuda":
                torch.cuda.empty_cache()
        write(args.output, header + ["# sdpa grouped-query native: %s; wall time %.0f s"
                                     % (GQA_SDPA, time.monotonic() - started)], rows)
    print("wrote %d rows to %s" % (len(rows), args.output))


def write(path, header, rows):
    with open(path, "w") as f:
        f.write("\n".join(header) + "\n" + COLUMNS + "\n")
        for r in rows:
            f.write(format_row(r) + "\n")


if __name__ == "__main__":
    main()
